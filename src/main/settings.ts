/**
 * Desktop settings in `<userData>/settings.json`: embedded or remote service, and the embedded
 * core's AI provider keys. Every secret is encrypted with the operating system's keychain (a
 * `Cipher` over Electron's safeStorage) and never written in plain text; without a keychain,
 * secrets are refused rather than stored weakly. No Electron import here, so it runs in tests.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { sweepStaleTemps, writeFileAtomic } from '../infra/atomic-write';
import type { DesktopSettingsUpdate, DesktopSettingsView } from '../shared/desktop-settings';
import type { ProviderKeys } from '../shared/engine-process';
import { aiProviderInEnvironment, DailyCapSchema } from '../shared/studio-settings';

export type Cipher = {
  available(): boolean;
  encrypt(text: string): Buffer;
  decrypt(data: Buffer): string;
};

const Encrypted = z.string().min(1); // base64 of Cipher.encrypt(secret)
const SettingsFileSchema = z.object({
  mode: z.enum(['embedded', 'remote']).default('embedded'),
  baseUrl: z.url().optional(),
  encryptedKey: Encrypted.optional(),
  encryptedProviderKeys: z
    .object({ fal: Encrypted.optional(), openai: Encrypted.optional() })
    .default({}),
  // An out-of-range cap in a hand-edited file is dropped, not fatal: the engine's default applies.
  dailyCap: DailyCapSchema.optional().catch(undefined),
});
type SettingsFile = z.infer<typeof SettingsFileSchema>;

export type { ProviderKeys };
export type DesktopSettings = (
  | { mode: 'embedded'; providerKeys: ProviderKeys }
  | { mode: 'remote'; baseUrl: string; apiKey: string; providerKeys: ProviderKeys }
) & { dailyCap?: number };

const fileOf = (dir: string) => path.join(dir, 'settings.json');
const OLD_TEMP = /^settings\.json\.\d+\.tmp$/;

function readFile(dir: string): SettingsFile {
  const file = fileOf(dir);
  if (!fs.existsSync(file)) return SettingsFileSchema.parse({});
  try {
    const parsed = SettingsFileSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : SettingsFileSchema.parse({});
  } catch {
    // A damaged file must not keep the app from opening: start on the embedded default.
    return SettingsFileSchema.parse({});
  }
}

function decrypt(cipher: Cipher, value: string | undefined): string | undefined {
  if (!value || !cipher.available()) return undefined;
  try {
    return cipher.decrypt(Buffer.from(value, 'base64'));
  } catch {
    return undefined; // encrypted by another user or machine: as good as absent
  }
}

/** The settings with secrets decrypted; anything unreadable falls back to the embedded default. */
export function readSettings(dir: string, cipher: Cipher): DesktopSettings {
  return settingsOf(readFile(dir), cipher);
}

function settingsOf(file: SettingsFile, cipher: Cipher): DesktopSettings {
  const providerKeys: ProviderKeys = {};
  const fal = decrypt(cipher, file.encryptedProviderKeys.fal);
  const openai = decrypt(cipher, file.encryptedProviderKeys.openai);
  if (fal) providerKeys.fal = fal;
  if (openai) providerKeys.openai = openai;
  const apiKey = decrypt(cipher, file.encryptedKey);
  const cap = file.dailyCap !== undefined ? { dailyCap: file.dailyCap } : {};
  if (file.mode === 'remote' && file.baseUrl && apiKey)
    return { mode: 'remote', baseUrl: file.baseUrl, apiKey, providerKeys, ...cap };
  return { mode: 'embedded', providerKeys, ...cap };
}

export function settingsView(
  dir: string,
  cipher: Cipher,
  env: NodeJS.ProcessEnv = process.env,
): DesktopSettingsView {
  return viewOf(readFile(dir), cipher, env);
}

function viewOf(
  file: SettingsFile,
  cipher: Cipher,
  env: NodeJS.ProcessEnv = process.env,
): DesktopSettingsView {
  const settings = settingsOf(file, cipher);
  return {
    mode: settings.mode,
    baseUrl: file.baseUrl ?? null,
    encryptionAvailable: cipher.available(),
    providerKeys: {
      fal: Boolean(settings.providerKeys.fal),
      openai: Boolean(settings.providerKeys.openai),
    },
    dailyCap: file.dailyCap ?? null,
    // The engine process inherits main's environment, where DROPSHOOT_* providers are read.
    aiProviderFromEnvironment: aiProviderInEnvironment(env),
  };
}

/** Applies a validated update (secrets encrypted) and writes the file atomically, owner-only. */
export async function updateSettings(
  dir: string,
  cipher: Cipher,
  update: DesktopSettingsUpdate,
): Promise<DesktopSettingsView> {
  const file = readFile(dir);
  const encrypt = (secret: string) => {
    if (!cipher.available())
      throw new Error(
        'This computer offers no keychain to protect keys, so Dropshoot will not save them. Start Dropshoot with DROPSHOOT_* variables instead.',
      );
    return cipher.encrypt(secret).toString('base64');
  };
  const next: SettingsFile = { ...file, encryptedProviderKeys: { ...file.encryptedProviderKeys } };
  if ('providerKeys' in update) {
    for (const name of ['fal', 'openai'] as const) {
      const value = update.providerKeys[name];
      if (value === null) delete next.encryptedProviderKeys[name];
      else if (value !== undefined) next.encryptedProviderKeys[name] = encrypt(value);
    }
  } else if ('dailyCap' in update) {
    next.dailyCap = update.dailyCap;
  } else if (update.mode === 'remote') {
    next.mode = 'remote';
    next.baseUrl = update.baseUrl;
    next.encryptedKey = encrypt(update.apiKey);
  } else {
    next.mode = 'embedded';
  }
  // Temps left by a crash of builds before the shared helper (`settings.json.<pid>.tmp`) go too.
  await sweepStaleTemps(dir, OLD_TEMP);
  await writeFileAtomic(fileOf(dir), JSON.stringify(next, null, 2), 'overwrite', { mode: 0o600 });
  return viewOf(next, cipher);
}
