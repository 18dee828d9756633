/**
 * The daily cap saved from Settings, on disk: the desktop app's settings.json (given to the engine
 * at start) and the headless studio's studio-settings.json (read by `dropshoot studio`). Refused
 * caps change nothing; a hand-damaged cap falls back to the engine's default.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readSettings, settingsView, updateSettings, type Cipher } from '../../src/main/settings';
import { DesktopSettingsUpdateSchema } from '../../src/shared/desktop-settings';
import { DAILY_CAP_SENTENCE, StudioSettingsUpdateSchema } from '../../src/shared/studio-settings';
import { readStudioSettings, studioSettingsPort } from '../../src/studio/host/studio-settings-file';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-cap-'));
  dirs.push(dir);
  return dir;
};
/** No secret is saved in these tests; a cipher that is never asked to encrypt. */
const noKeychain: Cipher = {
  available: () => false,
  encrypt: () => {
    throw new Error('not used');
  },
  decrypt: () => {
    throw new Error('not used');
  },
};

describe('desktop settings: daily cap', () => {
  it('is saved without a keychain, read back for the engine and shown in the view; other settings kept', async () => {
    const dir = tempDir();
    expect(settingsView(dir, noKeychain, {}).dailyCap).toBeNull();
    expect(readSettings(dir, noKeychain)).toEqual({ mode: 'embedded', providerKeys: {} });
    const view = await updateSettings(
      dir,
      noKeychain,
      DesktopSettingsUpdateSchema.parse({ dailyCap: 120 }),
    );
    expect(view.dailyCap).toBe(120);
    expect(readSettings(dir, noKeychain)).toEqual({
      mode: 'embedded',
      providerKeys: {},
      dailyCap: 120,
    });
    await updateSettings(dir, noKeychain, { mode: 'embedded' });
    expect(readSettings(dir, noKeychain).dailyCap).toBe(120);
  });

  it('refuses a cap that is not a whole number from 1, with the sentence', () => {
    for (const dailyCap of [0, -1, 2.5, 'ten', 100_000_001]) {
      const parsed = StudioSettingsUpdateSchema.safeParse({ dailyCap });
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.message).toBe(DAILY_CAP_SENTENCE);
      expect(DesktopSettingsUpdateSchema.safeParse({ dailyCap }).success).toBe(false);
    }
  });

  it('a damaged cap in the file is dropped (the engine default applies), the rest of the file kept', () => {
    const dir = tempDir();
    fs.writeFileSync(
      path.join(dir, 'settings.json'),
      JSON.stringify({ mode: 'embedded', dailyCap: -5 }),
    );
    expect(readSettings(dir, noKeychain)).toEqual({ mode: 'embedded', providerKeys: {} });
  });

  it('says when the environment sets an AI provider', () => {
    const dir = tempDir();
    expect(
      settingsView(dir, noKeychain, { DROPSHOOT_OPENAI_KEY: 'sk-test' }).aiProviderFromEnvironment,
    ).toBe(true);
    expect(settingsView(dir, noKeychain, {}).aiProviderFromEnvironment).toBe(false);
  });
});

describe('headless studio settings file', () => {
  it('saves the cap atomically, reads it back, and reports the flag that wins over it', async () => {
    const dir = tempDir();
    const port = studioSettingsPort(dir, { dailyCapFromFlag: 40, env: {} });
    expect(port.get()).toEqual({
      dailyCap: null,
      dailyCapFromFlag: 40,
      aiProviderFromEnvironment: false,
    });
    expect(await port.save({ dailyCap: 75 })).toEqual({
      dailyCap: 75,
      dailyCapFromFlag: 40,
      aiProviderFromEnvironment: false,
    });
    expect(readStudioSettings(dir)).toEqual({ dailyCap: 75 });
    expect(fs.readdirSync(dir)).toEqual(['studio-settings.json']); // no temporary file left
  });

  it('a damaged or hand-broken file never stops a start: the defaults', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'studio-settings.json'), '{ not json');
    expect(readStudioSettings(dir)).toEqual({});
    fs.writeFileSync(path.join(dir, 'studio-settings.json'), JSON.stringify({ dailyCap: 0 }));
    expect(readStudioSettings(dir)).toEqual({});
  });
});
