/**
 * Whether a service keeps one answer per Idempotency-Key (the spec does not say), learnt per
 * origin and charging endpoint by a replay probe, never from the key's echo: a service may echo
 * the key and still charge a same-key retry anew.
 *
 * The probe sends a key with a body the spec says is refused before any charge (an unknown
 * toolId: 400; an unknown readyTemplateSetId: 404). A service that holds the key's answer replays
 * it (or refuses the key's reuse with another body, 409/422 naming the key); one that does not
 * (or no longer, or never got the first attempt) refuses the body, for free. It is sent only when
 * a create's answer was lost, with that create's own key: it tells whether that very key is held
 * now, which is what a resend needs. A refusal naming the key shows it arrived, not that its
 * answer is stored yet: the resend waits (see the runner).
 */
import { randomUUID } from 'node:crypto';
import type { ServiceClient } from '../client';
import { ApiError } from '../client';
import * as store from './db/store';

/** The writes that charge: only their own answers tell whether a lost one may be sent again. */
export type ChargingEndpoint = 'generations' | 'catalog-jobs';

type DB = Parameters<typeof store.getSetting>[0];

/** No service has a tool or ready set of this name: a create naming it is refused, uncharged. */
export const PROBE_ID = 'dropshoot-key-probe-no-such-id';

// A new name: the 'idempotency:' settings were learnt from the echo, which proves nothing.
const settingOf = (origin: string, endpoint: ChargingEndpoint) =>
  `idempotency-probed:${origin}:${endpoint}`;

/** Whether a probe has shown this endpoint holds answers per key (the embedded core always does). */
export function honoursIdempotency(db: DB, origin: string, endpoint: ChargingEndpoint): boolean {
  if (origin === 'embedded') return true;
  return store.getSetting(db, settingOf(origin, endpoint)) === 'yes';
}

/** A probe found a key held (replayed, or its reuse refused). */
export function learnHonoured(db: DB, origin: string, endpoint: ChargingEndpoint): void {
  store.setSetting(db, settingOf(origin, endpoint), 'yes');
}

export type ProbeAnswer =
  /** The key's stored answer (a 2xx with a job id): the create it answers is the key's own. */
  | { kind: 'replayed'; created: Record<string, unknown>; jobId: string }
  /** The key is remembered: its reuse with another body is refused, or its first is in flight. */
  | { kind: 'remembered'; inFlight: boolean; message: string }
  /** The body was refused: the service keeps no answer under this key (now, or ever). */
  | { kind: 'forgotten'; message: string }
  /** Anything else (down, rate limited, an answer no rule reads): not evidence either way. */
  | { kind: 'unknown'; error: unknown };

/** A create naming what no service has (PROBE_ID), with no images. */
export function probeRequest(endpoint: ChargingEndpoint): Record<string, unknown> {
  // No images either: a second reason to refuse before any charge, should a lenient service not
  // check the id first. templateSetId would supply a toolId of its own (spec 4.8): left out.
  return endpoint === 'generations' ? { toolId: PROBE_ID } : { readyTemplateSetId: PROBE_ID };
}

const jobIdOf = (endpoint: ChargingEndpoint, created: Record<string, unknown>) => {
  const id = endpoint === 'catalog-jobs' ? (created.mediaItemId ?? created.id) : created.id;
  return typeof id === 'string' && id.length > 0 ? id : null;
};

/** One probe of `key` on `endpoint` (counted by the client like any other request). */
export async function probeKey(
  client: ServiceClient,
  endpoint: ChargingEndpoint,
  key: string,
): Promise<ProbeAnswer> {
  const body = probeRequest(endpoint);
  try {
    const created = (
      endpoint === 'generations'
        ? await client.createGeneration(body as Parameters<ServiceClient['createGeneration']>[0], {
            idempotencyKey: key,
          })
        : await client.createCatalogJob(body as Parameters<ServiceClient['createCatalogJob']>[0], {
            idempotencyKey: key,
          })
    ) as Record<string, unknown>;
    const jobId = jobIdOf(endpoint, created);
    return jobId ? { kind: 'replayed', created, jobId } : { kind: 'unknown', error: created };
  } catch (err) {
    return readRefusal(err);
  }
}

/**
 * The same probe under a fresh key never sent: a service that tells keys apart refuses it
 * ('forgotten'). A replay is the key's own answer only then: a cache that answers any refused
 * create with its last charged reply replays under every key, and may name another photo's job
 * before that photo has recorded it (review rev7: replay2).
 */
export function probeFreshKey(
  client: ServiceClient,
  endpoint: ChargingEndpoint,
): Promise<ProbeAnswer> {
  return probeKey(client, endpoint, `dropshoot-control-${randomUUID()}`);
}

/** A probe's answer in a note's words. */
export function describeProbe(answer: ProbeAnswer): string {
  switch (answer.kind) {
    case 'replayed':
      return `job ${answer.jobId}`;
    case 'remembered':
    case 'forgotten':
      return answer.message;
    case 'unknown':
      return answer.error instanceof Error ? answer.error.message : JSON.stringify(answer.error);
  }
}

/** A refusal of a key's reuse saying its first request is still being processed. */
export const KEY_IN_PROGRESS =
  /in.progress|being processed|\bprocessing\b|outstanding|pending|in.flight|in use|still/i;

/** What a refused probe says of its key. */
function readRefusal(err: unknown): ProbeAnswer {
  if (!(err instanceof ApiError)) return { kind: 'unknown', error: err };
  // A refusal of the body may quote it: only words outside the probe's own id count.
  const words = err.message.split(PROBE_ID).join('');
  // Only a refusal about the key itself. A 400 must also speak of its reuse (Stripe answers a key
  // reused with other parameters 400): one that quotes the key (as a request id, say) refuses
  // the body, and a service that keeps no answers may do that too.
  const aboutKey = /idempot/i.test(words);
  const aboutReuse = /same param|different|reuse|already used|mismatch/i.test(words);
  if (aboutKey && (err.status === 409 || err.status === 422 || (err.status === 400 && aboutReuse)))
    return {
      kind: 'remembered',
      // 409 is also a reuse with another body (this project's own server): the words tell.
      inFlight: KEY_IN_PROGRESS.test(words),
      message: err.message,
    };
  if (err.status === 400 || err.status === 404) return { kind: 'forgotten', message: err.message };
  return { kind: 'unknown', error: err };
}
