/**
 * Desktop settings: embedded or remote service. The remote API key is encrypted with the
 * operating system's keychain through safeStorage and never written in plain text.
 */
import fs from 'node:fs';
import path from 'node:path';
import { safeStorage } from 'electron';
import { z } from 'zod';

const SettingsFileSchema = z.object({
  mode: z.enum(['embedded', 'remote']).default('embedded'),
  baseUrl: z.url().optional(),
  /** base64 of safeStorage.encryptString(apiKey) */
  encryptedKey: z.string().optional(),
});
export type DesktopSettings = { mode: 'embedded' } | { mode: 'remote'; baseUrl: string; apiKey: string };

export function readSettings(dir: string): DesktopSettings {
  const file = path.join(dir, 'settings.json');
  if (!fs.existsSync(file)) return { mode: 'embedded' };
  const parsed = SettingsFileSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
  if (!parsed.success || parsed.data.mode === 'embedded' || !parsed.data.baseUrl || !parsed.data.encryptedKey) return { mode: 'embedded' };
  if (!safeStorage.isEncryptionAvailable()) return { mode: 'embedded' };
  const apiKey = safeStorage.decryptString(Buffer.from(parsed.data.encryptedKey, 'base64'));
  return { mode: 'remote', baseUrl: parsed.data.baseUrl, apiKey };
}

export function writeSettings(dir: string, settings: DesktopSettings): void {
  const body =
    settings.mode === 'embedded'
      ? { mode: 'embedded' }
      : { mode: 'remote', baseUrl: settings.baseUrl, encryptedKey: safeStorage.encryptString(settings.apiKey).toString('base64') };
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'settings.json'), JSON.stringify(body, null, 2), { mode: 0o600 });
}
