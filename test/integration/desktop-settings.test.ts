/**
 * The desktop settings file: secrets only ever stored encrypted (here with a real AES-GCM
 * cipher standing where Electron's safeStorage stands in the app), refused without a keychain,
 * damaged files falling back to the embedded default, updates validated by the shared schema.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readSettings, settingsView, updateSettings, type Cipher } from '../../src/main/settings';
import { DesktopSettingsUpdateSchema } from '../../src/shared/desktop-settings';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-settings-'));
  dirs.push(dir);
  return dir;
};

function aesCipher(key = randomBytes(32), available = true): Cipher {
  return {
    available: () => available,
    encrypt(text) {
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([c.update(text, 'utf8'), c.final()]);
      return Buffer.concat([iv, c.getAuthTag(), body]);
    },
    decrypt(data) {
      const d = createDecipheriv('aes-256-gcm', key, data.subarray(0, 12));
      d.setAuthTag(data.subarray(12, 28));
      return Buffer.concat([d.update(data.subarray(28)), d.final()]).toString('utf8');
    },
  };
}

const FAL = 'fal-key-0123456789abcdef';
const REMOTE = 'ds_live_remote_key_123456';

describe('desktop settings', () => {
  it('starts embedded; stores provider keys and a remote key encrypted, never in plain text', async () => {
    const dir = tempDir();
    const cipher = aesCipher();
    expect(readSettings(dir, cipher)).toEqual({ mode: 'embedded', providerKeys: {} });

    const afterKeys = await updateSettings(dir, cipher, { providerKeys: { fal: FAL } });
    expect(afterKeys).toEqual({
      mode: 'embedded',
      baseUrl: null,
      encryptionAvailable: true,
      providerKeys: { fal: true, openai: false },
      dailyCap: null,
      aiProviderFromEnvironment: expect.any(Boolean),
    });
    await updateSettings(dir, cipher, {
      mode: 'remote',
      baseUrl: 'https://shoot.example.com',
      apiKey: REMOTE,
    });

    const text = fs.readFileSync(path.join(dir, 'settings.json'), 'utf8');
    expect(text).not.toContain(FAL);
    expect(text).not.toContain(REMOTE);
    expect(fs.statSync(path.join(dir, 'settings.json')).mode & 0o077).toBe(0);
    expect(readSettings(dir, cipher)).toEqual({
      mode: 'remote',
      baseUrl: 'https://shoot.example.com',
      apiKey: REMOTE,
      providerKeys: { fal: FAL },
    });

    // Switching back keeps the provider keys; forgetting one removes it.
    await updateSettings(dir, cipher, { mode: 'embedded' });
    expect(readSettings(dir, cipher)).toEqual({ mode: 'embedded', providerKeys: { fal: FAL } });
    await updateSettings(dir, cipher, { providerKeys: { fal: null } });
    expect(readSettings(dir, cipher).providerKeys).toEqual({});
    expect(settingsView(dir, cipher).baseUrl).toBe('https://shoot.example.com');
  });

  it("cleans temps a crash left mid-write (this build's and the older settings.json.<pid>.tmp) at the next save", async () => {
    const dir = tempDir();
    const cipher = aesCipher();
    const left = ['settings.json.4242.tmp', '.settings.json.0123456789ab.tmp'];
    for (const name of left) fs.writeFileSync(path.join(dir, name), '{"mode": "rem');
    fs.writeFileSync(path.join(dir, 'notes.tmp'), 'not ours');
    await updateSettings(dir, cipher, { providerKeys: { fal: FAL } });
    expect(fs.readdirSync(dir).sort()).toEqual(['notes.tmp', 'settings.json']);
    expect(readSettings(dir, cipher).providerKeys).toEqual({ fal: FAL });
  });

  it('refuses to store a secret without a keychain, and leaves the file as it was', async () => {
    const dir = tempDir();
    const none = aesCipher(undefined, false);
    await expect(
      updateSettings(dir, none, { providerKeys: { openai: 'sk-test-123456789' } }),
    ).rejects.toThrow(/no keychain/);
    expect(fs.existsSync(path.join(dir, 'settings.json'))).toBe(false);
    expect(settingsView(dir, none).encryptionAvailable).toBe(false);
  });

  it('falls back to the embedded default on a damaged file or keys sealed by another machine', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'settings.json'), '{"mode": "remote", ');
    expect(readSettings(dir, aesCipher())).toEqual({ mode: 'embedded', providerKeys: {} });

    await updateSettings(dir, aesCipher(Buffer.alloc(32, 1)), {
      mode: 'remote',
      baseUrl: 'https://shoot.example.com',
      apiKey: REMOTE,
    });
    expect(readSettings(dir, aesCipher(Buffer.alloc(32, 2)))).toEqual({
      mode: 'embedded',
      providerKeys: {},
    });
  });

  it('validates updates from the window: only known shapes, real URLs, non-trivial keys', () => {
    expect(
      DesktopSettingsUpdateSchema.safeParse({
        mode: 'remote',
        baseUrl: 'file:///etc/passwd',
        apiKey: REMOTE,
      }).success,
    ).toBe(false);
    expect(
      DesktopSettingsUpdateSchema.safeParse({
        mode: 'remote',
        baseUrl: 'https://x.example',
        apiKey: 'short',
      }).success,
    ).toBe(false);
    expect(
      DesktopSettingsUpdateSchema.safeParse({ providerKeys: { other: 'abcdefghijk' } }).success,
    ).toBe(false);
    expect(DesktopSettingsUpdateSchema.safeParse({ mode: 'embedded', extra: true }).success).toBe(
      false,
    );
    expect(
      DesktopSettingsUpdateSchema.safeParse({ providerKeys: { fal: FAL, openai: null } }).success,
    ).toBe(true);
  });
});
