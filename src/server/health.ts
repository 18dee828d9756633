/**
 * `GET /healthz`: the process answers. `GET /readyz`: it can do its work, i.e. the database and
 * the blob store answer; otherwise 503 with which one failed and why (never a credential: the
 * stores' own messages carry none).
 */
import type { Core } from '../core';

export type Readiness = { ready: boolean; checks: { database: string; blobs: string } };

const READY_TIMEOUT_MS = 5_000;

export async function readiness(core: Core): Promise<Readiness> {
  const [database, blobs] = await Promise.all([
    answers(core.store.ping()),
    answers(core.blobs.content.ping()),
  ]);
  return { ready: database === 'ok' && blobs === 'ok', checks: { database, blobs } };
}

function answers(ping: Promise<void>): Promise<string> {
  return withTimeout(ping, READY_TIMEOUT_MS).then(
    () => 'ok',
    (err: unknown) => `unreachable: ${err instanceof Error ? err.message : String(err)}`,
  );
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
