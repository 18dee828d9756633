/**
 * Issue 12, items 2 and 1: a loupe for checking results (zoom, pan, next/previous, file names,
 * cut-outs on a checkerboard, keys back on the grid after it closes, shift-click ranges) and
 * review decisions that stay true to the store (redo declines the old result at once, approvals
 * can be undone and their files are removed, a photo whose results are all rejected is not a
 * failure). Real garment photos, cut out by remove_background.
 */
import { expect, test, type RunningStudio } from './fixtures';
import fs from 'node:fs';
import path from 'node:path';
import type { ResultView } from '../../src/shared/studio';
import {
  addFolder,
  checkScreen,
  command,
  drop,
  filesIn,
  garments,
  hasGarments,
  isFocused,
  openScreen,
  tabTo,
  queueItems,
} from './helpers';

test.skip(!hasGarments, 'needs the real photos in ../shared/eval/garments');

const results = async (studio: RunningStudio) =>
  (await command<{ results: ResultView[] }>(studio.url, 'results.list', {})).results;

test('loupe, undo, redo and rejections on real cut-outs', async ({ page, studio }) => {
  const hot = path.join(studio.root, 'cutouts');
  const out = path.join(studio.root, 'cutouts-export');
  fs.mkdirSync(hot);
  await page.goto(studio.url);
  await addFolder(page, hot, out, async () => {
    const tool = page.getByRole('combobox', { name: 'Tool', exact: true });
    await tabTo(page, tool);
    await tool.selectOption('remove_background');
  });
  const photos = garments(3, 3).map((f) => path.basename(f));
  drop(garments(3, 3), hot);
  await openScreen(page, 'Batch');
  await expect(page.locator('tr[data-state="review"]')).toHaveCount(3, { timeout: 120_000 });

  await openScreen(page, 'Review');
  const grid = page.getByRole('listbox', { name: 'Results to review' });
  const tiles = grid.getByRole('option');
  await expect(tiles).toHaveCount(3);
  // Every tile names its photo; cut-outs sit on a checkerboard.
  for (const name of photos) await expect(grid.getByText(`${name} ·`)).toBeVisible();
  await expect(grid.locator('img.checker')).toHaveCount(3);
  await checkScreen(page, 'review-grid');

  // The loupe: zoom, pan, next/previous, background, all by keyboard.
  await tabTo(page, grid);
  await page.keyboard.press(' ');
  const loupe = page.getByRole('dialog', { name: 'Compare before and after' });
  await expect(loupe).toBeVisible();
  await expect(loupe).toContainText('1 of 3');
  const after = loupe.locator('figure').nth(1).locator('img');
  await expect(after).toHaveJSProperty('complete', true);
  const natural = await after.evaluate((img: HTMLImageElement) => img.naturalWidth);
  await page.keyboard.press('1');
  await expect
    .poll(() => after.evaluate((img: HTMLImageElement) => img.getBoundingClientRect().width))
    .toBe(natural);
  await page.keyboard.press('2');
  await expect
    .poll(() => after.evaluate((img: HTMLImageElement) => img.getBoundingClientRect().width))
    .toBe(natural * 2);
  const pane = loupe.locator('.loupe-pane').nth(1);
  await page.keyboard.press('Shift+ArrowRight');
  await page.keyboard.press('Shift+ArrowDown');
  await expect.poll(() => pane.evaluate((el) => el.scrollLeft + el.scrollTop)).toBeGreaterThan(0);
  // Both panes show the same region.
  await expect
    .poll(() =>
      loupe
        .locator('.loupe-pane')
        .nth(0)
        .evaluate((el) => el.scrollLeft),
    )
    .toBe(await pane.evaluate((el) => el.scrollLeft));
  await expect(pane).toHaveClass(/checker/);
  await page.keyboard.press('ArrowRight');
  await expect(loupe).toContainText('2 of 3');
  await page.keyboard.press('ArrowLeft');
  await expect(loupe).toContainText('1 of 3');
  await page.keyboard.press('f');
  await checkScreen(page, 'review-loupe');
  await loupe.getByLabel('Background').selectOption('black');
  await expect(pane).toHaveCSS('background-color', 'rgb(0, 0, 0)');
  await loupe.getByRole('button', { name: /^Close/ }).focus();
  await page.keyboard.press('Escape');
  await expect(loupe).toHaveCount(0);
  // Keys work again at once, without a click.
  await expect.poll(() => isFocused(grid)).toBe(true);
  await page.keyboard.press('a');
  await expect(tiles).toHaveCount(2);
  await expect
    .poll(async () => (await results(studio)).filter((r) => r.review === 'approved').length)
    .toBe(1);
  const first = (await results(studio)).find((r) => r.review === 'approved')!;

  // Approved: exported; Undo (U) takes the decision back and removes the file it wrote.
  await expect.poll(() => filesIn(out).length, { timeout: 60_000 }).toBe(1);
  await expect
    .poll(async () => (await results(studio)).find((r) => r.exportedPath)?.id)
    .toBeTruthy();
  await page.keyboard.press('u');
  await expect(tiles).toHaveCount(3);
  await expect.poll(() => filesIn(out).length, { timeout: 30_000 }).toBe(0);
  const undone = (await results(studio)).find((r) => r.id === first.id);
  expect(undone?.review).toBe('pending');
  expect(undone?.exportedPath).toBeNull();
  expect(
    fs.existsSync(
      path.join(hot, (await queueItems(studio)).find((i) => i.id === undone?.itemId)!.name),
    ),
  ).toBe(true); // source back in place

  // Redo: the old result is declined at once, so "Approve all shown" can never export it.
  await tabTo(page, grid);
  const redone = {
    id: (await grid.getAttribute('aria-activedescendant'))!.replace(/^result-/, ''),
  };
  // Its price is shown before the press, and a paid redo asks first, with the same price.
  const hint = page.getByTestId('redo-price');
  await expect(hint).toHaveText(/^Redo: about \d+ diamonds?$/);
  const price = /about (\d+) diamond/.exec((await hint.textContent())!)![1]!;
  await page.keyboard.press('r');
  const confirmRedo = page.getByRole('alertdialog', { name: 'Redo 1 result?' });
  await expect(confirmRedo).toContainText(`costs about ${price} diamond`);
  const redoButton = confirmRedo.getByRole('button', { name: `Redo for ${price} diamond` });
  await expect(redoButton).toBeFocused();
  await checkScreen(page, 'review-redo-confirm');
  await page.keyboard.press('Enter');
  await expect(confirmRedo).toHaveCount(0);
  await expect(tiles).toHaveCount(2);
  // The notice says what the redo costs (one new job for the photo).
  await expect(
    page.getByText(/^1 photo queued again with the same recipe \(about \d+ diamonds?\)/),
  ).toBeVisible();
  await expect
    .poll(async () => (await results(studio)).find((r) => r.id === redone.id)?.review)
    .toBe('rejected');
  await expect(page.getByRole('button', { name: 'Approve all shown (2)' })).toBeVisible();

  // Shift-click ranges include the highlighted tile.
  await tiles.nth(0).click();
  await tiles.nth(1).click({ modifiers: ['Shift'] });
  await expect(page.getByText('2 selected')).toBeVisible();
  await page.keyboard.press('x');
  // All results of those photos rejected: rejected, not failed. The photo redone is one row, its
  // redo's, with the declined attempt as its history (not a third rejected photo: uirev C4).
  await openScreen(page, 'Batch');
  await expect(page.locator('tr[data-state="rejected"]')).toHaveCount(2, { timeout: 30_000 });
  await expect(page.getByTestId('earlier-attempts')).toHaveCount(1);
  await expect(page.locator('tr[data-state="failed"]')).toHaveCount(0);
  await expect(page.getByRole('button', { name: /Generate again \(0\)/ })).toBeDisabled();
  await checkScreen(page, 'batch-after-review');

  // The redo's new result arrives; approving all shown exports it alone.
  await openScreen(page, 'Review');
  await expect(tiles).toHaveCount(1, { timeout: 120_000 });
  await tabTo(page, page.getByRole('button', { name: 'Approve all shown (1)' }));
  await page.keyboard.press('Enter');
  await expect.poll(() => filesIn(out).length, { timeout: 60_000 }).toBe(1);
  const final = await results(studio);
  expect(final.find((r) => r.id === redone.id)?.exportedPath).toBeNull();
  expect(final.filter((r) => r.exportedPath)).toHaveLength(1);

  // A stale Redo on the result its redo already replaced: nothing queued, nothing paid, and said so.
  const queuedBefore = (await queueItems(studio)).length;
  const balanceBefore = (await command<{ diamondBalance: number }>(studio.url, 'account.get', {}))
    .diamondBalance;
  await page.getByRole('combobox', { name: 'Show' }).selectOption('rejected');
  await page.locator(`#result-${redone.id}`).click();
  await expect(hint).toHaveText('Redo: already redone, nothing to pay');
  await page.keyboard.press('r');
  await expect(
    page.getByText(/^Nothing queued: 1 photo already redone \(a newer result replaced this one\)/),
  ).toBeVisible();
  await expect(page.getByRole('alertdialog')).toHaveCount(0);
  expect((await queueItems(studio)).length).toBe(queuedBefore);
  expect(
    (await command<{ diamondBalance: number }>(studio.url, 'account.get', {})).diamondBalance,
  ).toBe(balanceBefore);

  // A cut-out cannot become a look (the service's rule): the button says so instead of failing.
  await page.getByRole('combobox', { name: 'Show' }).selectOption('approved');
  await expect(page.getByRole('button', { name: 'Save look' })).toBeDisabled();
  await expect(page.getByText('This tool’s results cannot be saved as a look.')).toBeVisible();
});
