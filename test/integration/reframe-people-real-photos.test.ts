/**
 * photo_reframe on the real people photos of ../shared/eval (issue 11 item 4), read in place.
 * Models are usually cut by the frame (legs at the bottom, the head at the top): canvas added
 * beyond such a side ended the figure in a straight line over blank backdrop (01008_00 to 9:16:
 * the legs stopped 170 px above the new frame's bottom). The output either crops or keeps the
 * cut side at the frame, and its added canvas carries no smeared band.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { reframePhoto } from '../../src/core/providers/local/reframe';
import { computeMatte, matteAt } from '../../src/core/providers/local/remove-background';
import { sharp } from '../../src/infra/sharp';
import { MAX_SMEAR_PX, smearBands } from '../../src/studio/export/edge-band';
import { EVAL_DIR } from './preview-tools-eval';
import { photoPlacement, rgbRaw } from './reframe-placement';

const PEOPLE = path.join(EVAL_DIR, 'people');
const present = fs.existsSync(PEOPLE);
if (!present) console.log('photo_reframe on real people photos skipped: ../shared/eval is missing');
const people = present ? fs.readdirSync(PEOPLE).sort() : [];

/** A seam may cut this share of its line: slivers (a fingertip, a backdrop seam in the matte). */
const SLIVER = 0.03;

/**
 * Subject pixels (the photo's own matte) on each edge line of the photo that has added canvas
 * beyond it: the figure cut by a seam inside the new frame. Zero for a crop.
 */
async function seamCuts(
  input: Buffer,
  output: Buffer,
): Promise<{ side: string; px: number; of: number }[]> {
  const photo = await rgbRaw(input);
  const out = await rgbRaw(output);
  const at = photoPlacement(photo, out);
  if (!at) return [];
  const { width: w, height: h } = photo;
  const alpha = await matteAt(await computeMatte(input), w, h);
  const count = (index: (j: number) => number, n: number) => {
    let c = 0;
    for (let j = 0; j < n; j++) if (alpha[index(j)]! >= 128) c++;
    return c;
  };
  const cuts: { side: string; px: number; of: number }[] = [];
  if (at.top > 0) cuts.push({ side: 'top', px: count((x) => x, w), of: w });
  if (out.height - h - at.top > 0)
    cuts.push({ side: 'bottom', px: count((x) => (h - 1) * w + x, w), of: w });
  if (at.left > 0) cuts.push({ side: 'left', px: count((y) => y * w, h), of: h });
  if (out.width - w - at.left > 0)
    cuts.push({ side: 'right', px: count((y) => y * w + w - 1, h), of: h });
  return cuts;
}

describe.skipIf(!present)('photo_reframe of people cut by the frame', () => {
  for (const ratio of ['9:16', '16:9'])
    it(
      `to ${ratio}: no figure ends at a seam inside the new frame, no smeared band`,
      { timeout: 300_000 },
      async () => {
        const failures: string[] = [];
        for (const file of people) {
          const input = await sharp(path.join(PEOPLE, file))
            .flatten({ background: '#ffffff' })
            .jpeg({ quality: 95 })
            .toBuffer();
          const output = await reframePhoto(input, ratio);
          const meta = await sharp(output).metadata();
          const [a, b] = ratio.split(':').map(Number);
          expect(Math.abs(meta.width! / meta.height! - a! / b!)).toBeLessThan(2 / meta.height!);
          const cuts = await seamCuts(input, output);
          const out = await rgbRaw(output);
          const bands = smearBands({ ...out, channels: 3 });
          const smear = Math.max(...Object.values(bands));
          console.log(
            `${file} to ${ratio}: ${meta.width}x${meta.height}, seam cuts ${JSON.stringify(cuts)}, smear ${smear} px`,
          );
          for (const cut of cuts)
            if (cut.px > SLIVER * cut.of)
              failures.push(`${file}: the figure is cut by the ${cut.side} seam over ${cut.px} px`);
          if (smear >= MAX_SMEAR_PX) failures.push(`${file}: smeared band of ${smear} px`);
        }
        expect(failures).toEqual([]);
      },
    );
});
