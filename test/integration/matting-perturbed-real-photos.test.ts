/**
 * remove_background on eval garments with Gaussian noise of sigma 3 (a high-ISO shot), scored as
 * `bench -- quality-perturbed` scores them (its readPair, VARIATIONS and scorePair). White tees on
 * a digital 246 grey backdrop were the casualties: the 3x3-averaged backdrop matched white fabric
 * within the tolerance's floor of 4 levels, and the lit-wall steps (meant for real walls) took
 * the rest: 07764_00 0.344, 06123_00 0.356, 07382_00 0.418, and the white tee on a grey sweep
 * 048554_1 0.471 (now 0.965, 0.981, 0.971, 0.979). At JPEG quality 60, 07764_00's fabric is
 * flattened into blocks of the backdrop's colour and a level brighter, which had counted as a flat
 * patch of another white and carried the flood into the chest: 0.855 (now 0.974).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVAL_DIR } from '../bench/quality';
import { VARIATIONS, readPair, scorePair } from '../bench/quality-perturbed';

const CASES: [variation: string, id: string, floor: number][] = [
  ['noise3', '07764_00', 0.95],
  ['noise3', '06123_00', 0.95],
  ['noise3', '07382_00', 0.95],
  ['noise3', '048554_1', 0.95],
  ['jpeg60', '07764_00', 0.96],
];
const present = CASES.every(
  ([, id]) =>
    fs.existsSync(path.join(EVAL_DIR, 'garments', `${id}.jpg`)) &&
    fs.existsSync(path.join(EVAL_DIR, 'masks', `${id}.png`)),
);
if (!present) console.log(`perturbed real-photo matting skipped: photos missing at ${EVAL_DIR}`);

describe.skipIf(!present)('remove_background on changed real photos', () => {
  it.each(CASES)('%s %s: IoU >= %s', { timeout: 120_000 }, async (name, id, floor) => {
    const variation = VARIATIONS.find((v) => v.name === name)!;
    const { iou, halo } = await scorePair(id, variation, await readPair(id));
    console.log(`${id} ${name} IoU ${iou.toFixed(4)} halo ${halo.toFixed(1)}`);
    expect(iou).toBeGreaterThanOrEqual(floor);
  });
});
