/**
 * Issue 12, items 7, 5 and 3 (UI side): the batch board works for many photos (folder and
 * recipe column, thumbnails, state and folder filters, per-photo Cancel and Move to front, a
 * reason on every waiting row, paused state kept across a reload, live folder cards), settings
 * are checked when saved, "export again" (free) is apart from "generate again" (priced by what
 * it will charge, a job already paid collected for nothing, and confirmed), and the money shown
 * adds up: every queued row's price, to spend = their sum, spent = what the account was charged.
 */
import { expect, test, type RunningStudio } from './fixtures';
import fs from 'node:fs';
import path from 'node:path';
import type { AccountView } from '../../src/shared/studio';
import {
  addFolder,
  checkScreen,
  command,
  drop,
  filesIn,
  garments,
  hasGarments,
  openScreen,
  tabTo,
  queueItems,
} from './helpers';

test.skip(!hasGarments, 'needs the real photos in ../shared/eval/garments');

const balance = async (studio: RunningStudio) =>
  (await command<AccountView>(studio.url, 'account.get')).diamondBalance;
const stat = (page: import('@playwright/test').Page, label: string) =>
  page
    .getByRole('group', { name: 'Budget' })
    .locator('.stat', { hasText: label })
    .locator('strong');

test('a paused board of two folders with the same file names: prices, reasons, filters, reload, cancel, move to front, then spend', async ({
  page,
  studio,
}) => {
  const north = path.join(studio.root, 'north');
  const south = path.join(studio.root, 'south');
  fs.mkdirSync(north);
  fs.mkdirSync(south);
  await page.goto(studio.url);
  await addFolder(page, north, `${north}-export`);
  await addFolder(page, south, `${south}-export`);
  const start = await balance(studio);

  // An empty board has no toolbar yet: the queue is paused through the contract, before the drop.
  await command(studio.url, 'queue.pause', { paused: true });
  // Different photos under the same three names (the same bytes twice would be skipped, and say so).
  const photos = garments(3, 20);
  drop(photos, north);
  garments(3, 23).forEach((file, i) =>
    fs.copyFileSync(file, path.join(south, path.basename(photos[i]!))),
  );
  await expect
    .poll(async () => (await queueItems(studio)).filter((i) => i.state === 'queued').length, {
      timeout: 60_000,
    })
    .toBe(6);
  await page.reload();
  await openScreen(page, 'Batch');

  // Paused survives the reload: the button offers Resume, the ETA says paused.
  await expect(page.getByRole('button', { name: 'Resume all' })).toBeVisible();
  await expect(stat(page, 'ETA')).toHaveText('paused');
  const rows = page.locator('table[aria-label="Photos"] tbody tr');
  await expect(rows).toHaveCount(6);
  // Same names, told apart by their folder; each row has its price and a reason.
  for (const row of await rows.all()) {
    await expect(row).toContainText('4 to pay');
    await expect(row).toContainText('Paused: press “Resume all”.');
    await expect(row).toContainText(/north|south/);
    await expect(row).toContainText('Virtual model');
  }
  await expect(stat(page, 'To spend')).toHaveText('24');
  await expect(stat(page, 'Spent')).toHaveText('0');
  await expect(page.locator('table[aria-label="Photos"] img.thumb')).toHaveCount(6);
  await checkScreen(page, 'batch-board-paused');

  // Filters: by folder, by state.
  await page.getByRole('combobox', { name: 'Folder' }).selectOption({ label: 'south' });
  await expect(rows).toHaveCount(3);
  await page.getByRole('combobox', { name: 'State' }).selectOption('failed');
  await expect(rows).toHaveCount(0);
  await page.getByRole('combobox', { name: 'State' }).selectOption('waiting');
  await expect(rows).toHaveCount(3);
  await page.getByRole('combobox', { name: 'Folder' }).selectOption('all');
  await page.getByRole('combobox', { name: 'State' }).selectOption('all');
  await expect(rows).toHaveCount(6);

  // Move to front and Cancel, per photo, by keyboard.
  const last = rows.last();
  const lastId = await last.getAttribute('data-item');
  await tabTo(page, last.getByRole('button', { name: /^Move to front / }));
  await page.keyboard.press('Enter');
  await expect(rows.first()).toHaveAttribute('data-item', lastId!);
  const second = rows.nth(1);
  const cancelledId = await second.getAttribute('data-item');
  // The watcher may take either folder's drop first, so the row order (and the folder that loses
  // a photo) is read from the board, not assumed.
  const cancelledFolder = /north|south/.exec((await second.textContent()) ?? '')![0];
  const keptFolder = cancelledFolder === 'north' ? 'south' : 'north';
  await tabTo(page, second.getByRole('button', { name: /^Cancel / }));
  await page.keyboard.press('Enter');
  await expect(page.locator(`tr[data-item="${cancelledId}"]`)).toHaveAttribute(
    'data-state',
    'cancelled',
  );
  await expect(stat(page, 'To spend')).toHaveText('20');

  // Resume: the board and the folder cards follow live; spent is what the account was charged.
  await tabTo(page, page.getByRole('button', { name: 'Resume all' }));
  await page.keyboard.press('Enter');
  await expect(page.locator('tr[data-state="review"]')).toHaveCount(5, { timeout: 180_000 });
  await expect(stat(page, 'To spend')).toHaveText('0');
  await expect(stat(page, 'Spent')).toHaveText(String(start - (await balance(studio))));
  await expect(stat(page, 'Spent')).toHaveText('20');
  await expect(page.getByRole('table', { name: 'Batches' })).toContainText('north');
  await checkScreen(page, 'batch-board');
  await openScreen(page, 'Hot folders');
  await expect(
    page.getByRole('listitem', { name: `Folder ${keptFolder}` }).getByTestId('folder-counts'),
  ).toContainText('0/3 finished · 0 working · 3 to review');
  await expect(
    page.getByRole('listitem', { name: `Folder ${cancelledFolder}` }).getByTestId('folder-counts'),
  ).toContainText('0/2 finished · 0 working · 2 to review');
  await checkScreen(page, 'folders-live');
});

test('settings are checked at save; an export that failed is exported again for free, generating again is priced and confirmed', async ({
  page,
  studio,
}) => {
  const west = path.join(studio.root, 'west');
  const blocked = path.join(studio.root, 'west-export');
  fs.mkdirSync(west);
  fs.writeFileSync(blocked, 'a file where the output folder should be');
  await page.goto(studio.url);
  await addFolder(page, west, blocked);

  // Export settings: a pattern with an unknown token is refused before anything is charged.
  await openScreen(page, 'Export');
  await page.getByRole('combobox', { name: 'Folder' }).selectOption({ label: 'west' });
  await tabTo(page, page.getByLabel('Naming pattern'));
  await page.keyboard.press('Control+a');
  await page.keyboard.type('{sku}');
  await expect(page.locator('#export-naming-preview .problem')).toContainText(
    'Unknown token {sku}',
  );
  await expect(page.getByRole('button', { name: 'Save' })).toBeDisabled();
  await checkScreen(page, 'export-invalid-naming');
  await page.keyboard.press('Control+a');
  await page.keyboard.type('{name}-{tool}-{n}');

  drop(garments(1, 30), west);
  await openScreen(page, 'Review');
  const grid = page.getByRole('listbox', { name: 'Results to review' });
  await expect(
    grid.getByRole('option', { name: new RegExp(path.basename(garments(1, 30)[0]!)) }),
  ).toBeVisible({ timeout: 120_000 });
  await grid.getByRole('option', { name: new RegExp(path.basename(garments(1, 30)[0]!)) }).click();
  await page.keyboard.press('a');
  const spentBefore = await balance(studio);

  await openScreen(page, 'Batch');
  const failed = page.locator('tr[data-state="failed"]');
  await expect(failed).toHaveCount(1, { timeout: 60_000 });
  // A sentence that says what to do, not a raw system error.
  await expect(failed.locator('td').nth(5)).toHaveText(
    /^Cannot create the output folder .*west-export: a file of that name is in the way\. Move it, then export again\.$/,
  );
  await expect(failed.getByRole('button', { name: /^Export again / })).toBeVisible();

  // Generate again: priced by what it will charge and confirmed; cancelled here. Its job is
  // already paid (only the export failed): collected again for nothing, not priced at 4.
  await tabTo(page, failed.getByRole('button', { name: /^Generate again… / }));
  await page.keyboard.press('Enter');
  const confirm = page.getByRole('alertdialog', { name: 'Generate 1 photo again?' });
  await expect(confirm).toContainText(
    '1 photo already paid for is collected again at no charge: the same job is asked again, not paid again.',
  );
  await expect(confirm).not.toContainText('diamond');
  await expect(confirm.getByRole('button', { name: 'Collect again (free)' })).toBeFocused();
  await checkScreen(page, 'batch-generate-again-confirm');
  await page.keyboard.press('Escape');
  await expect(confirm).toHaveCount(0);

  // Export again, free: fix the folder, write the files already paid for.
  fs.rmSync(blocked);
  await tabTo(page, failed.getByRole('button', { name: /^Export again / }));
  await page.keyboard.press('Enter');
  await expect(
    page
      .locator('tr[data-state="exported"]')
      .filter({ hasText: path.basename(garments(1, 30)[0]!) }),
  ).toHaveCount(1, { timeout: 60_000 });
  expect(filesIn(blocked)).toHaveLength(1);
  expect(await balance(studio)).toBe(spentBefore);
});
