/**
 * model_to_flat_lay on the real people photos of ../shared/eval (issue 11 item 4), read in place:
 * a dress is taken whole (not cut at the waist as a top), every other photo keeps its top.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharp } from '../../src/infra/sharp';
import { garmentFromPerson } from '../../src/core/providers/local/garment-from-person';
import { garmentNamedIn, type NamedGarment } from '../../src/core/providers/local/garment-kind';
import { removeBackground } from '../../src/core/providers/local/remove-background';
import { EVAL_DIR } from './preview-tools-eval';

const peopleDir = path.join(EVAL_DIR, 'people');
const present = fs.existsSync(peopleDir);
if (!present) console.log('flat lays on real photos skipped: ../shared/eval/people is missing');

const cutouts = new Map<string, Promise<Buffer>>();
/** The person's cut-out, decoded as the provider does (upright, re-encoded). */
const cutoutOf = (file: string): Promise<Buffer> => {
  if (!cutouts.has(file))
    cutouts.set(
      file,
      sharp(path.join(peopleDir, file))
        .rotate()
        .toBuffer()
        .then((b) => removeBackground(b)),
    );
  return cutouts.get(file)!;
};

/** The garment's lowest row as a fraction of the figure (0 the top of the head, 1 its feet), and
 * its box's height over width. */
async function extent(file: string, want?: NamedGarment) {
  const cut = await cutoutOf(file);
  const figure = await sharp(cut).extractChannel(3).raw().toBuffer({ resolveWithObject: true });
  let top = Infinity;
  let bottom = -1;
  for (let i = 0; i < figure.data.length; i++)
    if (figure.data[i]! >= 128) {
      const y = Math.floor(i / figure.info.width);
      top = Math.min(top, y);
      bottom = Math.max(bottom, y);
    }
  const { data, info } = await sharp(await garmentFromPerson(cut, want))
    .raw()
    .toBuffer({ resolveWithObject: true });
  let [x0, x1, y0, y1] = [Infinity, -1, Infinity, -1];
  for (let i = 0; i < info.width * info.height; i++) {
    if (data[i * 4 + 3]! < 128) continue;
    const x = i % info.width;
    const y = Math.floor(i / info.width);
    [x0, x1, y0, y1] = [Math.min(x0, x), Math.max(x1, x), Math.min(y0, y), Math.max(y1, y)];
  }
  return { lowest: (y1 - top) / (bottom - top), ratio: (y1 - y0) / (x1 - x0) };
}

const dress = garmentNamedIn('the dress') as NamedGarment;

describe.skipIf(!present)('model_to_flat_lay takes a dress whole', () => {
  // Before: both were read as a top and cut at the waist (lowest row 0.51 and 0.56 of the figure,
  // height/width 1.56 and 2.04), and "the dress" was refused ("wears a top that ends at the waist").
  for (const file of ['052767_0.jpg', '053700_0.jpg'])
    it(`${file}: the dress down past the hips`, { timeout: 180_000 }, async () => {
      const chest = await extent(file);
      const named = await extent(file, dress);
      console.log(
        `${file}: lowest row ${chest.lowest.toFixed(2)} of the figure, height/width ${chest.ratio.toFixed(2)}`,
      );
      expect(chest.lowest).toBeGreaterThan(0.62);
      expect(chest.ratio).toBeGreaterThan(2);
      expect(named.lowest).toBeCloseTo(chest.lowest, 5);
    });

  it(
    'every other people photo keeps its top (a dress is refused)',
    { timeout: 900_000 },
    async () => {
      // Judged by looking at each photo. 052964_0 (a beige dress the colour of skin) is left out:
      // no garment is told apart from the person there.
      const dresses = new Set([
        '052472_0.jpg',
        '052767_0.jpg',
        '053228_0.jpg',
        '053514_0.jpg',
        '053700_0.jpg',
        'model_9.png',
      ]);
      const wrong: string[] = [];
      for (const file of fs.readdirSync(peopleDir).sort()) {
        if (file.startsWith('052964_0')) continue;
        const cut = await cutoutOf(file);
        const read = await garmentFromPerson(cut, dress).then(
          () => 'dress',
          (e: Error) => (/wears a top/.test(e.message) ? 'top' : e.message),
        );
        if (read !== (dresses.has(file) ? 'dress' : 'top')) wrong.push(`${file}: ${read}`);
      }
      expect(wrong).toEqual([]);
    },
  );
});
