/**
 * Issue 12, item 9 (what counts as preview mode): AI providers set by environment variables
 * (README "providers": DROPSHOOT_FAL_KEY, DROPSHOOT_OPENAI_KEY, DROPSHOOT_ROUTE_<TOOL>) are seen
 * by the studio, so the preview banner does not claim offline previews; a route to the local
 * adapter alone is still preview mode. (A plain embedded start says preview: recipe-builder.spec.)
 */
import { expect, test } from './fixtures';
import { checkScreen, openScreen } from './helpers';
import { startStudio, type RunningStudio } from './studio';

const started: RunningStudio[] = [];
test.afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
});

async function studioWith(env: Record<string, string>): Promise<RunningStudio> {
  const studio = await startStudio({ env });
  started.push(studio);
  return studio;
}

test('a provider key in the environment: no preview banner, and Settings says where the provider comes from', async ({
  page,
}) => {
  const studio = await studioWith({
    DROPSHOOT_FAL_KEY: 'fal-e2e-key-not-real-0123',
    DROPSHOOT_ROUTE_REMOVE_BACKGROUND: 'fal',
  });
  await page.goto(studio.url);
  await expect(page.getByRole('navigation', { name: 'Screens' })).toBeVisible();
  await openScreen(page, 'Batch');
  await openScreen(page, 'Hot folders');
  await expect(page.getByRole('note', { name: 'Preview mode' })).toHaveCount(0);
  await openScreen(page, 'Settings');
  await expect(page.getByRole('note', { name: 'AI providers' })).toContainText(
    'DROPSHOOT_* variables',
  );
  await expect(page.getByRole('note', { name: 'About preview mode' })).toHaveCount(0);
  await checkScreen(page, 'settings-providers-from-environment');
  // The key itself never reaches the page.
  expect(await page.content()).not.toContain('fal-e2e-key-not-real-0123');
});

test('a route to the local adapter alone is still preview mode', async ({ page }) => {
  const studio = await studioWith({ DROPSHOOT_ROUTE_PHOTO_EDIT: 'local' });
  await page.goto(studio.url);
  await expect(page.getByRole('note', { name: 'Preview mode' })).toContainText('offline previews');
});
