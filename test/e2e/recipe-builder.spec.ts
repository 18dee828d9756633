/**
 * Issue 12, items 8 and 9: the recipe builder tells the truth (optional fields are optional,
 * required ones say so by their label, the status and submit button stay in view on the long
 * form, focus moves into it, names are previewed from this folder's own photos with the recipe's
 * real shots, ready shoots name files by shot, a bad pattern is refused at save) and preview mode
 * is said up front (first launch, every preview result, one click to Settings; large model images).
 */
import { expect, test } from './fixtures';
import { type Page } from '@playwright/test';
import path from 'node:path';
import {
  checkScreen,
  command,
  drop,
  garments,
  hasGarments,
  openAddFolder,
  openScreen,
  tabTo,
} from './helpers';

test.skip(!hasGarments, 'needs the real photos in ../shared/eval/garments');

const footerInView = async (page: Page) => {
  const box = await page.locator('.form-footer').boundingBox();
  const viewport = page.viewportSize()!;
  return box !== null && box.y >= 0 && box.y + box.height <= viewport.height + 1;
};

test('first launch says preview mode, with one step to Settings', async ({ page, studio }) => {
  await page.goto(studio.url);
  const note = page.getByRole('note', { name: 'Preview mode' });
  await expect(note).toContainText('offline previews');
  await expect(note).toContainText('until an AI provider or a remote service is set');
  await checkScreen(page, 'first-launch-preview-mode');
  await tabTo(page, note.getByRole('button', { name: 'Open Settings' }));
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Settings');
  await expect(page.getByRole('note', { name: 'About preview mode' })).toContainText(
    'offline previews',
  );
});

test('the builder: focus, required and optional fields, status in view, this folder’s names, ready shoots by shot', async ({
  page,
  studio,
}) => {
  const hot = path.join(studio.root, 'spring');
  const [photo] = drop(garments(2, 10), hot);
  const stem = path.basename(photo!, path.extname(photo!));
  await page.goto(studio.url);
  await openAddFolder(page);
  await page.keyboard.type(hot);

  // This folder's own photos name the preview (not another folder's, not invented).
  await expect(page.locator('#naming-preview code').first()).toHaveText(
    `${stem}-virtual_model-1.jpg`,
  );
  // Model pictures large enough to judge.
  const model = page.getByRole('listbox', { name: 'Fashion model' }).locator('img').first();
  await expect
    .poll(async () => (await model.boundingBox())?.width ?? 0)
    .toBeGreaterThanOrEqual(140);

  // The long form keeps its status and button in view wherever the operator is.
  expect(await footerInView(page)).toBe(true);
  await tabTo(page, page.getByLabel('Extra instructions (optional)'));
  await page.keyboard.type('keep the collar crisp');
  await expect(page.getByText('Recipe is valid.')).toBeVisible();
  await page.keyboard.press('Control+a');
  await page.keyboard.press('Backspace');
  await expect(page.getByText('Recipe is valid.')).toBeVisible();
  expect(await footerInView(page)).toBe(true);
  await checkScreen(page, 'recipe-builder');

  // A required text field says so by its label, and the status names it as the form does.
  const tool = page.getByRole('combobox', { name: 'Tool', exact: true });
  await tool.selectOption('photo_edit');
  await expect(page.getByText('Instructions (required)')).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: 'Not ready' })).toContainText(
    '“Instructions” is required for this tool',
  );
  await expect(page.getByRole('button', { name: 'Start watching' })).toBeDisabled();
  expect(await footerInView(page)).toBe(true);
  await tabTo(page, page.getByLabel('Instructions (required)'));
  await page.keyboard.type('remove the creases');
  await expect(page.getByText('Recipe is valid.')).toBeVisible();

  // A ready shoot names files by shot, with the set's real shots.
  await page.getByLabel('Recipe kind').selectOption('ready_shoot');
  await expect(page.getByLabel('File names')).toHaveValue('{name}-{shot}-{n}');
  const shots = await page.getByRole('group', { name: /Shots/ }).getByRole('checkbox').count();
  expect(shots).toBeGreaterThan(1);
  // One name per shot of the set (the preview follows the form after a short pause).
  const names = () => page.locator('#naming-preview code').allTextContents();
  await expect
    .poll(async () => new Set((await names()).map((n) => n.split('-').slice(-2, -1)[0])).size)
    .toBeGreaterThan(1);
  expect((await names())[0]).toMatch(new RegExp(`^${stem}-[a-z0-9_]+-1\\.jpg$`));

  // A bad pattern is refused before anything is saved or charged, in a sentence.
  await tabTo(page, page.getByLabel('File names'));
  await page.keyboard.press('Control+a');
  await page.keyboard.type('{sku}');
  await expect(page.getByRole('status').filter({ hasText: 'Not ready' })).toContainText(
    'Unknown token {sku}',
  );
  await expect(page.getByRole('button', { name: 'Start watching' })).toBeDisabled();
  expect(await footerInView(page)).toBe(true);
  await checkScreen(page, 'recipe-builder-invalid-naming');
  await expect(
    command(studio.url, 'folders.add', {
      path: hot,
      outputDir: `${hot}-export`,
      recipe: {
        request: { readyTemplateSetId: 'rts_studio_basics', images: { garment_photo: '{photo}' } },
        export: { naming: '{sku}' },
      },
    }),
  ).rejects.toThrow(/file-name pattern is not valid/);

  await page.keyboard.press('Control+a');
  await page.keyboard.type('{name}-{shot}');
  await expect(page.getByText('Recipe is valid.')).toBeVisible();
  await tabTo(page, page.getByRole('button', { name: 'Start watching' }));
  await page.keyboard.press('Enter');
  await expect(page.getByRole('listitem', { name: 'Folder spring' })).toContainText(
    /Ready shoot: .+ \(\d+ shots\)/,
  );
});

test('every preview result says so, on the tile and in the loupe', async ({ page, studio }) => {
  await page.goto(studio.url);
  await openScreen(page, 'Review');
  const grid = page.getByRole('listbox', { name: 'Results to review' });
  await expect(grid.getByRole('option').first()).toBeVisible({ timeout: 180_000 });
  await expect(grid.getByRole('option').first()).toContainText('preview');
  await tabTo(page, grid);
  await page.keyboard.press(' ');
  await expect(page.getByRole('dialog', { name: 'Compare before and after' })).toContainText(
    'offline preview (not an AI photo)',
  );
  await page.keyboard.press('Escape');
  await checkScreen(page, 'review-preview-results');
});
