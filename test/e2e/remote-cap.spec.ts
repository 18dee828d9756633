/**
 * Issue 12, item 3 (remote mode) and the daily-cap setting: the studio pointed at a remote /v1
 * service (the reference service, written from the spec alone) shows "Requests left today" as its
 * own count against the configured cap. The cap is set in Settings (refused as a sentence when it
 * is not a whole number), kept across a reload, and used from the studio's next start; the count
 * goes down as photos are sent, and once it is at 0 new photos wait with "cap reached" beside
 * "0 of N" while the service sees no further request.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { startReferenceService, type ReferenceService } from '../reference-service';
import { expect, test, type RunningStudio } from './fixtures';
import {
  addFolder,
  checkScreen,
  command,
  drop,
  garments,
  hasGarments,
  openScreen,
  tabTo,
  queueItems,
} from './helpers';
import { startStudio } from './studio';

test.skip(!hasGarments, 'needs the real photos in ../shared/eval/garments');

let service: ReferenceService;
let root: string;
let running: RunningStudio | null = null;
test.beforeAll(async () => {
  // Jobs take 0.1-0.8 s: the flow is about requests, not waiting.
  service = await startReferenceService({ seed: 12, timeScale: 0.02 });
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-e2e-remote-'));
});
test.afterAll(async () => {
  await running?.stop();
  await service?.close();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

/** (Re)starts the studio on the same data folder, in remote mode: settings are read at start. */
async function restartStudio(apiKey: string): Promise<RunningStudio> {
  await running?.stop();
  running = await startStudio({ root, args: ['--remote', service.url, '--key', apiKey] });
  return running;
}

const requestsLeft = (page: Page) =>
  page
    .getByRole('group', { name: 'Budget' })
    .locator('.stat', { hasText: 'Requests left today' })
    .locator('strong');
const capField = (page: Page) =>
  page.getByRole('form', { name: 'Daily request cap' }).getByLabel('Requests a day (daily cap)');

async function saveCap(page: Page, value: string): Promise<void> {
  await tabTo(page, capField(page));
  await page.keyboard.press('Control+a');
  await page.keyboard.type(value);
  await page.keyboard.press('Enter');
}

test('remote mode: the cap is set in Settings, kept, used from the next start; the studio’s own count goes to 0 and nothing more is sent', async ({
  page,
}) => {
  test.setTimeout(360_000); // three studio starts on a shared machine
  const { apiKey } = service.createAccount({
    email: 'operator@ref.test',
    diamonds: 100,
    dailyCap: 500,
  });
  let studio = await restartStudio(apiKey);
  await page.goto(studio.url);
  await expect(page.getByRole('note', { name: 'Preview mode' })).toHaveCount(0); // a remote service is not a preview

  // Settings: the default cap, a refusal in words, then a saved cap that survives a reload.
  await openScreen(page, 'Settings');
  await expect(capField(page)).toHaveValue('500');
  await expect(page.getByTestId('daily-cap-in-use')).toHaveText('500 a day');
  for (const bad of ['0', 'twelve', '2.5']) {
    await saveCap(page, bad);
    await expect(page.getByRole('alert')).toHaveText(
      'The daily cap is a whole number of requests from 1 to 100,000,000.',
    );
    await expect(capField(page)).toHaveAttribute('aria-invalid', 'true');
  }
  await checkScreen(page, 'settings-daily-cap-refused');
  // The server refuses the same way when the form is bypassed.
  const refused = await fetch(`${studio.url}/api/settings`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ dailyCap: -3 }),
  });
  expect(refused.status).toBe(400);
  expect(((await refused.json()) as { error: { message: string } }).error.message).toBe(
    'The daily cap is a whole number of requests from 1 to 100,000,000.',
  );
  expect(fs.existsSync(path.join(root, 'data', 'studio-settings.json'))).toBe(false);

  await saveCap(page, '60');
  await expect(
    page.getByText('Daily cap saved: 60 requests a day, used when the studio is started again.'),
  ).toBeVisible();
  await page.reload();
  await openScreen(page, 'Settings');
  await expect(capField(page)).toHaveValue('60');
  await expect(page.getByTestId('daily-cap-in-use')).toHaveText('500 a day'); // until the next start

  // Next start: the saved cap is the one in use, and the board counts against it.
  studio = await restartStudio(apiKey);
  await page.goto(studio.url);
  await openScreen(page, 'Settings');
  await expect(page.getByTestId('daily-cap-in-use')).toHaveText('60 a day');
  await checkScreen(page, 'settings-daily-cap');

  const hot = path.join(root, 'remote-cutouts');
  fs.mkdirSync(hot);
  await openScreen(page, 'Hot folders');
  await addFolder(page, hot, `${hot}-export`, async () => {
    const tool = page.getByRole('combobox', { name: 'Tool', exact: true });
    await tabTo(page, tool);
    await tool.selectOption('remove_background');
  });
  // Paused while the photos arrive, so the figure is read before any of them is sent.
  await command(studio.url, 'queue.pause', { paused: true });
  drop(garments(2, 30), hot);
  await expect.poll(async () => (await queueItems(studio)).length, { timeout: 30_000 }).toBe(2);
  await page.reload(); // the pause was made through the contract: the board reads it at load
  await openScreen(page, 'Batch');
  await expect(requestsLeft(page)).toHaveText(/^\d+ of 60$/);
  const before = Number((await requestsLeft(page).innerText()).split(' of ')[0]);
  await tabTo(page, page.getByRole('button', { name: 'Resume all' }));
  await page.keyboard.press('Enter');
  await expect(page.locator('tr[data-state="review"]')).toHaveCount(2, { timeout: 120_000 });
  // Went down as the photos were sent (the board hears of each charge), counted by the studio itself.
  await expect
    .poll(async () => Number((await requestsLeft(page).innerText()).split(' of ')[0]))
    .toBeLessThan(before);
  // The studio's count is the service's own count of this key's requests (the page's own
  // account read included): the figure is 60 minus what the service saw.
  await page.reload();
  await openScreen(page, 'Batch');
  const used = service.requestsToday(apiKey);
  expect(used).toBeGreaterThan(4); // two uploads, two creates, polls...
  await expect(requestsLeft(page)).toHaveText(`${60 - used} of 60`);
  await checkScreen(page, 'batch-remote-requests-left');

  // A cap already used up (saved as today's count) reaches 0 at the next start.
  await openScreen(page, 'Settings');
  await saveCap(page, String(used));
  await expect(page.getByText(`Daily cap saved: ${used} requests a day`)).toBeVisible();
  studio = await restartStudio(apiKey);
  await page.goto(studio.url);
  await openScreen(page, 'Batch');
  await expect(requestsLeft(page)).toHaveText(`0 of ${used}`);

  drop(garments(1, 32), hot);
  const waiting = page.locator('tr[data-state="queued"]');
  await expect(waiting).toHaveCount(1, { timeout: 30_000 });
  await expect(waiting).toContainText('Daily request cap reached: resumes at the next UTC day.');
  await expect(requestsLeft(page)).toHaveText(`0 of ${used}`);
  await expect(page.getByText('no cap')).toHaveCount(0);
  await expect(
    page
      .getByRole('group', { name: 'Budget' })
      .locator('.stat', { hasText: 'ETA' })
      .locator('strong'),
  ).toHaveText('after 00:00 UTC (daily cap)');
  await checkScreen(page, 'batch-remote-cap-reached');
  // Nothing more went out: the service's count and the balance stand still while the photo waits.
  const balance = service.balance('operator@ref.test');
  await page.waitForTimeout(3000);
  expect(service.requestsToday(apiKey)).toBe(used);
  expect(service.balance('operator@ref.test')).toBe(balance);
  expect((await queueItems(studio)).find((i) => i.state === 'queued')?.waitReason).toBe(
    'daily_cap',
  );
});
