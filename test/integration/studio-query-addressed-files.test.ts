/**
 * A service that addresses its files by a query: `/files/get?id=<id>` for uploads and results
 * (spec 4.5 gives an upload `{id, url}` and spec 2.3 results as URLs, no form for either), each
 * result re-signed at every answer. The studio took origin and path alone for a file: every
 * upload looked like one URL handed to several photos (paid photos held, "Generate again pays
 * anew"), and a ready shoot's shots, listed one at a time, were kept as one (review rev33 D1, D3:
 * 4 charged / 2 exported; 18 charged / 2 of 6 shots exported, exit 0). Against the reference /v1
 * service (written from the spec alone) behind a loopback front that gives its files that form,
 * through `run`'s own path.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBatch } from '../../src/studio/run-batch';
import { engineOnWorld, photoFolders } from './helpers/price-reading-studio';
import { chargedTo, referenceWorld, type ReferenceWorld } from './helpers/reference-studio';
import { rewritingFront } from './helpers/rewriting-front';
import { CUTOUT_RECIPE, SHOOT_02_RECIPE } from './helpers/studio-fixtures';
import type { Recipe } from '../../src/shared/studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'query-files@ref.test';

/**
 * The front: every `<service>/files/<name>` or `<service>/results/<name>` in a JSON answer becomes
 * `<front>/<files|results>/get?id=<name>` (results with a new `sig` each time), and those are
 * served from the service's own paths. Counts the uploads the service stored.
 */
async function queryAddressed(w: ReferenceWorld) {
  let base = '';
  let signed = 0;
  let uploads = 0;
  const own = new RegExp(
    `${w.service.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/(files|results)/([A-Za-z0-9._-]+)`,
    'g',
  );
  base = await rewritingFront(
    cleanups,
    w.service.url,
    (request, answer) => {
      if (request.method === 'POST' && request.path === '/v1/uploads' && answer.status === 200)
        uploads++;
      if (!String(answer.headers['content-type'] ?? '').includes('json')) return answer;
      const text = answer.body
        .toString()
        .replace(own, (_, kind: string, name: string) =>
          kind === 'results'
            ? `${base}/results/get?id=${name}&sig=${++signed}`
            : `${base}/files/get?id=${name}`,
        );
      return { ...answer, body: Buffer.from(text) };
    },
    {
      route: (request) => {
        const kind = /^\/(files|results)\/get$/.exec(request.path)?.[1];
        const id = request.query.get('id');
        return request.method === 'GET' && kind && id ? { path: `/${kind}/${id}` } : undefined;
      },
    },
  );
  return { url: base, uploads: () => uploads };
}

async function runVia(w: ReferenceWorld, front: string, inDir: string, recipe: Recipe) {
  const engine = engineOnWorld(w, cleanups, { via: front, concurrency: 4 });
  return runBatch(engine, {
    inDir,
    recipe,
    outDir: path.join(w.root, 'out'),
    signal: AbortSignal.timeout(60_000),
  });
}

const digests = (dir: string) =>
  fs.readdirSync(dir).map((f) =>
    createHash('sha256')
      .update(fs.readFileSync(path.join(dir, f)))
      .digest('hex'),
  );

describe('files addressed by a query', () => {
  it('uploads: each photo is its own upload, paid once and exported', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 100,
      service: { seed: 9, timeScale: 0.01, jobSeconds: [50, 100] },
    });
    const front = await queryAddressed(w);
    const [photos] = await photoFolders(w, [4]);
    const summary = await runVia(w, front.url, photos!, CUTOUT_RECIPE);
    // Before: photos held 'paid, results not exported: its upload URL was handed to another
    // photo too', others uploaded again.
    expect(summary.held).toEqual([]);
    expect(summary.failed).toEqual([]);
    expect(summary.exported).toBe(4);
    expect(front.uploads()).toBe(4);
    expect(chargedTo(w.service, EMAIL)).toBe(4);
  }, 90_000);

  it("results: a ready shoot's shots listed one at a time are every one collected", async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 100,
      service: {
        seed: 5,
        timeScale: 0.01,
        jobSeconds: [100, 600],
        catalogStatus: 'pack',
        catalogUrlsListedOnce: true,
      },
    });
    const front = await queryAddressed(w);
    const [photos] = await photoFolders(w, [2]);
    const summary = await runVia(w, front.url, photos!, SHOOT_02_RECIPE);
    // Before: one shot of three per photo, the summary calling the others 'not listed yet'.
    expect(summary.failed).toEqual([]);
    expect(summary.partial).toBeUndefined();
    expect(summary.exported).toBe(2);
    expect(summary.files).toHaveLength(6);
    expect(new Set(digests(path.join(w.root, 'out'))).size).toBe(6);
    expect(chargedTo(w.service, EMAIL)).toBe(18);
  }, 90_000);
});
