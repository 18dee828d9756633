import { describe, expect, it } from 'vitest';
import {
  applyTemplate,
  validateGeneration,
  type TemplateStyling,
} from '../../src/core/generation-request';
import { GenerationRequestSchema } from '../../src/shared/api';
import { TOOLS } from '../../src/core/tools';
import { RuleViolation } from '../../src/shared/generation-rules';

const valid = (body: unknown) => validateGeneration(GenerationRequestSchema.parse(body));
const message = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(RuleViolation);
    return (err as Error).message;
  }
  throw new Error('expected a RuleViolation');
};

describe('tool table', () => {
  it('has the 15 tools of the spec, virtual_model at 4 diamonds', () => {
    expect(TOOLS.size).toBe(15);
    expect(TOOLS.get('virtual_model')?.price).toBe(4);
    expect(
      [...TOOLS.values()]
        .filter((t) => t.saveable)
        .map((t) => t.id)
        .sort(),
    ).toEqual([
      'clothing_ecom_pack',
      'jewelry_ecom_pack',
      'jewelry_on_model',
      'outfit_photo',
      'pro_studio',
      'virtual_model',
    ]);
  });
});

describe('validateGeneration', () => {
  it('names an unknown tool', () => {
    expect(message(() => valid({ toolId: 'magic_wand' }))).toContain("'magic_wand'");
  });

  it('names the tool and the missing image field', () => {
    const text = message(() =>
      valid({ toolId: 'virtual_model', images: { fashion_model: 'fm_x' } }),
    );
    expect(text).toContain('virtual_model');
    expect(text).toContain('garment_photo');
  });

  it('accepts either jewelry_image or jewelry_images and requires jewelryType', () => {
    expect(
      message(() =>
        valid({ toolId: 'jewelry_on_model', images: { jewelry_image: 'http://x/a.png' } }),
      ),
    ).toContain('jewelryType');
    const ok = valid({
      toolId: 'jewelry_on_model',
      jewelryType: 'ring',
      images: { jewelry_images: ['http://x/a.png', 'http://x/b.png'] },
    });
    expect(ok.images.jewelry_images).toHaveLength(2);
  });

  it('requires customPrompt for photo_edit, motionPrompt for ai_videos, pose for pose_angle_switch, targetRatio for photo_reframe', () => {
    const img = { user_photo: 'http://x/a.png' };
    expect(message(() => valid({ toolId: 'photo_edit', images: img }))).toContain('customPrompt');
    expect(message(() => valid({ toolId: 'ai_videos', images: img }))).toContain('motionPrompt');
    expect(message(() => valid({ toolId: 'pose_angle_switch', images: img }))).toContain('pose');
    expect(message(() => valid({ toolId: 'photo_reframe', images: img }))).toContain('targetRatio');
    expect(
      message(() =>
        valid({
          toolId: 'pro_studio',
          images: { fashion_model: 'a', garment_photos: ['http://x'] },
          shotType: 'close_up',
        }),
      ),
    ).toContain('stylePreset');
  });

  it('refuses fields and image keys that do not apply to the tool', () => {
    expect(
      message(() =>
        valid({
          toolId: 'remove_background',
          images: { user_photo: 'http://x' },
          motionPrompt: 'zoom',
        }),
      ),
    ).toContain('motionPrompt');
    expect(
      message(() =>
        valid({ toolId: 'remove_background', images: { user_photo: 'http://x', venue: 'v' } }),
      ),
    ).toContain("'venue'");
    expect(
      message(() =>
        valid({
          toolId: 'virtual_model',
          images: { fashion_model: 'a', garment_photo: ['http://x'] },
        }),
      ),
    ).toContain('one URL');
  });

  it('limits virtual_model ratios to the five the spec lists', () => {
    const images = { fashion_model: 'a', garment_photo: 'http://x' };
    expect(message(() => valid({ toolId: 'virtual_model', images, ratio: '4:3' }))).toContain(
      '1:1',
    );
    expect(valid({ toolId: 'virtual_model', images, ratio: '9:16' }).request.ratio).toBe('9:16');
  });

  it('rejects unknown top-level fields, oversized arrays and bad ratios at the schema', () => {
    expect(GenerationRequestSchema.safeParse({ toolId: 'x', tool_id: 'y' }).success).toBe(false);
    expect(
      GenerationRequestSchema.safeParse({ images: { garment_photos: Array(11).fill('http://x') } })
        .success,
    ).toBe(false);
    expect(GenerationRequestSchema.safeParse({ targetRatio: '0:5' }).success).toBe(false);
    expect(GenerationRequestSchema.safeParse({ targetRatio: '25:36' }).success).toBe(true);
    expect(GenerationRequestSchema.safeParse({ templateSetId: '../etc/passwd' }).success).toBe(
      false,
    );
  });
});

describe('applyTemplate', () => {
  const template: TemplateStyling = {
    id: 'ts_1',
    toolId: 'virtual_model',
    images: { fashion_model: 'fm_a', venue: 'venue_b' },
    pose: 'pose_walk',
    shotType: null,
    stylePreset: null,
    ratio: '4:5',
  };

  it('fills only omitted fields; request fields win', () => {
    const merged = applyTemplate(
      GenerationRequestSchema.parse({
        images: { garment_photo: 'http://x', venue: 'venue_c' },
        ratio: '1:1',
      }),
      template,
    );
    expect(merged).toMatchObject({
      toolId: 'virtual_model',
      pose: 'pose_walk',
      ratio: '1:1',
      images: { garment_photo: 'http://x', venue: 'venue_c', fashion_model: 'fm_a' },
    });
    expect(validateGeneration(merged).tool.id).toBe('virtual_model');
  });

  it('refuses a toolId that differs from the template, naming both', () => {
    const text = message(() =>
      applyTemplate(GenerationRequestSchema.parse({ toolId: 'outfit_photo' }), template),
    );
    expect(text).toContain("'virtual_model'");
    expect(text).toContain("'outfit_photo'");
  });
});
