/** Switches for what a production service may do where the spec is silent or loose. */
import { z } from 'zod';

export const ReferenceServiceOptionsSchema = z.strictObject({
  /** All randomness is seeded (deterministic runs). */
  seed: z.number().int().optional(),
  /** Multiplies job durations (tests use e.g. 0.01). */
  timeScale: z.number().positive().optional(),
  /** Job duration range in seconds before scaling, default [5, 40]. */
  jobSeconds: z.tuple([z.number().nonnegative(), z.number().nonnegative()]).optional(),
  /** Default 'uuid'; never the `prefix_` ids of Dropshoot's own core. */
  idStyle: z.enum(['uuid', 'opaque']).optional(),
  /** Unknown extra fields on every body and entry. */
  extraFields: z.boolean().optional(),
  /** Actual charge = fallbackPriceDiamonds + chargeExtra (per image for packs, per shot for catalog jobs). */
  chargeExtra: z.number().int().nonnegative().optional(),
  /** 'pack': catalog jobs poll as 'pack_processing', end 'pack_completed' / 'pack_failed'. */
  catalogStatus: z.enum(['spec', 'pack']).optional(),
  /** Result URLs on a second loopback port, extension-less, served as application/octet-stream. */
  resultsOnOtherHost: z.boolean().optional(),
  /** Probability that POST /v1/generations charges, then answers 500 and refunds (job failed). */
  fail500AfterCharge: z.number().min(0).max(1).optional(),
  /** The first N generations created fail that way whatever the draw (a test that needs one for sure). */
  fail500AfterChargeFirst: z.number().int().nonnegative().optional(),
  /** Probability that a job ends 'failed' (refunded) with an errorMessage. */
  failJobs: z.number().min(0).max(1).optional(),
  /** Probability that one catalog shot fails. */
  failShots: z.number().min(0).max(1).optional(),
  /** Transient 429 with Retry-After (not the daily cap, not counted). */
  rateLimit: z
    .strictObject({
      probability: z.number().min(0).max(1),
      retryAfterSeconds: z.number().int().nonnegative(),
    })
    .optional(),
  /** Slow answers to creates (after the charge is made). */
  createDelayMs: z.number().int().nonnegative().optional(),
  /** Query name of the ready-template-set cursor (default 'after', not 'cursor'). */
  cursorParam: z.string().min(1).optional(),
  readySetPageSize: z.number().int().positive().optional(),
  /** Default false: the spec does not mention Idempotency-Key. */
  honourIdempotencyKey: z.boolean().optional(),
  /** Persist all state so a restart keeps it. */
  statePath: z.string().optional(),
});
export type ReferenceServiceOptions = z.infer<typeof ReferenceServiceOptionsSchema>;

export const DEFAULTS = {
  seed: 1,
  timeScale: 1,
  jobSeconds: [5, 40] as [number, number],
  idStyle: 'uuid' as const,
  chargeExtra: 0,
  catalogStatus: 'spec' as const,
  cursorParam: 'after',
  readySetPageSize: 5,
  defaultDailyCap: 500,
  uploadBytes: 8 * 1024 * 1024,
  jsonBytes: 2 * 1024 * 1024,
};
