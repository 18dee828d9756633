/** Starts the core behind the /v1 HTTP transport (`dropshoot serve`). */
import { openCore, type CoreOptions } from '../core';
import { storeTarget } from '../core/store/open-store';
import { buildApp, type HttpTimeouts } from './app';
import type { Logger } from './logging';

/**
 * Uploaded and fetched images one account may keep on a server (10 GiB): past it, uploads and
 * requests that fetch a new image get 413 and nothing is charged. DROPSHOOT_ACCOUNT_STORAGE_MB
 * changes it.
 */
export const DEFAULT_ACCOUNT_STORAGE_BYTES = 10 * 1024 * 1024 * 1024;

function storageQuota(env: NodeJS.ProcessEnv): number {
  const mb = env.DROPSHOOT_ACCOUNT_STORAGE_MB;
  if (mb === undefined || mb === '') return DEFAULT_ACCOUNT_STORAGE_BYTES;
  const n = Number(mb);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error('DROPSHOOT_ACCOUNT_STORAGE_MB must be a whole number of megabytes >= 1');
  return n * 1024 * 1024;
}

export type ServerOptions = Omit<CoreOptions, 'publicBaseUrl'> & {
  host?: string;
  port?: number;
  /** The origin clients reach this server at, when behind a proxy; default http://host:port. */
  publicBaseUrl?: string;
  /** Connection time limits (tests shorten them); defaults in DEFAULT_TIMEOUTS. */
  timeouts?: Partial<HttpTimeouts>;
  /** JSON request logs with request ids (`serve` passes one); none when absent. */
  logger?: Logger;
};

export type RunningServer = { url: string; close(): Promise<void> };

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1';
  const core = await openCore({
    ...opts,
    allowPrivateUrls: opts.allowPrivateUrls ?? false,
    storageQuotaBytes: opts.storageQuotaBytes ?? storageQuota(process.env),
  });
  // After it opened: a configuration error stays the only line a failed start prints.
  opts.log?.(
    `store: ${storeTarget({ databaseUrl: opts.databaseUrl, dataDir: opts.dataDir }).label}`,
  );
  const app = buildApp(core, {
    log: opts.log,
    ...(opts.timeouts ? { timeouts: opts.timeouts } : {}),
    ...(opts.logger ? { logger: opts.logger } : {}),
  });
  try {
    await app.listen({ host, port: opts.port ?? 8787 });
  } catch (err) {
    await core.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  const shownHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const url = `http://${shownHost}:${port}`;
  core.resolver.setPublicBaseUrl(opts.publicBaseUrl ?? url);
  return {
    url,
    async close() {
      // Shutting down is not a crash: stop the jobs first, before waiting on open connections.
      const stopped = core.stopJobs();
      await app.close();
      await stopped;
      await core.close();
    },
  };
}
