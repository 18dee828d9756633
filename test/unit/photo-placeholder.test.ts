import { describe, expect, it } from 'vitest';
import { fillPhoto, mentionsPhoto, PHOTO_PLACEHOLDER } from '../../src/shared/studio';

describe('the "{photo}" placeholder', () => {
  it('is replaced in single image fields and in list entries, other values kept in order', () => {
    const images = {
      garment_photos: ['https://a.test/1.jpg', PHOTO_PLACEHOLDER],
      fashion_model: 'fm_amara',
      user_photo: PHOTO_PLACEHOLDER,
    };
    expect(fillPhoto(images, 'https://up.test/p.jpg')).toEqual({
      garment_photos: ['https://a.test/1.jpg', 'https://up.test/p.jpg'],
      fashion_model: 'fm_amara',
      user_photo: 'https://up.test/p.jpg',
    });
    expect(images.user_photo).toBe(PHOTO_PLACEHOLDER); // the recipe itself is left as it was
  });

  it('gives no image fields for a request without any', () => {
    expect(fillPhoto(undefined, 'https://up.test/p.jpg')).toEqual({});
  });

  it('is found in a single field or a list, and not in look-alike values', () => {
    expect(mentionsPhoto({ user_photo: PHOTO_PLACEHOLDER })).toBe(true);
    expect(mentionsPhoto({ garment_photos: ['x', PHOTO_PLACEHOLDER] })).toBe(true);
    expect(mentionsPhoto({ user_photo: '{photo} ', venue: '{PHOTO}' })).toBe(false);
    expect(mentionsPhoto(undefined)).toBe(false);
  });
});
