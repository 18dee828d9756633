/**
 * The desktop shell itself: launch, window, an IPC round trip through the preload bridge, the
 * CSP and the hardening. Runs under xvfb-run where an Electron binary exists; skips with the
 * reason where it does not (these machines cannot download it).
 */
import { _electron as electron, expect, test } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type {} from '../../src/renderer/src/transport'; // window.dropshoot's type
import { electronBinary, NO_ELECTRON_REASON } from '../electron-binary';

const binary = electronBinary();
if (!binary) console.log(`skipping the Electron shell test: ${NO_ELECTRON_REASON}`);

test('launches hardened, answers the studio contract over IPC', async () => {
  test.skip(!binary, NO_ELECTRON_REASON);
  const userData = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-electron-'));
  const app = await electron.launch({
    executablePath: binary!,
    args: [
      path.resolve(import.meta.dirname, '../..'),
      `--user-data-dir=${userData}`,
      '--no-sandbox',
    ],
  });
  try {
    const page = await app.firstWindow();
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Hot folders');
    const csp = await page
      .locator('meta[http-equiv="Content-Security-Policy"]')
      .getAttribute('content');
    expect(csp).toContain("default-src 'self'");
    const folders = await page.evaluate(() => window.dropshoot!.call('folders.list', {}));
    expect(folders).toEqual({ ok: true, result: [] });
    const bad = await page.evaluate(() =>
      window.dropshoot!.call('folders.remove', { id: '../etc' }),
    );
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    expect(
      await page.evaluate(() => typeof (window as unknown as { require?: unknown }).require),
    ).toBe('undefined');
    const prefs = await app.evaluate(({ BrowserWindow }) =>
      (
        BrowserWindow.getAllWindows()[0]!.webContents as unknown as {
          getLastWebPreferences(): object;
        }
      ).getLastWebPreferences(),
    );
    expect(prefs).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false });
  } finally {
    await app.close();
    fs.rmSync(userData, { recursive: true, force: true });
  }
});
