/**
 * Review uirev C6: at 1024 px wide the board's Actions column was off-screen (the page scrolled
 * sideways: scrollWidth 1134), and at 1280 px the review grid clipped its last column (the column
 * count left out the row's padding and the tiles' borders). Both now fit their window.
 */
import { expect, test } from './fixtures';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { addFolder, command, garments, hasGarments, openScreen, queueItems } from './helpers';

test.skip(!hasGarments, 'needs the real photos in ../shared/eval/garments');

/** How far the page's content runs past the window's right edge, and every button's right edge. */
const overflow = (page: Page) =>
  page.evaluate(() => ({
    sideways: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    main: (() => {
      const main = document.querySelector('main') ?? document.querySelector('.main')!;
      return main.scrollWidth - main.clientWidth;
    })(),
    buttonsPast: [...document.querySelectorAll('table[aria-label="Photos"] button')].filter(
      (b) => b.getBoundingClientRect().right > document.documentElement.clientWidth,
    ).length,
  }));

test('the board fits 1024 px with its actions; the review grid shows whole columns at 1280 px', async ({
  page,
  studio,
}) => {
  const hot = path.join(studio.root, 'incoming');
  fs.mkdirSync(hot);
  await page.setViewportSize({ width: 1024, height: 800 });
  await page.goto(studio.url);
  await addFolder(page, hot, path.join(studio.root, 'incoming-export'));
  await command(studio.url, 'queue.pause', { paused: true });
  // Camera and retouch exports carry long names with no space or hyphen: nothing to wrap them at.
  for (const [i, file] of garments(6).entries())
    fs.copyFileSync(file, path.join(hot, `20261128_studioA_look${i}_front_retouch_final_v2.jpg`));
  await expect.poll(async () => (await queueItems(studio)).length, { timeout: 60_000 }).toBe(6);
  await page.reload();
  await openScreen(page, 'Batch');
  await expect(page.locator('tr[data-state="queued"]')).toHaveCount(6);
  await expect(page.getByRole('button', { name: /^Move to front / })).toHaveCount(6);
  // Before: the table ran past the window, Move to front and Cancel out of sight.
  expect(await overflow(page)).toEqual({ sideways: 0, main: 0, buttonsPast: 0 });

  await page.getByRole('button', { name: 'Resume all' }).click();
  await expect(page.locator('tr[data-state="review"]')).toHaveCount(6, { timeout: 120_000 });
  // Cancel offered on photos in review (and the long reasons of a wide table) still fit.
  expect(await overflow(page)).toEqual({ sideways: 0, main: 0, buttonsPast: 0 });

  await page.setViewportSize({ width: 1280, height: 860 });
  await openScreen(page, 'Review');
  const grid = page.getByRole('listbox', { name: 'Results to review' });
  await expect(grid.getByRole('option')).toHaveCount(6);
  // Before: five columns in a grid with room for four, the fifth cut by the grid's edge.
  const clipped = await grid.evaluate((el) => {
    const edge = el.getBoundingClientRect().left + el.clientLeft + el.clientWidth;
    return {
      tiles: [...el.querySelectorAll('[role="option"]')].filter(
        (t) => t.getBoundingClientRect().right > edge,
      ).length,
      sideways: el.scrollWidth - el.clientWidth,
    };
  });
  expect(clipped).toEqual({ tiles: 0, sideways: 0 });
});
