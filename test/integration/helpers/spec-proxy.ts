/**
 * A small pass-through in front of the reference /v1 service (written from the spec alone), for
 * behaviour the spec allows and the reference has no switch for: a hook may answer a request
 * itself (a refused download, a job the service forgot) or rewrite a job's poll answer (results
 * listed late). Result URLs are rewritten to pass through here too.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

type Cleanups = (() => Promise<void> | void)[];

export type SpecProxyHooks = {
  /** An answer given here instead of the service's (undefined: passed through). */
  answer?: (url: string) => { status: number; body: string } | undefined;
  /** Rewrites a 200 answer of GET /v1/generations/{id} (the job's JSON body, in place). */
  job?: (jobId: string, job: Record<string, unknown>) => void;
};

/** Starts the pass-through to `target`; returns its base URL. */
export async function specProxy(
  target: string,
  cleanups: Cleanups,
  hooks: SpecProxyHooks,
): Promise<string> {
  let base = '';
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const own = hooks.answer?.(req.url!);
        if (own) {
          const json = own.body.startsWith('{');
          res
            .writeHead(own.status, { 'content-type': json ? 'application/json' : 'text/plain' })
            .end(own.body);
          return;
        }
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(
            (e): e is [string, string] => typeof e[1] === 'string' && e[0] !== 'host',
          ),
        );
        const body = chunks.length ? Buffer.concat(chunks) : undefined;
        const upstream = await fetch(new URL(req.url!, target), {
          method: req.method!,
          headers,
          ...(body && req.method !== 'GET' ? { body } : {}),
        });
        let answer = Buffer.from(await upstream.arrayBuffer());
        const poll = /^\/v1\/generations\/([^/?]+)/.exec(req.url!);
        if (poll && upstream.status === 200) {
          const job = JSON.parse(answer.toString()) as Record<string, unknown>;
          job.resultUrls = (job.resultUrls as string[]).map((u) => u.replace(target, base));
          if (Array.isArray(job.shots))
            for (const shot of job.shots as { resultUrls?: string[]; imageUrl?: string }[]) {
              shot.resultUrls = shot.resultUrls?.map((u) => u.replace(target, base));
              if (typeof shot.imageUrl === 'string')
                shot.imageUrl = shot.imageUrl.replace(target, base);
            }
          hooks.job?.(poll[1]!, job);
          answer = Buffer.from(JSON.stringify(job));
        }
        const out: Record<string, string> = {};
        upstream.headers.forEach((v, k) => {
          if (k !== 'content-length' && k !== 'content-encoding' && k !== 'transfer-encoding')
            out[k] = v;
        });
        res.writeHead(upstream.status, out).end(answer);
      })().catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return base;
}
