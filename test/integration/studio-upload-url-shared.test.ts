/**
 * One upload URL handed to photos with different bytes (review rev25 D3): a service naming uploads
 * from a coarse clock gives uploads in one tick the same {id, url} (spec 2.4/4.5 promise an id and
 * a URL per upload, nothing of their uniqueness), the later bytes replacing the earlier. Every
 * photo was sent on that one URL and paid for with one image, each photo's result of another
 * garment exported under its own name (3 photos: 12 charged / 3 exported / exit 0, nothing said).
 * A photo is never sent on a URL another photo with other bytes holds: it uploads again in other
 * bytes; a photo already sent on it is held, never exported unseen. `run` as it drives a remote
 * service (HttpClient, StudioEngine, runBatch, the real SQLite store) against the reference /v1
 * service behind a loopback front that stores uploads by a 2-second clock; what each job read
 * is the reference service's own record of its input.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { StudioEngine } from '../../src/studio/engine';
import { runBatch } from '../../src/studio/run-batch';
import { openStudio } from '../../src/studio';
import type { ItemView } from '../../src/shared/studio';
import fs from 'node:fs';
import { ON_MODEL, photoFolders, priceWorlds } from './helpers/price-reading-studio';
import type { ReferenceWorld } from './helpers/reference-studio';
import { rewritingFront } from './helpers/rewriting-front';
import { call, until } from './helpers/studio-commands';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'upload-url-shared@ref.test';
const { world, netSpent } = priceWorlds(cleanups, EMAIL, 500);
const TICK_MS = 2000;
const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/**
 * A front whose POST /v1/uploads names each upload by the clock's tick (`up_<tick>`): one tick,
 * one {id, url}, the later bytes replacing the earlier. It remembers whose upload (Idempotency-Key)
 * each stored body was, and, for each create it passes on, whose upload the bytes served to the
 * service's fetch of its URL were (the reference service reads a URL while it handles the create).
 */
async function coarseClockUploads(w: ReferenceWorld) {
  const objects = new Map<string, Buffer>();
  const uploaderOf = new Map<string, string>();
  const creating = new Map<string, string[]>();
  /** Per create's Idempotency-Key: the upload keys of the bytes its job was served. */
  const served = new Map<string, string[]>();
  let collisions = 0;
  let base = '';
  const objectOf = (url: unknown) =>
    typeof url === 'string' ? /\/files\/uploads\/(up_\d+)$/.exec(url)?.[1] : undefined;
  base = await rewritingFront(
    cleanups,
    w.service.url,
    (request, answer) => {
      if (request.method === 'POST' && request.path === '/v1/generations') {
        const key = String(request.headers['idempotency-key']);
        for (const keys of creating.values()) keys.splice(keys.indexOf(key) >>> 0, 1);
      }
      return answer;
    },
    {
      route: (request) => {
        if (request.method === 'POST' && request.path === '/v1/uploads') {
          const id = `up_${Math.floor(Date.now() / TICK_MS)}`;
          if (objects.has(id)) collisions++;
          objects.set(id, request.body);
          uploaderOf.set(sha(request.body), String(request.headers['idempotency-key']));
          const body = Buffer.from(
            JSON.stringify({ success: true, id, url: `${base}/files/uploads/${id}` }),
          );
          return { status: 200, headers: { 'content-type': 'application/json' }, body };
        }
        if (request.method === 'POST' && request.path === '/v1/generations') {
          const images = (
            JSON.parse(request.body.toString()) as { images?: Record<string, unknown> }
          ).images;
          const id = objectOf(images?.garment_photo);
          if (id)
            creating.set(id, [
              ...(creating.get(id) ?? []),
              String(request.headers['idempotency-key']),
            ]);
          return undefined;
        }
        const id = objectOf(request.path);
        if (request.method === 'GET' && id) {
          const data = objects.get(id);
          if (!data) return { status: 404, headers: {}, body: Buffer.from('no such upload') };
          for (const key of creating.get(id) ?? [])
            served.set(key, [...(served.get(key) ?? []), uploaderOf.get(sha(data)) ?? '?']);
          return { status: 200, headers: { 'content-type': 'image/jpeg' }, body: data };
        }
        return undefined;
      },
    },
  );
  return { url: base, served, collisions: () => collisions };
}

async function runOn(w: ReferenceWorld, front: string, inDir: string) {
  const client = new HttpClient({ baseUrl: front, apiKey: w.apiKey, timeoutMs: 5000 });
  const engine = new StudioEngine({
    dataDir: path.join(w.root, 'data'),
    client,
    apiKey: w.apiKey,
    concurrency: 4,
    backoff: { baseMs: 50, maxMs: 400 },
    balanceRecheckMs: 100,
  });
  try {
    return await runBatch(engine, { inDir, recipe: ON_MODEL, outDir: path.join(w.root, 'out') });
  } finally {
    await engine.close();
    await client.close();
  }
}

type Row = { id: string; name: string; state: string; jobId: string | null };
const itemsOf = (w: ReferenceWorld): Row[] => {
  const db = new Database(path.join(w.root, 'data', 'studio.db'), { readonly: true });
  try {
    return db
      .prepare('SELECT id, name, state, job_id AS jobId FROM items ORDER BY name')
      .all() as Row[];
  } finally {
    db.close();
  }
};

/** For each photo sent: the photos whose uploaded bytes its create's job was served. */
function imagesReadFor(w: ReferenceWorld, served: Map<string, string[]>): Map<string, string[]> {
  const items = itemsOf(w);
  const photoOf = (key: string, prefix: string) =>
    items.find((i) => key.startsWith(`${prefix}-${i.id}`))?.name ?? key;
  const read = new Map<string, string[]>();
  for (const [createKey, uploadKeys] of served)
    read.set(
      photoOf(createKey, 'submit'),
      uploadKeys.map((k) => photoOf(k, 'upload')),
    );
  return read;
}

describe('one upload URL handed to photos with different bytes', () => {
  it("no photo is exported with a result made from another photo's image, and none passes unsaid", async () => {
    const w = await world({});
    const front = await coarseClockUploads(w);
    const [photos] = await photoFolders(w, [3]);
    const summary = await runOn(w, front.url, photos!);
    expect(front.collisions()).toBeGreaterThan(0);
    const read = imagesReadFor(w, front.served);
    const items = itemsOf(w);
    expect([...read.keys()].sort()).toEqual(['p00.jpg', 'p01.jpg', 'p02.jpg']);
    // Before: 3 exported, each job having read the last upload's image (two of them another's).
    for (const item of items.filter((i) => i.state === 'exported'))
      expect(read.get(item.name), `${item.name} read`).toEqual([item.name]);
    // Every photo sent is exported (its own image) or held, said so; nothing is failed unpaid.
    const held = summary.held.map((h) => h.name);
    expect(summary.exported + held.length).toBe(3);
    for (const name of held) expect(read.has(name)).toBe(true);
    for (const h of summary.held)
      expect(h.reason).toMatch(/upload URL was handed to another photo/);
    expect(summary.failed).toEqual([]);
    expect(summary.exported).toBeGreaterThanOrEqual(2);
    expect((summary.notices ?? []).join('\n')).toMatch(
      /same upload URL to photos with different bytes/,
    );
    // Each photo paid once.
    expect(netSpent(w)).toBe(4 * 3);
    // A rerun exports nothing held unseen and pays nothing.
    const again = await runOn(w, front.url, photos!);
    expect(again.exported).toBe(0);
    expect(again.held.map((h) => h.name)).toEqual(held);
    expect(netSpent(w)).toBe(4 * 3);
  }, 120_000);

  it("in the studio: no result read from another photo's image sits in review unsaid", async () => {
    const w = await world({});
    const front = await coarseClockUploads(w);
    const [photos] = await photoFolders(w, [3]);
    const client = new HttpClient({ baseUrl: front.url, apiKey: w.apiKey, timeoutMs: 5000 });
    const studio = await openStudio({
      dataDir: path.join(w.root, 'data'),
      client,
      apiKey: w.apiKey,
      backoff: { baseMs: 50, maxMs: 50 },
    });
    cleanups.push(async () => {
      await studio.close();
      await client.close();
    });
    const hot = path.join(w.root, 'hot');
    fs.mkdirSync(hot);
    await call(studio, 'folders.add', {
      path: hot,
      outputDir: path.join(w.root, 'out'),
      recipe: ON_MODEL,
    });
    for (const name of fs.readdirSync(photos!))
      fs.copyFileSync(path.join(photos!, name), path.join(hot, name));
    const items = await until(
      'three photos in review',
      async () => {
        const list = (await call(studio, 'queue.list', { limit: 50 })).items as ItemView[];
        return list.length === 3 && list.every((i) => i.state === 'review') && list;
      },
      60_000,
    );
    expect(front.collisions()).toBeGreaterThan(0);
    const read = imagesReadFor(w, front.served);
    // Before: three in review, two of them made from another photo's image, nothing said.
    for (const item of items) {
      const readOwn = (read.get(item.name) ?? []).every((n) => n === item.name);
      if (!readOwn)
        expect(item.note ?? '', item.name).toMatch(/upload URL was handed to another photo/);
    }
    expect(new Set(items.map((i) => i.name)).size).toBe(3);
    expect(netSpent(w)).toBe(12);
  }, 120_000);
});
