/**
 * The one studio set-up of the operator flows: each spec file gets its own `dropshoot studio` on a
 * fresh data folder (its tests run in order and build on each other's folders), started when the
 * file's first test asks for it and stopped when the next file starts or the worker ends.
 *   import { expect, test } from './fixtures';
 *   test('…', async ({ page, studio }) => { await page.goto(studio.url); … });
 */
import { test as base } from '@playwright/test';
import { startStudio, type RunningStudio } from './studio';

export { expect } from '@playwright/test';
export type { RunningStudio } from './studio';

type FileStudios = { forFile(file: string): Promise<RunningStudio> };

export const test = base.extend<{ studio: RunningStudio }, { fileStudios: FileStudios }>({
  fileStudios: [
    async ({}, use) => {
      const open: { file: string; studio: RunningStudio | null } = { file: '', studio: null };
      await use({
        async forFile(file) {
          if (open.studio && open.file === file) return open.studio;
          const previous = open.studio;
          open.studio = null;
          await previous?.stop();
          open.studio = await startStudio();
          open.file = file;
          return open.studio;
        },
      });
      await open.studio?.stop();
    },
    { scope: 'worker' },
  ],
  // Its own timeout: starting a studio on a loaded machine does not eat into the first test's.
  studio: [
    async ({ fileStudios }, use, testInfo) => {
      await use(await fileStudios.forFile(testInfo.file));
    },
    { timeout: 90_000 },
  ],
});
