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

/**
 * Most bytes of scratch copies (a bucket's objects copied here for the providers to read) one
 * process keeps: `--blob-scratch-mb`, else DROPSHOOT_BLOB_SCRATCH_MB, else 2 GiB.
 */
export function blobScratchLimit(env: NodeJS.ProcessEnv): number | undefined {
  const mb = env.DROPSHOOT_BLOB_SCRATCH_MB;
  if (mb === undefined || mb === '') return undefined;
  const n = Number(mb);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error('DROPSHOOT_BLOB_SCRATCH_MB must be a whole number of megabytes >= 1');
  return n * 1024 * 1024;
}

/**
 * How long a stopping team-mode `serve` (PostgreSQL) lets jobs under way run on by default
 * (`--drain-seconds`): a provider call cut short is made again, and paid again, elsewhere. Below
 * the 30 s orchestrators commonly wait before SIGKILL (Kubernetes' default grace period).
 */
export const DEFAULT_TEAM_DRAIN_SECONDS = 25;

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

export type RunningServer = {
  url: string;
  /** Graceful stop: drains requests and jobs under way (up to `drainMs`), then closes. */
  close(): Promise<void>;
  /**
   * Stop at once (asked again while `close` drains): cuts the jobs under way and, on PostgreSQL,
   * releases their leases, waiting at most about `withinMs` for the database. Resolves with how
   * many leases were released (null: unknown, they run out within the lease time). The process
   * is expected to exit right after: requests under way are not answered.
   */
  halt(withinMs?: number): Promise<number | null>;
};

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1';
  const drainMs = opts.drainMs ?? 0;
  const scratchLimit = opts.blobScratchLimitBytes ?? blobScratchLimit(process.env);
  const core = await openCore({
    ...opts,
    drainMs,
    allowPrivateUrls: opts.allowPrivateUrls ?? false,
    storageQuotaBytes: opts.storageQuotaBytes ?? storageQuota(process.env),
    ...(scratchLimit !== undefined ? { blobScratchLimitBytes: scratchLimit } : {}),
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
      // Shutting down is not a crash: no new job starts, jobs under way get up to drainMs to
      // finish, and requests under way are answered (the listening socket closes at once, so the
      // balancer moves on).
      const stopped = core.stopJobs();
      // With a drain time, a request still under way past it (a stalled upload) is cut.
      const deadline =
        drainMs > 0 ? setTimeout(() => app.server.closeAllConnections(), drainMs) : undefined;
      try {
        await app.close();
      } finally {
        clearTimeout(deadline);
      }
      await stopped;
      await core.close();
    },
    async halt(withinMs = 2_000) {
      app.server.closeAllConnections();
      if (core.leaseLoop) return core.leaseLoop.halt({ releaseWithinMs: withinMs });
      // SQLite: the units cut now resume at next start, counted as no crash.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        core.runner.stop(),
        new Promise((resolve) => (timer = setTimeout(resolve, withinMs))),
      ]);
      clearTimeout(timer);
      return 0;
    },
  };
}
