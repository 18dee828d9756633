/**
 * The README's first command (`run` of resources/samples/photos with the cutout-amazon recipe)
 * must export cut-outs Amazon accepts. red-tee's soft cast shadow under the hem, on a light grey
 * vignetted backdrop, left thin "wings" beside both corners of the hem (rows ~835-850 of the
 * 768x1024 working size, 12-15 px past the garment): the lit-wall flood stopped at the
 * penumbra's steep top, and the contact-shadow rule gave them back as too thin to pool. The
 * export failed background purity (1096 pixels, a 28x22 px patch).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { computeMatte, removeBackground } from '../../src/core/providers/local/remove-background';
import { checkCompliance } from '../../src/studio/export/compliance';
import { renderForPreset } from '../../src/studio/export/render';

const SAMPLES = path.resolve(import.meta.dirname, '../../resources/samples/photos');
const AMAZON = { preset: 'amazon', format: 'jpeg', quality: 90 } as const;

/** First and last opaque (alpha > 127) column of row `y`, or null. */
function rowExtent(
  alpha: Uint8Array,
  w: number,
  y: number,
): { left: number; right: number } | null {
  let left = -1;
  let right = -1;
  for (let x = 0; x < w; x++) {
    if (alpha[y * w + x]! <= 127) continue;
    if (left < 0) left = x;
    right = x;
  }
  return left < 0 ? null : { left, right };
}

describe('the README sample photos', () => {
  it(
    "red-tee's cut-out keeps nothing beside the hem past the garment's own width",
    { timeout: 60_000 },
    async () => {
      const { alpha, width, height } = await computeMatte(path.join(SAMPLES, 'red-tee.jpg'));
      const rows: number[] = [];
      for (let y = 0; y < height; y++) if (rowExtent(alpha, width, y)) rows.push(y);
      const top = rows[0]!;
      const lowest = rows[rows.length - 1]!;
      const tall = lowest - top;
      // The body's width just above the shadow (8-20% of the height above the hem)...
      let left = width;
      let right = -1;
      for (let y = Math.round(lowest - 0.2 * tall); y <= lowest - 0.08 * tall; y++) {
        const e = rowExtent(alpha, width, y);
        if (!e) continue;
        left = Math.min(left, e.left);
        right = Math.max(right, e.right);
      }
      expect(right - left).toBeGreaterThan(0.3 * width);
      // ...bounds every row of the hem: the shadow's wings reached 12 and 15 px past it.
      let past = 0;
      for (let y = Math.ceil(lowest - 0.08 * tall); y <= lowest; y++) {
        const e = rowExtent(alpha, width, y);
        if (e) past = Math.max(past, left - e.left, e.right - right);
      }
      expect(past).toBeLessThanOrEqual(1);
    },
  );

  for (const name of fs.readdirSync(SAMPLES).filter((f) => f.endsWith('.jpg'))) {
    it(
      `the cutout-amazon export of ${name} has a pure white background`,
      { timeout: 60_000 },
      async () => {
        const cutout = await removeBackground(fs.readFileSync(path.join(SAMPLES, name)));
        const out = await renderForPreset(cutout, AMAZON);
        const report = await checkCompliance({
          image: out.data,
          settings: AMAZON,
          upscale: out.upscale,
          preview: out.preview,
          notes: out.notes,
        });
        const background = report.checks.find((c) => c.id === 'background')!;
        expect(background.ok, background.message).toBe(true);
        expect(report.verdict).not.toBe('fail');
      },
    );
  }
});
