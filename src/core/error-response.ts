/**
 * Domain errors to the spec's `{success: false, error}` bodies, here and nowhere else: a rule
 * broken by the caller is its 4xx; a database that went away is a 503; anything else unexpected
 * is a 500. Neither promises that nothing was charged: only the code that ran the charge knows
 * (Service.submit says so in its own ServiceError where it is sure).
 */
import { RuleViolation } from './generation-request';
import { ServiceError } from './errors';

export type ServiceResponse = {
  status: number;
  body: object;
  /** `body` as JSON, built once for answers that never change (a finished job's poll). */
  json?: string;
};

/** The store's DatabaseUnavailable raised by a COMMIT: the server may have committed. */
export function isCommitOutcomeUnknown(err: unknown): boolean {
  return (
    err instanceof Error &&
    err.name === 'DatabaseUnavailable' &&
    (err as { commitOutcomeUnknown?: unknown }).commitOutcomeUnknown === true
  );
}

export function errorResponse(err: unknown, log?: (message: string) => void): ServiceResponse {
  if (err instanceof RuleViolation)
    return { status: 400, body: { success: false, error: err.message } };
  if (err instanceof ServiceError)
    return { status: err.status, body: { success: false, error: err.message } };
  log?.(`unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  if (isCommitOutcomeUnknown(err))
    return {
      status: 503,
      body: {
        success: false,
        error:
          'The service lost its database while saving this request and cannot tell whether it was saved; check before sending it again',
      },
    };
  if (err instanceof Error && err.name === 'DatabaseUnavailable')
    return {
      status: 503,
      body: { success: false, error: 'The service cannot reach its database; try again shortly' },
    };
  return { status: 500, body: { success: false, error: 'Internal error' } };
}
