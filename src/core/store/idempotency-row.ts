/**
 * An idempotency record as both stores keep it: the response body as JSON text. The column
 * order and the mapper each way live here once, so SQLite and PostgreSQL write and read it alike.
 */
import type { IdempotencyRow } from './types';

export type StoredIdempotency = Pick<IdempotencyRow, 'bodyHash' | 'status' | 'createdAt'> & {
  response: string;
};

/** The columns `idempotencyParams` fills, in its order. */
export const IDEMPOTENCY_INSERT_COLUMNS =
  'account_id, endpoint, idem_key, body_hash, status, response, created_at';

export const idempotencyParams = (row: IdempotencyRow): unknown[] => [
  row.accountId,
  row.endpoint,
  row.key,
  row.bodyHash,
  row.status,
  JSON.stringify(row.body),
  row.createdAt,
];

export const idempotencyFromStored = (
  accountId: string,
  endpoint: string,
  key: string,
  stored: StoredIdempotency,
): IdempotencyRow => ({
  accountId,
  endpoint,
  key,
  bodyHash: stored.bodyHash,
  status: stored.status,
  body: JSON.parse(stored.response) as object,
  createdAt: stored.createdAt,
});
