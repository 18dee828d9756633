/**
 * The whole operator flow in a real browser against `dropshoot studio` on the embedded default:
 * set a folder with a recipe, drop 3 photos, watch them reach review, approve 2, reject 1, let
 * them export, check the files on disk. Driven by the keyboard alone; every screen is
 * screenshotted under test-results/screens and checked with axe.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from './fixtures';
import { checkScreen, openScreen, tabTo } from './helpers';

const SAMPLES = path.resolve(import.meta.dirname, '../../resources/samples/photos');

test('folder, 3 photos, review by keyboard, export to disk', async ({ page, studio }) => {
  const hot = path.join(studio.root, 'incoming');
  const out = path.join(studio.root, 'export');
  fs.mkdirSync(hot);

  await page.goto(studio.url);
  await expect(page.getByText('No hot folders yet')).toBeVisible();
  await checkScreen(page, 'folders-empty');

  // Add a folder with the default on-model recipe, keyboard only.
  await tabTo(page, page.getByRole('button', { name: 'Add folder' }));
  await page.keyboard.press('Enter');
  await tabTo(page, page.getByLabel('Folder to watch'));
  await page.keyboard.type(hot);
  await tabTo(page, page.getByLabel('Output folder'));
  await page.keyboard.type(out);
  await expect(page.getByText('Recipe is valid.')).toBeVisible();
  await expect(page.getByText('Price: 4 diamonds per photo')).toBeVisible();
  await expect(
    page.getByRole('listbox', { name: 'Fashion model' }).getByRole('option'),
  ).toHaveCount(24);
  await expect(page.locator('#naming-preview code').first()).toHaveText(/-virtual_model-1\.jpg$/);
  await checkScreen(page, 'recipe-builder');
  await tabTo(page, page.getByRole('button', { name: 'Start watching' }));
  await page.keyboard.press('Enter');
  // Exact: the empty card's "No photos yet: drop product photos into <path>" names it too.
  await expect(
    page.getByRole('list', { name: 'Watched folders' }).getByText(hot, { exact: true }),
  ).toBeVisible();
  await checkScreen(page, 'folders');

  for (const name of fs.readdirSync(SAMPLES))
    fs.copyFileSync(path.join(SAMPLES, name), path.join(hot, name));

  await openScreen(page, 'Batch');
  await expect(page.locator('tr[data-state]')).toHaveCount(3, { timeout: 30_000 });
  await checkScreen(page, 'batch-board');
  await expect(page.locator('tr[data-state="review"]')).toHaveCount(3, { timeout: 120_000 });
  // 3 photos x 4 diamonds, followed live from the engine's budget events.
  await expect(page.getByRole('group', { name: 'Budget' })).toContainText('9988');
  await checkScreen(page, 'batch-board-review');

  await openScreen(page, 'Review');
  const grid = page.getByRole('listbox', { name: 'Results to review' });
  await expect(grid.getByRole('option')).toHaveCount(3);
  await checkScreen(page, 'review');
  await tabTo(page, grid);
  await page.keyboard.press(' ');
  await expect(page.getByRole('dialog', { name: 'Compare before and after' })).toBeVisible();
  await checkScreen(page, 'review-compare');
  await page.keyboard.press('Escape');
  await tabTo(page, grid);
  await page.keyboard.press('a');
  await expect(grid.getByRole('option')).toHaveCount(2);
  await page.keyboard.press('a');
  await expect(grid.getByRole('option')).toHaveCount(1);
  await page.keyboard.press('x');
  await expect(page.getByText('Nothing to review')).toBeVisible();

  // Decided items export by themselves; the rejected one writes nothing.
  await expect.poll(() => exportedFiles(out), { timeout: 60_000 }).toHaveLength(2);
  await openScreen(page, 'Export');
  await expect(page.getByRole('table', { name: 'Exported files' }).getByRole('row')).toHaveCount(3);
  await checkScreen(page, 'export');

  for (const [screen, ready] of [
    ['Looks', page.getByRole('list', { name: 'Ready shoots' }).getByRole('listitem').first()],
    ['Account', page.getByText('local@dropshoot.invalid')],
    ['Settings', page.getByRole('form', { name: 'Remote service' })],
  ] as const) {
    await openScreen(page, screen);
    await expect(ready).toBeVisible();
    await checkScreen(page, screen.toLowerCase());
  }
  // The account screen asks the service itself.
  await openScreen(page, 'Account');
  await expect(page.getByText('9988')).toBeVisible();
});

function exportedFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(jpe?g|png|webp)$/.test(f) && !path.basename(f).startsWith('.'));
}
