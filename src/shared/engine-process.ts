/**
 * The messages between a shell (Electron main, a test) and the studio engine running in its own
 * process. The studio contract's commands and events travel inside them unchanged; the few host
 * requests (`sourcePath`, `media`, `busy`) serve the desktop shell's `dropshoot://` images and its
 * updater. Secrets (an API key, provider keys) travel only in the `start` message, never in argv
 * or the environment. Both sides validate what they receive with these schemas.
 */
import { z } from 'zod';
import { ProviderKeysSchema } from './provider-keys';
import type { StudioError, StudioEventName } from './studio';

export { ProviderKeysSchema, type ProviderKeys } from './provider-keys';

const Secret = z.string().min(1).max(500);

/** A URL of one of `schemes` (lower-case, with their colon); its full check is where it is opened. */
const urlOf = (schemes: readonly string[], example: string) =>
  z
    .string()
    .trim()
    .min(1)
    .max(4096)
    .refine((text) => {
      try {
        return schemes.includes(new URL(text).protocol.toLowerCase());
      } catch {
        return false;
      }
    }, `expected ${example}`);

/**
 * Where the embedded core keeps its rows and files when not under the data folder (team mode,
 * issue 14), as `serve` takes them: `--database` / DROPSHOOT_DATABASE_URL and `--blobs` /
 * DROPSHOOT_BLOBS_URL. Absent: SQLite and files under `<data>/core/`. The database URL may carry
 * a password: like the keys, it travels only in the `start` message.
 */
export const EmbeddedStorageSchema = z.strictObject({
  databaseUrl: urlOf(
    ['postgres:', 'postgresql:'],
    'postgres://user:password@host:5432/db',
  ).optional(),
  blobsUrl: urlOf(['s3:'], 's3://bucket?endpoint=…&region=…').optional(),
});
export type EmbeddedStorage = z.infer<typeof EmbeddedStorageSchema>;

/** Which service the engine talks to: the embedded core (in the engine's process) or a remote /v1. */
export const EngineServiceSchema = z.discriminatedUnion('mode', [
  z.strictObject({
    mode: z.literal('embedded'),
    /** The catalog's folder when it is not the source tree's (the packaged app's resources). */
    catalogDir: z.string().min(1).optional(),
    providerKeys: ProviderKeysSchema.default({}),
    /** PostgreSQL and a bucket instead of the data folder (the CLI's --database / --blobs). */
    storage: EmbeddedStorageSchema.optional(),
  }),
  z.strictObject({
    mode: z.literal('remote'),
    baseUrl: z.url({ protocol: /^https?$/ }),
    apiKey: Secret,
  }),
]);
export type EngineService = z.infer<typeof EngineServiceSchema>;

export const EngineStartSchema = z.strictObject({
  dataDir: z.string().min(1),
  service: EngineServiceSchema,
  /** How long a hot-folder file must keep its size before it is taken (tests shorten it). */
  settleMs: z.number().int().min(0).optional(),
  /** The key's daily request cap (the API does not report it; remote default 500). */
  dailyCap: z.number().int().min(1).max(100_000_000).optional(),
});
export type EngineStart = z.infer<typeof EngineStartSchema>;

const RequestId = z.number().int().min(0);

export const ToEngineSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('start'), config: EngineStartSchema }),
  z.strictObject({
    type: z.literal('call'),
    id: RequestId,
    name: z.string().max(200),
    args: z.unknown(),
  }),
  z.strictObject({
    type: z.literal('sourcePath'),
    id: RequestId,
    itemId: z.string().min(1).max(200),
  }),
  z.strictObject({ type: z.literal('media'), id: RequestId, url: z.string().min(1).max(8192) }),
  z.strictObject({ type: z.literal('busy'), id: RequestId }),
  z.strictObject({ type: z.literal('stop') }),
]);
export type ToEngine = z.infer<typeof ToEngineSchema>;
export type EngineRequest = Extract<ToEngine, { id: number }>;

const ErrorSchema = z.strictObject({
  code: z.string(),
  message: z.string(),
}) satisfies z.ZodType<StudioError>;
export const OutcomeSchema = z.discriminatedUnion('ok', [
  z.strictObject({ ok: z.literal(true), result: z.unknown() }),
  z.strictObject({ ok: z.literal(false), error: ErrorSchema }),
]);
/** A command's answer as every transport gives it: a result, or an error coerced to `{code, message}`. */
export type Outcome = z.infer<typeof OutcomeSchema>;

/** Every studio event is relayed; the compiler asks for a new event's entry here. */
const RELAYED_EVENTS: Record<StudioEventName, true> = {
  'item.changed': true,
  'result.added': true,
  'result.changed': true,
  'budget.changed': true,
  'folder.changed': true,
  'batch.finished': true,
};
export const STUDIO_EVENT_NAMES = Object.keys(RELAYED_EVENTS) as StudioEventName[];

export const FromEngineSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('ready'), libraryRoot: z.string() }),
  z.strictObject({ type: z.literal('startFailed'), message: z.string() }),
  z.strictObject({ type: z.literal('reply'), id: RequestId, outcome: OutcomeSchema }),
  z.strictObject({
    type: z.literal('event'),
    event: z.strictObject({
      type: z.enum(STUDIO_EVENT_NAMES as [StudioEventName, ...StudioEventName[]]),
      data: z.unknown(),
    }),
  }),
  z.strictObject({ type: z.literal('stopped') }),
]);
export type FromEngine = z.infer<typeof FromEngineSchema>;

/** A downloaded catalog image, the `media` request's result. */
export type EngineMedia = { data: Uint8Array; mime: string };
