/**
 * Whether a service keeps one answer per Idempotency-Key (the spec does not say), learnt per
 * endpoint from that endpoint's own answers: a service may echo the key on uploads and not honour
 * it on generations, and a lost create resent on the strength of the upload's echo is paid twice.
 */
import * as store from './db/store';

/** The writes that charge: only their own answers tell whether a lost one may be sent again. */
export type ChargingEndpoint = 'generations' | 'catalog-jobs';

type DB = Parameters<typeof store.getSetting>[0];

const settingOf = (origin: string, endpoint: ChargingEndpoint) =>
  `idempotency:${origin}:${endpoint}`;

export function honoursIdempotency(db: DB, origin: string, endpoint: ChargingEndpoint): boolean {
  // The embedded core is ours: it keeps one answer per key on every write.
  if (origin === 'embedded') return true;
  return store.getSetting(db, settingOf(origin, endpoint)) === 'yes';
}

export function learnIdempotency(
  db: DB,
  origin: string,
  endpoint: ChargingEndpoint,
  honoured: boolean,
): void {
  store.setSetting(db, settingOf(origin, endpoint), honoured ? 'yes' : 'no');
}
