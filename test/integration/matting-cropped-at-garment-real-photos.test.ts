/**
 * remove_background on every eval garment cropped so the frame cuts 2% into the garment on the
 * side it comes nearest (a shop cropping at the edge: the garment touches the frame), scored as
 * `bench -- quality-perturbed` scores its variations (readPair, scorePair), against issue 11's
 * targets: mean IoU >= 0.97, every photo >= 0.92, mean halo <= 8/255.
 *
 * On a digital grey backdrop (246, one exact colour) the white fabric touching the frame, shaded a
 * few levels darker, joined the frame's backdrop seeds (within 12 levels); being darker, not
 * brighter, it made the backdrop read as a lit one, and the flood ran through the tee at 2.5
 * levels (07764_00: IoU 0.736). A frame whose runs are each all the one colour or none of it is
 * now read as digital (flatColour, segment.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVAL_DIR, garmentIds } from '../bench/quality';
import { geometric, nearestSide, readPair, scorePair } from '../bench/quality-perturbed';

type Pair = Awaited<ReturnType<typeof readPair>>;

/** The region cutting 2% of the frame into the garment on the side where its mask comes nearest. */
function cropRegion(mask: Pair['mask']) {
  const { width: w, height: h } = mask;
  const { side, left, top, right, bottom } = nearestSide(mask);
  const cutX = Math.round(w * 0.02);
  const cutY = Math.round(h * 0.02);
  if (side === 'left') return { left: left + cutX, top: 0, width: w - left - cutX, height: h };
  if (side === 'right') return { left: 0, top: 0, width: right + 1 - cutX, height: h };
  if (side === 'top') return { left: 0, top: top + cutY, width: w, height: h - top - cutY };
  return { left: 0, top: 0, width: w, height: bottom + 1 - cutY };
}

const croppedAtGarment = {
  name: 'cropEdge',
  apply: (pair: Pair): Promise<Pair> => geometric(pair, (s) => s.extract(cropRegion(pair.mask))),
};

const present = fs.existsSync(path.join(EVAL_DIR, 'garments')) && garmentIds().length > 0;
if (!present) console.log(`cropped-at-garment matting skipped: no photos at ${EVAL_DIR}`);

const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;

describe.skipIf(!present)('remove_background on garments the frame cuts into', () => {
  it(
    'cropped 2% into the garment: mean IoU >= 0.97, every photo >= 0.92, mean halo <= 8',
    { timeout: 900_000 },
    async () => {
      const scores: { id: string; iou: number; halo: number }[] = [];
      for (const id of garmentIds()) {
        const { iou, halo } = await scorePair(id, croppedAtGarment, await readPair(id));
        scores.push({ id, iou, halo });
        console.log(`${id} cropEdge IoU ${iou.toFixed(4)} halo ${halo.toFixed(1)}`);
      }
      const ious = scores.map((s) => s.iou);
      console.log(
        `${scores.length} photos: mean IoU ${mean(ious).toFixed(4)}, min ${Math.min(...ious).toFixed(4)}, mean halo ${mean(scores.map((s) => s.halo)).toFixed(1)}`,
      );
      expect(scores.length).toBeGreaterThanOrEqual(40);
      expect(mean(ious)).toBeGreaterThanOrEqual(0.97);
      for (const s of scores) expect(s.iou, s.id).toBeGreaterThanOrEqual(0.92);
      expect(mean(scores.map((s) => s.halo))).toBeLessThanOrEqual(8);
    },
  );
});
