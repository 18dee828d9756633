/** Shared steps of the operator flows: keyboard navigation, screenshots with axe, real photos. */
import AxeBuilder from '@axe-core/playwright';
import { expect, type Locator, type Page } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import type { ItemView } from '../../src/shared/studio';

const repo = path.resolve(import.meta.dirname, '../..');
/** Real garment photos for measuring (never copied into the repo): dropped into hot folders only. */
export const GARMENTS = path.resolve(
  process.env.DROPSHOOT_EVAL_DIR ?? path.join(repo, '../shared/eval'),
  'garments',
);
export const hasGarments = fs.existsSync(GARMENTS);
/** `scripts/screens.ts` sets this to docs/screens; test runs keep theirs under test-results. */
const SHOTS = process.env.DROPSHOOT_SCREENS_DIR ?? path.join(repo, 'test-results/screens');

export function garments(count: number, skip = 0): string[] {
  return fs
    .readdirSync(GARMENTS)
    .filter((f) => /\.jpe?g$/i.test(f))
    .sort()
    .slice(skip, skip + count)
    .map((f) => path.join(GARMENTS, f));
}

/** Drops files into a hot folder the way a copy does (write to the final name). */
export function drop(files: string[], dir: string): string[] {
  fs.mkdirSync(dir, { recursive: true });
  return files.map((file) => {
    const target = path.join(dir, path.basename(file));
    fs.copyFileSync(file, target);
    return target;
  });
}

/** Presses Tab until `target` has focus: proof that it is reachable without a mouse. */
export async function tabTo(page: Page, target: Locator, maxPresses = 120): Promise<void> {
  for (let i = 0; i < maxPresses; i++) {
    if (await target.evaluate((el) => el === document.activeElement).catch(() => false)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`could not reach ${target.toString()} with Tab`);
}

export async function isFocused(target: Locator): Promise<boolean> {
  return target.evaluate((el) => el === document.activeElement);
}

/** A screenshot (docs/screens when regenerating) and no serious or critical axe violation. */
export async function checkScreen(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: false });
  const { violations } = await new AxeBuilder({ page }).analyze();
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(
    serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`),
    `${name} accessibility`,
  ).toEqual([]);
}

export async function openScreen(page: Page, name: string): Promise<void> {
  const button = page
    .getByRole('navigation', { name: 'Screens' })
    .getByRole('button', { name: new RegExp(`^${name}`) });
  await tabTo(page, button);
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(name);
}

/** Opens the add-folder form by keyboard; focus lands in its first field. */
export async function openAddFolder(page: Page): Promise<void> {
  await tabTo(page, page.getByRole('button', { name: 'Add folder' }));
  await page.keyboard.press('Enter');
  await expect(page.getByLabel('Folder to watch')).toBeFocused();
}

/** Adds a hot folder with the default recipe (or after `setUp` changed it), by keyboard. */
export async function addFolder(
  page: Page,
  hot: string,
  out: string,
  setUp?: () => Promise<void>,
): Promise<void> {
  await openAddFolder(page);
  await page.keyboard.type(hot);
  await tabTo(page, page.getByLabel('Output folder'));
  await page.keyboard.type(out);
  if (setUp) await setUp();
  await expect(page.getByText('Recipe is valid.')).toBeVisible();
  await tabTo(page, page.getByRole('button', { name: 'Start watching' }));
  await page.keyboard.press('Enter');
  await expect(page.getByRole('listitem', { name: `Folder ${path.basename(hot)}` })).toBeVisible();
}

/** Calls the studio contract directly: for asserting what the store says, never to drive the UI. */
export async function command<T>(url: string, name: string, args: object = {}): Promise<T> {
  const response = await fetch(`${url}/api/command/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(args),
  });
  const outcome = (await response.json()) as
    { ok: true; result: T } | { ok: false; error: { message: string } };
  if (!outcome.ok) throw new Error(outcome.error.message);
  return outcome.result;
}

/** The studio's queue as its store has it. */
export async function queueItems(studio: { url: string }): Promise<ItemView[]> {
  return (await command<{ items: ItemView[] }>(studio.url, 'queue.list', {})).items;
}

export function filesIn(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[])
    .filter((f) => fs.statSync(path.join(dir, f)).isFile())
    .sort();
}
