/**
 * The settings an operator changes from the Settings screen in either shell (the desktop app's
 * keychain-backed settings, or the headless studio's settings file): the daily request cap, and
 * whether AI providers are configured by environment variables (which a browser cannot see).
 * Both shells validate with these schemas, so the screen and the engine read the same sentences.
 */
import { z } from 'zod';

/** The engine's cap when none is configured and a remote service is used (the brief's default). */
export const DEFAULT_DAILY_CAP = 500;
export const MAX_DAILY_CAP = 100_000_000;

export const DAILY_CAP_SENTENCE = `The daily cap is a whole number of requests from 1 to ${MAX_DAILY_CAP.toLocaleString('en')}.`;

/** Requests per key and UTC day; every refusal reads as one sentence. */
export const DailyCapSchema = z
  .number({ error: DAILY_CAP_SENTENCE })
  .int({ error: DAILY_CAP_SENTENCE })
  .min(1, { error: DAILY_CAP_SENTENCE })
  .max(MAX_DAILY_CAP, { error: DAILY_CAP_SENTENCE });

/** What the form sends: the cap to use from the next start. */
export const StudioSettingsUpdateSchema = z.strictObject({ dailyCap: DailyCapSchema });
export type StudioSettingsUpdate = z.infer<typeof StudioSettingsUpdateSchema>;

export type StudioSettingsView = {
  /** The saved cap (null: none saved, the engine's default applies). */
  dailyCap: number | null;
  /** The cap given on the command line, which wins over the saved one (headless studio only). */
  dailyCapFromFlag: number | null;
  /** An AI provider key or route is set in the engine's environment: results are not previews. */
  aiProviderFromEnvironment: boolean;
};

/** The text of a field as a cap, or the sentence saying why it is not one. */
export function parseDailyCap(
  text: string,
): { ok: true; value: number } | { ok: false; message: string } {
  const trimmed = text.trim();
  const parsed = DailyCapSchema.safeParse(/^\d+$/.test(trimmed) ? Number(trimmed) : Number.NaN);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, message: DAILY_CAP_SENTENCE };
}

const PROVIDER_KEYS = ['DROPSHOOT_FAL_KEY', 'DROPSHOOT_OPENAI_KEY'] as const;
const ROUTE = /^DROPSHOOT_ROUTE_[A-Z_]+$/;

/**
 * Whether the embedded core will find an AI provider in this environment (README "providers"):
 * a provider key, or a route to an adapter other than the local one. Values are never returned.
 */
export function aiProviderInEnvironment(
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  if (PROVIDER_KEYS.some((name) => Boolean(env[name]?.trim()))) return true;
  return Object.entries(env).some(
    ([name, value]) =>
      ROUTE.test(name) && Boolean(value) && value!.split(':')[0]!.trim() !== 'local',
  );
}
