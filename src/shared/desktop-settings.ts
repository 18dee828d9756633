/**
 * What the desktop app's Settings screen may change, validated in main: which service to use
 * and the AI provider keys of the embedded core. Secrets go one way only (renderer to main); the
 * view sent back says whether a key is stored, never the key.
 */
import { z } from 'zod';
import { DailyCapSchema } from './studio-settings';

const Secret = z.string().trim().min(8, 'a key is at least 8 characters').max(500);

/** A provider key to store, null to forget it, absent to keep what is stored. */
export const ProviderKeysUpdateSchema = z.strictObject({
  fal: Secret.nullable().optional(),
  openai: Secret.nullable().optional(),
});
export type ProviderKeysUpdate = z.infer<typeof ProviderKeysUpdateSchema>;

/**
 * Switch to the embedded core, switch to a remote service, change only the provider keys, or
 * only the daily request cap.
 */
export const DesktopSettingsUpdateSchema = z.union([
  z.strictObject({ mode: z.literal('embedded') }),
  z.strictObject({
    mode: z.literal('remote'),
    baseUrl: z.url({ protocol: /^https?$/ }),
    apiKey: Secret,
  }),
  z.strictObject({ providerKeys: ProviderKeysUpdateSchema }),
  z.strictObject({ dailyCap: DailyCapSchema }),
]);
export type DesktopSettingsUpdate = z.infer<typeof DesktopSettingsUpdateSchema>;

export type DesktopSettingsView = {
  mode: 'embedded' | 'remote';
  baseUrl: string | null;
  /** Whether the operating system's keychain can protect keys; nothing secret is saved without it. */
  encryptionAvailable: boolean;
  providerKeys: { fal: boolean; openai: boolean };
  /** The saved daily request cap (null: the engine's default). */
  dailyCap: number | null;
  /** DROPSHOOT_* provider variables the engine process inherits (README "providers"). */
  aiProviderFromEnvironment: boolean;
};
