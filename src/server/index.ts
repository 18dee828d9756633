/** Starts the core behind the /v1 HTTP transport (`dropshoot serve`). */
import { openCore, type CoreOptions } from '../core';
import { buildApp } from './app';

export type ServerOptions = Omit<CoreOptions, 'publicBaseUrl'> & {
  host?: string;
  port?: number;
  /** The origin clients reach this server at, when behind a proxy; default http://host:port. */
  publicBaseUrl?: string;
};

export type RunningServer = { url: string; close(): Promise<void> };

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1';
  const core = openCore({ ...opts, allowPrivateUrls: opts.allowPrivateUrls ?? false });
  const app = buildApp(core, { log: opts.log });
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
      await app.close();
      await core.close();
    },
  };
}
