/**
 * The whole operator flow in a real browser against `dropshoot studio` on the embedded default:
 * set a folder with a recipe, drop 3 photos, watch them reach review, approve 2, reject 1, let
 * them export, check the files on disk. Driven by the keyboard alone; every screen is
 * screenshotted under test-results/screens and checked with axe.
 */
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Locator, type Page } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import { startStudio, type RunningStudio } from './studio';

const SAMPLES = path.resolve(import.meta.dirname, '../../resources/samples/photos');
const SHOTS = path.resolve(import.meta.dirname, '../../test-results/screens');
let studio: RunningStudio;

test.beforeAll(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  studio = await startStudio();
});
test.afterAll(async () => studio?.stop());

/** Presses Tab until `target` has focus: proof that it is reachable without a mouse. */
async function tabTo(page: Page, target: Locator, maxPresses = 80): Promise<void> {
  for (let i = 0; i < maxPresses; i++) {
    if (await target.evaluate((el) => el === document.activeElement).catch(() => false)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`could not reach ${target.toString()} with Tab`);
}

async function checkScreen(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: false });
  const { violations } = await new AxeBuilder({ page }).analyze();
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`), `${name} accessibility`).toEqual([]);
}

async function openScreen(page: Page, name: string): Promise<void> {
  const button = page.getByRole('navigation', { name: 'Screens' }).getByRole('button', { name: new RegExp(`^${name}`) });
  await tabTo(page, button);
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(name);
}

test('folder, 3 photos, review by keyboard, export to disk', async ({ page }) => {
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
  await expect(page.getByRole('listbox', { name: 'Fashion model' }).getByRole('option')).toHaveCount(24);
  await expect(page.locator('#naming-preview code').first()).toHaveText(/-virtual_model-1\.jpg$/);
  await checkScreen(page, 'recipe-builder');
  await tabTo(page, page.getByRole('button', { name: 'Start watching' }));
  await page.keyboard.press('Enter');
  await expect(page.getByRole('list', { name: 'Watched folders' }).getByText(hot)).toBeVisible();
  await checkScreen(page, 'folders');

  for (const name of fs.readdirSync(SAMPLES)) fs.copyFileSync(path.join(SAMPLES, name), path.join(hot, name));

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
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => /\.(jpe?g|png|webp)$/.test(f) && !path.basename(f).startsWith('.'));
}
