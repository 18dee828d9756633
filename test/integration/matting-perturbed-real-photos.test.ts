/**
 * remove_background on eval garments with Gaussian noise of sigma 3 (a high-ISO shot), scored as
 * `bench -- quality-perturbed` scores them (its readPair, VARIATIONS and scorePair). White tees on
 * a digital 246 grey backdrop were the casualties: the 3x3-averaged backdrop matched white fabric
 * within the tolerance's floor of 4 levels, and the lit-wall steps (meant for real walls) took
 * the rest: 07764_00 0.344, 06123_00 0.356, 07382_00 0.418, and the white tee on a grey sweep
 * 048554_1 0.471 (now 0.965, 0.981, 0.971, 0.979). At JPEG quality 60, 07764_00's fabric is
 * flattened into blocks of the backdrop's colour and a level brighter, which had counted as a flat
 * patch of another white and carried the flood into the chest: 0.855 (now 0.974). Also at quality
 * 60, the flat backdrop decodes exactly but rings by several levels beside saturated garments
 * (16 px chroma blocks), more than the digital fringe's 4 levels: halo 74.2 on 02015_00 (yellow
 * top), 36.1 on 051991_1 (navy trousers); and the gaps between sleeve and body of 049940_1 kept
 * no exact backdrop to be opened as pockets: 0.976, halo 56.6; JPEG noise in the shadow under
 * 050191_1's green tee kept it (halo 42.5); 12562_00's white tee, flattened into whole blocks,
 * passed for a flat patch of backdrop (0.903). The file's quantisation tables now set those
 * levels (compression.ts). Cropped to the frame (crop10), 050105_1's white sleeve meets the flat
 * beige backdrop over about 8 px, too softly for the frame's 2 px step cut, so it was seeded as
 * backdrop and flooded: 0.934 (now 0.989, SOFT_STEP in segment.ts). At quality 60 the ringing
 * reaches a block past the outline, beyond one peel of the fringe: halo 16 on 07382_00 (5 in the
 * original file), 28 on 052234_1 (14), 35 on 051998_1 (26); a second peel where the file rings
 * (remove-background.ts) takes them to 5, 18 and 22. Cropped, 02015_00 (yellow top on digital
 * 246 grey) kept a speckled fringe along its neckline and sides (halo 33.6, 15.0 uncropped): the
 * backdrop's noise just past the fringe's level counted against it in its ring (PALE, segment.ts).
 * At quality 60, 051946_1's lit white backdrop is flattened to one exact 255 and read as digital,
 * where no shadows were looked for: the cast shadow beside its pink legs stayed (0.989, halo 25.6;
 * now 0.994, 9.5: addFlattenedShadows, segment.ts). 02015_00's bright rim (a sharpened cut-out's,
 * up to 9 levels over the backdrop) counted against its fringe, which stayed: halo 25.3 cropped,
 * 12.7 as it is (now 14.6 and 6.5: PALE_LEVELS, segment.ts).
 * Under noise sigma 3 the 5x5 means of a digital 246 backdrop were flooded with the grow passes'
 * floor of 2.5 levels, through white fabric 1-2 levels off it: 12562_00 0.678, 00151_00's white
 * stripes 0.688 (now 0.969 and 0.843: averagedTolerance, segment.ts). Brightened 10-15% (bright+10,
 * bright+15), a digital 246 backdrop and white fabric both clip to 255 and no level tells them
 * apart: the flood runs through the outline's gaps and leaves the print (12562_00 0.535 and 0.245,
 * 07382_00 0.607, 06123_00 0.674 at +15%). Keeping the convex hull of what is left mended those,
 * but made a necklace or a figure with spread limbs on clipped white a convex blob
 * (matting-clipped-white-shapes): not done, those cases stay open.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVAL_DIR } from '../bench/quality';
import { VARIATIONS, readPair, scorePair } from '../bench/quality-perturbed';

/** Variation, photo, least IoU and, where held, most halo (levels of 255). */
const CASES: { variation: string; id: string; iou: number; halo?: number }[] = [
  { variation: 'noise3', id: '07764_00', iou: 0.95 },
  { variation: 'noise3', id: '06123_00', iou: 0.95 },
  { variation: 'noise3', id: '07382_00', iou: 0.95 },
  { variation: 'noise3', id: '048554_1', iou: 0.95 },
  { variation: 'jpeg60', id: '07764_00', iou: 0.96 },
  { variation: 'jpeg60', id: '02015_00', iou: 0.99, halo: 20 },
  { variation: 'jpeg60', id: '051991_1', iou: 0.99, halo: 10 },
  { variation: 'jpeg60', id: '049940_1', iou: 0.985, halo: 20 },
  { variation: 'jpeg60', id: '050191_1', iou: 0.99, halo: 15 },
  { variation: 'jpeg60', id: '12562_00', iou: 0.93 },
  { variation: 'crop10', id: '050105_1', iou: 0.98 },
  { variation: 'jpeg60', id: '07382_00', iou: 0.96, halo: 8 },
  { variation: 'jpeg60', id: '052234_1', iou: 0.975, halo: 20 },
  { variation: 'jpeg60', id: '051998_1', iou: 0.98, halo: 26 },
  { variation: 'crop10', id: '02015_00', iou: 0.99, halo: 20 },
  { variation: 'original', id: '02015_00', iou: 0.99, halo: 10 },
  { variation: 'jpeg60', id: '051946_1', iou: 0.99, halo: 15 },
  { variation: 'noise3', id: '12562_00', iou: 0.95 },
  { variation: 'noise3', id: '00151_00', iou: 0.82 },
  { variation: 'noise3', id: '00470_00', iou: 0.99, halo: 8 },
];
const present = CASES.every(
  ({ id }) =>
    fs.existsSync(path.join(EVAL_DIR, 'garments', `${id}.jpg`)) &&
    fs.existsSync(path.join(EVAL_DIR, 'masks', `${id}.png`)),
);
if (!present) console.log(`perturbed real-photo matting skipped: photos missing at ${EVAL_DIR}`);

describe.skipIf(!present)('remove_background on changed real photos', () => {
  it.each(CASES)('$variation $id: IoU >= $iou', { timeout: 120_000 }, async (c) => {
    const variation = VARIATIONS.find((v) => v.name === c.variation)!;
    const { iou, halo } = await scorePair(c.id, variation, await readPair(c.id));
    console.log(`${c.id} ${c.variation} IoU ${iou.toFixed(4)} halo ${halo.toFixed(1)}`);
    expect(iou).toBeGreaterThanOrEqual(c.iou);
    if (c.halo !== undefined) expect(halo).toBeLessThanOrEqual(c.halo);
  });
});
