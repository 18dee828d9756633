/**
 * Background removal quality: mean IoU of the cut-out's alpha against exact masks over ten
 * product photos (seamless gradients, vignetting, floor shadows, coloured paper, a person against
 * a wall, low-contrast subjects). The threshold sits just under what was measured, so a
 * regression fails.
 */
import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { removeBackground } from '../../src/core/providers/local/remove-background';
import { iou, renderScene, SCENES } from '../fixtures/matting-scenes';

describe('remove_background quality', () => {
  it(
    'cuts out ten product photos with a mean IoU of at least 0.95 and none below 0.85',
    { timeout: 300_000 },
    async () => {
      const scores: number[] = [];
      for (const scene of SCENES) {
        const { photo, mask } = await renderScene(scene);
        const cutout = await removeBackground(photo);
        const meta = await sharp(cutout).metadata();
        expect([meta.width, meta.height, meta.hasAlpha]).toEqual([scene.width, scene.height, true]);
        const score = await iou(cutout, mask);
        scores.push(score);
        console.log(`IoU ${score.toFixed(3)}  ${scene.name}`);
      }
      const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
      console.log(`mean IoU ${mean.toFixed(3)} over ${scores.length} photos`);
      expect(scores.length).toBeGreaterThanOrEqual(10);
      expect(mean).toBeGreaterThanOrEqual(0.95);
      expect(Math.min(...scores)).toBeGreaterThanOrEqual(0.85);
    },
  );

  it('leaves soft edges: the alpha has intermediate values along the outline', async () => {
    const { photo } = await renderScene(SCENES[0]!);
    const alpha = await sharp(await removeBackground(photo))
      .extractChannel(3)
      .raw()
      .toBuffer();
    const partial = alpha.filter((a) => a > 10 && a < 245).length;
    expect(partial).toBeGreaterThan(500);
  });
});
