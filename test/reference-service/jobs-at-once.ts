/** The `jobsAtOnce` switch: a create refused, before any charge, while the account's jobs fill the limit. */
import type { Reply } from './core';
import type { ReferenceServiceOptions } from './options';
import type { Job } from './state';

export function jobsAtOnceRefusal(
  options: ReferenceServiceOptions,
  jobs: readonly Job[],
  email: string,
): Reply | null {
  const rule = options.jobsAtOnce;
  if (!rule) return null;
  const running = jobs.filter((j) => j.email === email && j.status === 'processing').length;
  if (running < rule.limit) return null;
  return {
    status: rule.status ?? 429,
    body: { success: false, error: rule.message ?? 'Too many jobs in progress' },
    ...(rule.retryAfterRaw !== undefined
      ? { headers: { 'retry-after': rule.retryAfterRaw } }
      : rule.retryAfterSeconds === undefined
        ? {}
        : { headers: { 'retry-after': String(rule.retryAfterSeconds) } }),
  };
}
