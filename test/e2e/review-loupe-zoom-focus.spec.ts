/**
 * Review from the sidebar, by keyboard alone, and the loupe's zoom (review uirev B8, B1). Opening
 * Review left focus on the nav button, so A, X, Space and the arrows did nothing until the grid was
 * clicked; they now reach the grid at once. At 100% and 200% the picture kept its fit height
 * (`.compare img { max-height: 76vh }` beat the inline size), stretched and letterboxed in a wide
 * box: both panes now show the photo at 1 and 2 times its size, each inside its own frame.
 */
import { expect, test } from './fixtures';
import fs from 'node:fs';
import path from 'node:path';
import type { Locator } from '@playwright/test';
import { addFolder, drop, garments, hasGarments, isFocused, openScreen } from './helpers';

test.skip(!hasGarments, 'needs the real photos in ../shared/eval/garments');

const box = (target: Locator) =>
  target.evaluate((el) => {
    const r = el.getBoundingClientRect();
    return { left: r.left, top: r.top, right: r.right, bottom: r.bottom, w: r.width, h: r.height };
  });
const natural = (img: Locator) =>
  img.evaluate((el: HTMLImageElement) => ({ w: el.naturalWidth, h: el.naturalHeight }));

test('keys reach the review grid from the sidebar; the loupe zooms both panes', async ({
  page,
  studio,
}) => {
  const hot = path.join(studio.root, 'incoming');
  fs.mkdirSync(hot);
  await page.goto(studio.url);
  await addFolder(page, hot, path.join(studio.root, 'incoming-export'));
  drop(garments(3), hot);
  await openScreen(page, 'Batch');
  await expect(page.locator('tr[data-state="review"]')).toHaveCount(3, { timeout: 120_000 });

  // Review chosen in the sidebar by keyboard; no click on the grid.
  await openScreen(page, 'Review');
  const grid = page.getByRole('listbox', { name: 'Results to review' });
  const tiles = grid.getByRole('option');
  await expect(tiles).toHaveCount(3);
  await expect.poll(() => isFocused(grid)).toBe(true);
  await page.keyboard.press('a');
  await expect(tiles).toHaveCount(2);

  await page.keyboard.press(' ');
  const loupe = page.getByRole('dialog', { name: 'Compare before and after' });
  await expect(loupe).toBeVisible();
  const figures = loupe.locator('figure');
  for (const zoom of [1, 2]) {
    await page.keyboard.press(String(zoom));
    for (const i of [0, 1]) {
      const img = figures.nth(i).locator('img');
      await expect(img).toHaveJSProperty('complete', true);
      const size = await natural(img);
      await expect
        .poll(
          async () => {
            const shown = await box(img);
            return [Math.round(shown.w), Math.round(shown.h)];
          },
          `pane ${i} at ${zoom * 100}%`,
        )
        .toEqual([size.w * zoom, size.h * zoom]);
      // The pane scrolls its picture inside the figure's frame; it never spills out of it.
      const pane = await box(figures.nth(i).locator('.loupe-pane'));
      const frame = await box(figures.nth(i));
      expect(pane.left).toBeGreaterThanOrEqual(frame.left - 0.5);
      expect(pane.right).toBeLessThanOrEqual(frame.right + 0.5);
      expect(pane.bottom).toBeLessThanOrEqual(frame.bottom + 0.5);
    }
  }
  // Panned vertically too, now that the picture is taller than its pane.
  const after = loupe.locator('.loupe-pane').nth(1);
  await page.keyboard.press('Shift+ArrowDown');
  await expect.poll(() => after.evaluate((el) => el.scrollTop)).toBeGreaterThan(0);
});
