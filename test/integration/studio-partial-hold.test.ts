/**
 * A paid shot is never lost to a result list that lags behind its counters: a final catalog job
 * listing 1 result of 3 past every ask is collected as it stands and the photo is held (not
 * exported); the next run polls the same job again (no second charge) and collects the rest. A
 * refused download whose fresh-URL poll lists more than was stored keeps the longer list. The
 * reference /v1 service (written from the spec alone) has no such switches, so a small
 * pass-through in front of it lists only the first result of a final job while `lagging`, and
 * can refuse (410) the first download of each result.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Recipe } from '../../src/shared/studio';
import { referenceWorld, runOnWorld, type ReferenceWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** A ready shoot of the reference set shoot-02 (3 shots). */
const READY_SHOOT: Recipe = {
  request: { readyTemplateSetId: 'shoot-02', images: { garment_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{shot}-{n}' },
};

type Proxy = {
  url: string;
  /** Final answers list only the first result while this is true (or while `lagAnswers` last). */
  lagging: boolean;
  /** Final answers that still list only the first result (counted down per answer). */
  lagAnswers: number;
  /** Results whose first download is refused with 410 (an expired signed URL). */
  refuseFirstDownload: boolean;
};

async function laggingProxy(target: string): Promise<Proxy> {
  const refused = new Set<string>();
  const proxy: Proxy = { url: '', lagging: false, lagAnswers: 0, refuseFirstDownload: false };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (proxy.refuseFirstDownload && !req.url!.startsWith('/v1/') && !refused.has(req.url!)) {
          refused.add(req.url!);
          res.writeHead(410, { 'content-type': 'text/plain' }).end('the link expired');
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
        if (/^\/v1\/generations\/[^/?]+/.test(req.url!) && upstream.status === 200) {
          const job = JSON.parse(answer.toString()) as Record<string, unknown>;
          // Results are fetched through here too, so a download can be refused.
          let urls = (job.resultUrls as string[]).map((u) => u.replace(target, proxy.url));
          if (/completed/.test(String(job.status)) && urls.length > 1) {
            const lag = proxy.lagging || proxy.lagAnswers > 0;
            if (proxy.lagAnswers > 0) proxy.lagAnswers--;
            if (lag) urls = urls.slice(0, 1);
          }
          job.resultUrls = urls;
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
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}

const SERVICE = {
  seed: 7,
  timeScale: 0.01,
  jobSeconds: [20, 20] as [number, number],
  failShots: 0,
  catalogStatus: 'pack' as const,
};

const creates = (w: ReferenceWorld) =>
  w.service.requests().filter((r) => r.method === 'POST' && r.path.startsWith('/v1/catalog'))
    .length;

describe('results lagging past every ask', () => {
  it('hold the photo with what is listed; the next run collects the rest of the same job', async () => {
    const w = await referenceWorld(cleanups, {
      email: 'partial-hold@example.com',
      diamonds: 200,
      service: SERVICE,
    });
    const proxy = await laggingProxy(w.service.url);
    proxy.lagging = true;
    const world = { ...w, service: { ...w.service, url: proxy.url } };
    const first = await runOnWorld(world, { recipe: READY_SHOOT });
    // Before: the one listed result was exported and the photo called done (2 paid shots lost).
    expect(first.exported).toBe(0);
    expect(JSON.stringify(first)).toMatch(/partial: 1 result\(s\) collected, 2 more paid for/);
    expect(fs.existsSync(`${w.root}/out`) ? fs.readdirSync(`${w.root}/out`) : []).toHaveLength(0);
    const charged = w.service.jobs('partial-hold@example.com').length;
    expect(charged).toBe(1);

    proxy.lagging = false;
    const second = await runOnWorld(world, { recipe: READY_SHOOT });
    expect(second.exported).toBe(1);
    expect(second.failed).toEqual([]);
    expect(fs.readdirSync(`${w.root}/out`)).toHaveLength(3);
    // The same job, polled again: never submitted twice.
    expect(w.service.jobs('partial-hold@example.com')).toHaveLength(1);
    expect(creates(w)).toBe(1);
  }, 150_000);

  it('a refused download whose fresh poll lists more keeps the longer list', async () => {
    const w = await referenceWorld(cleanups, {
      email: 'partial-catchup@example.com',
      diamonds: 200,
      service: SERVICE,
    });
    const proxy = await laggingProxy(w.service.url);
    // Every ask lists 1 of 3; the fresh-URL poll after the refused download lists all 3.
    proxy.lagAnswers = 6;
    proxy.refuseFirstDownload = true;
    const world = { ...w, service: { ...w.service, url: proxy.url } };
    const summary = await runOnWorld(world, { recipe: READY_SHOOT });
    // Before: "the job, asked again, lists 3 result(s) where 1 were stored": 0 files of 3 paid.
    expect(summary.failed).toEqual([]);
    expect(summary.exported).toBe(1);
    expect(fs.readdirSync(`${w.root}/out`)).toHaveLength(3);
    expect(w.service.jobs('partial-catchup@example.com')).toHaveLength(1);
  }, 150_000);
});
