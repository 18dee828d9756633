/**
 * The harness's side door under /_ref/ (outside /v1), for main.ts: create accounts, grant, read
 * balance, ledger, jobs, the request log and request counts (today's, per day; today's can be set), change the cap and the fault switches. Guarded by a
 * token given on the command line (header `x-ref-token`).
 */
import type http from 'node:http';
import { z } from 'zod';
import type { ReferenceCore } from './core';
import { ReferenceServiceOptionsSchema } from './options';
import type { RequestLog } from './request-log';

const Email = z.object({ email: z.string().min(1) });
const routes = {
  'POST /_ref/accounts': z.object({
    email: z.string().min(1),
    diamonds: z.number().int().nonnegative(),
    dailyCap: z.number().int().positive().optional(),
  }),
  'POST /_ref/grant': z.object({ email: z.string().min(1), diamonds: z.number().int() }),
  'POST /_ref/daily-cap': z.object({
    apiKey: z.string().min(1),
    cap: z.number().int().nonnegative(),
  }),
  'POST /_ref/options': ReferenceServiceOptionsSchema.partial(),
  'POST /_ref/requests-today': z.object({
    apiKey: z.string().min(1),
    n: z.number().int().nonnegative(),
  }),
} as const;

export function adminRoutes(core: ReferenceCore, token: string, log: RequestLog) {
  return (req: http.IncomingMessage, res: http.ServerResponse, url: URL, body: Buffer): void => {
    const reply = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    };
    if (req.headers['x-ref-token'] !== token) return reply(401, { error: 'bad admin token' });
    const route = `${req.method} ${url.pathname}`;
    const q = (name: string) => url.searchParams.get(name) ?? '';
    try {
      const json = body.length ? (JSON.parse(body.toString('utf8')) as unknown) : {};
      switch (route) {
        case 'POST /_ref/accounts':
          return reply(200, core.createAccount(routes[route].parse(json)));
        case 'POST /_ref/grant': {
          const input = routes[route].parse(json);
          core.grant(input.email, input.diamonds);
          return reply(200, { balance: core.balance(input.email) });
        }
        case 'POST /_ref/daily-cap': {
          const input = routes[route].parse(json);
          core.setDailyCap(input.apiKey, input.cap);
          return reply(200, { ok: true });
        }
        case 'POST /_ref/options': {
          const patch = routes[route].parse(json);
          core.options = {
            ...core.options,
            ...patch,
            seed: core.options.seed,
            statePath: core.options.statePath,
          };
          return reply(200, { ok: true });
        }
        case 'GET /_ref/balance':
          return reply(200, { balance: core.balance(Email.parse({ email: q('email') }).email) });
        case 'GET /_ref/ledger':
          return reply(200, { ledger: core.ledger(q('email')) });
        case 'GET /_ref/jobs':
          return reply(200, { jobs: core.jobsOf(q('email')) });
        case 'POST /_ref/requests-today': {
          const input = routes[route].parse(json);
          core.setRequestsToday(input.apiKey, input.n);
          return reply(200, { ok: true });
        }
        case 'GET /_ref/requests-by-day':
          return reply(200, { days: core.requestsByDay(q('apiKey')) });
        case 'GET /_ref/requests':
          return reply(200, { requests: log.entries });
        case 'GET /_ref/requests-today':
          return reply(200, { requests: core.requestsToday(q('apiKey')) });
        default:
          return reply(404, { error: `no admin route ${route}` });
      }
    } catch (err) {
      return reply(400, { error: err instanceof Error ? err.message : String(err) });
    }
  };
}
