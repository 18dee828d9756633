/**
 * Domain errors to the spec's `{success: false, error}` bodies, here and nowhere else: a rule
 * broken by the caller is its 4xx; anything unexpected is a 500 that says nothing was charged
 * (every charge is in the same transaction as the job it pays for).
 */
import { RuleViolation } from './generation-request';
import { ServiceError } from './errors';

export type ServiceResponse = {
  status: number;
  body: object;
  /** `body` as JSON, built once for answers that never change (a finished job's poll). */
  json?: string;
};

export function errorResponse(err: unknown, log?: (message: string) => void): ServiceResponse {
  if (err instanceof RuleViolation)
    return { status: 400, body: { success: false, error: err.message } };
  if (err instanceof ServiceError)
    return { status: err.status, body: { success: false, error: err.message } };
  log?.(`unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  return { status: 500, body: { success: false, error: 'Internal error; nothing was charged' } };
}
