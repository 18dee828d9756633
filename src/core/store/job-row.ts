/**
 * A new job as both stores insert it. The column order and its values live here once, so
 * SQLite and PostgreSQL cannot drift apart; each store writes only its own SQL around them.
 */
import type { NewJob } from './types';

/** The columns `newJobParams` fills, in its order (the store adds `status`). */
export const JOB_INSERT_COLUMNS =
  'id, account_id, key_id, kind, tool_id, price, input, template_set_id, ready_set_id, created_at';

export const newJobParams = (job: NewJob): unknown[] => [
  job.id,
  job.accountId,
  job.keyId,
  job.kind,
  job.toolId,
  job.price,
  job.input,
  job.templateSetId,
  job.readySetId,
  job.createdAt,
];
