/**
 * An Amazon export of a photo that is not a cut-out (a retouched photo, an on-model result, a
 * remote service's cut-out delivered on white), on the real garments of ../shared/eval: the
 * backdrop turns white and the product stays as it was. Measured in the photo's own frame, over
 * the pixels that were not white already (white on white cannot be told apart once exported): the
 * pixels left as they were against the reference mask (IoU).
 *
 * Before, the backdrop's colour was flooded in from the border: white and light garments went
 * with it (mean 0.867; 050105_1's white tee 0.196, the print alone then enlarged to fill the frame).
 */
import { describe, expect, it } from 'vitest';
import { sharp } from '../../src/infra/sharp';
import { cutOutOnWhite } from '../../src/studio/export/render';
import { garmentIds } from '../bench/quality';
import { evalPresent, garmentMask, garmentPhoto } from './preview-tools-eval';

const present = evalPresent();
if (!present) console.log('Amazon export of real photos skipped: ../shared/eval is missing');

/** A pixel with a channel under this is not white (JPEG ringing on white stays above it). */
const NOT_WHITE = 250;

describe.skipIf(!present)('Amazon export of a photo on its backdrop', () => {
  it(
    'turns the backdrop white and keeps every real garment, white and light ones included',
    { timeout: 900_000 },
    async () => {
      const ious: Record<string, number> = {};
      for (const id of garmentIds()) {
        const { data, info } = await sharp(await garmentPhoto(id))
          .toColourspace('srgb')
          .flatten({ background: '#ffffff' })
          .raw()
          .toBuffer({ resolveWithObject: true });
        const photo = Buffer.from(data);
        const notes: string[] = [];
        const onWhite = await cutOutOnWhite(
          await garmentPhoto(id),
          { data, width: info.width, height: info.height, channels: 3 },
          notes,
        );
        expect(notes, id).toEqual([]);
        const { mask } = await garmentMask(id);
        const low = (px: Uint8Array, i: number) =>
          Math.min(px[i * 3]!, px[i * 3 + 1]!, px[i * 3 + 2]!) < NOT_WHITE;
        let both = 0;
        let either = 0;
        for (let i = 0; i < mask.length; i++) {
          if (!low(photo, i)) continue;
          const kept = low(onWhite.data, i) ? 1 : 0;
          both += kept & mask[i]!;
          either += kept | mask[i]!;
        }
        ious[id] = Number((both / either).toFixed(3));
      }
      const values = Object.values(ious);
      const mean = values.reduce((a, b) => a + b, 0) / values.length;
      const worst = Object.entries(ious)
        .sort((a, b) => a[1] - b[1])
        .slice(0, 6);
      console.log(
        `kept vs reference mask: mean IoU ${mean.toFixed(4)}; worst ${JSON.stringify(worst)}`,
      );
      expect(values.length).toBeGreaterThanOrEqual(40);
      expect(mean).toBeGreaterThanOrEqual(0.97);
      expect(Math.min(...values)).toBeGreaterThanOrEqual(0.92);
    },
  );
});
