/**
 * AI provider keys held outside the core's providers.json (the desktop app keeps them sealed in
 * the system keychain and hands them to the engine process at start). One schema: the engine
 * message validates with it and the core's provider config takes its type.
 */
import { z } from 'zod';

const Secret = z.string().min(1).max(500);

export const ProviderKeysSchema = z.strictObject({
  fal: Secret.optional(),
  openai: Secret.optional(),
});
export type ProviderKeys = z.infer<typeof ProviderKeysSchema>;
