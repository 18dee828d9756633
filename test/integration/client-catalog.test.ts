/**
 * Catalog reads against a /v1 stand-in written from the spec (issue 10 items 11 and 7): the
 * ready-set cursor under a name the spec does not give, guarded pagination, and the studio's
 * on-disk catalog cache behind the recipe builder's commands (`catalog.get`, `looks.list`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient, readAllReadySets } from '../../src/client';
import { StudioEngine } from '../../src/studio/engine';
import { HotFolders } from '../../src/studio/folders';
import { createCommands, runCommand } from '../../src/studio/commands';
import { CATALOG_CACHE_FILE } from '../../src/studio/catalog-cache';
import type { CatalogView, LookView } from '../../src/shared/studio';
import { startStandIn, type StandIn, type StandInOptions } from './client-stand-in';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-client-catalog-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function standIn(options: StandInOptions = {}): Promise<StandIn> {
  const service = await startStandIn(options);
  cleanups.push(() => service.close());
  return service;
}

const httpClient = (service: StandIn, apiKey = service.apiKey) =>
  new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });

describe('ready-set pagination against a service that names its cursor its own way (item 11)', () => {
  it('reads every set from a service whose cursor parameter is `after`', async () => {
    const service = await standIn({ cursorParam: 'after', readySets: 250 });
    const read = await readAllReadySets(httpClient(service));
    expect(read).toMatchObject({ stop: 'end', complete: true, pages: 3 });
    expect(new Set(read.templateSets.map((s) => s.id)).size).toBe(250);
    expect(service.count('GET', '/v1/ready-template-sets')).toBe(3);
  });

  it('falls back to the service default page size when it refuses ours', async () => {
    const service = await standIn({ cursorParam: 'pageToken', readySets: 45, maxLimit: 20 });
    const read = await readAllReadySets(httpClient(service));
    expect(read).toMatchObject({ stop: 'end', pages: 4 });
    expect(read.templateSets).toHaveLength(45);
  });

  it('stops after two requests against a service whose cursor name it does not send, instead of spending the day', async () => {
    // The case: a 60-request cap spent in 105 ms by one catalog read.
    const service = await standIn({ cursorParam: 'pageCursor', readySets: 250, dailyCap: 60 });
    const read = await readAllReadySets(httpClient(service));
    expect(read).toMatchObject({ stop: 'page_repeated', complete: false, pages: 2 });
    expect(read.templateSets).toHaveLength(100);
    expect(service.log).toHaveLength(2);
  });

  it('asks a strict service (400 on unknown parameters) with one cursor name at a time, then keeps the one it takes', async () => {
    const service = await standIn({
      cursorParam: 'pageToken',
      readySets: 45,
      defaultLimit: 10,
      maxLimit: 10,
      strictQuery: true,
    });
    const client = httpClient(service);
    const read = await readAllReadySets(client, { pageSize: 10 });
    expect(read).toMatchObject({ stop: 'end', complete: true });
    expect(read.templateSets).toHaveLength(45);
    const pages = service.log
      .filter((r) => r.path === '/v1/ready-template-sets')
      .map((r) => [...r.query.keys()].filter((k) => k !== 'limit').join(','));
    // Page 1; page 2 with every name (refused), then cursor, nextCursor, after (refused), pageToken; pages 3-5 with pageToken only.
    expect(pages).toEqual([
      '',
      'cursor,nextCursor,after,pageToken',
      'cursor',
      'nextCursor',
      'after',
      'pageToken',
      'pageToken',
      'pageToken',
      'pageToken',
    ]);
  });

  it("the studio's request count is every request sent, also those one call sends to find the cursor name", async () => {
    const service = await standIn({
      cursorParam: 'pageToken',
      readySets: 45,
      defaultLimit: 10,
      maxLimit: 10,
      strictQuery: true,
    });
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-count-'));
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const engine = new StudioEngine({ dataDir, client: httpClient(service), dailyCap: 1000 });
    cleanups.push(() => engine.close());
    const read = await readAllReadySets(engine.client, { pageSize: 10 });
    expect(read.templateSets).toHaveLength(45);
    const sent = service.log.filter((r) => r.path.startsWith('/v1/')).length;
    expect(sent).toBe(9);
    expect(engine.spending.requestsUsedToday()).toBe(sent);
  });
});

describe('catalog cache behind the recipe builder (item 7)', () => {
  /** The studio's commands on a data folder, without starting the engine (no background work). */
  function studio(dataDir: string, client: HttpClient, now?: () => Date) {
    const engine = new StudioEngine({ dataDir, client, ...(now ? { now } : {}) });
    const commands = createCommands(engine, new HotFolders(engine));
    const call = async <T>(name: string, args: unknown = {}): Promise<T> => {
      const answer = await runCommand(commands, name, args);
      if (!answer.ok)
        throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
      return answer.result as T;
    };
    return {
      /** What the recipe builder asks for when it opens. */
      openRecipeBuilder: () =>
        Promise.all([call<CatalogView>('catalog.get'), call<LookView[]>('looks.list')]),
      call,
      close: () => engine.close(),
    };
  }

  it('opening the recipe builder costs 10 requests cold and 0 warm, across a restart', async () => {
    const service = await standIn({ cursorParam: 'after', readySets: 45 });
    const dataDir = tempDir();
    const first = studio(dataDir, httpClient(service));
    const [cold, looks] = await first.openRecipeBuilder();
    await first.close();
    const coldRequests = service.log.length;
    // models, fashion-models, venues, poses x5 (default + 4 jewelry types), ready sets (one page), template-sets
    expect(coldRequests).toBe(10);
    expect(cold.readyShoots).toHaveLength(45);
    expect(cold.poses.map((p) => p.type)).toEqual([
      'default',
      'ring',
      'necklace',
      'earring',
      'bracelet',
    ]);
    expect(cold.cache).toMatchObject({ ageSeconds: 0, stale: false, error: null, warnings: [] });
    expect(looks).toHaveLength(1);

    const second = studio(dataDir, httpClient(service));
    const [warm, warmLooks] = await second.openRecipeBuilder();
    await second.close();
    expect(service.log.length - coldRequests).toBe(0);
    expect(warm.readyShoots.map((s) => s.id)).toEqual(cold.readyShoots.map((s) => s.id));
    expect(warmLooks).toEqual(looks);
  });

  it('serves a copy written before the rename to readyShoots, asking the service nothing', async () => {
    const service = await standIn({ cursorParam: 'after', readySets: 45 });
    const dataDir = tempDir();
    const first = studio(dataDir, httpClient(service));
    const [cold] = await first.openRecipeBuilder();
    await first.close();
    // The file as the build before the rename wrote it: the ready shoots under `readySets`.
    const file = path.join(dataDir, CATALOG_CACHE_FILE);
    fs.writeFileSync(
      file,
      fs.readFileSync(file, 'utf8').replaceAll('"readyShoots"', '"readySets"'),
    );
    const before = service.log.length;
    const second = studio(dataDir, httpClient(service));
    const warm = await second.call<CatalogView>('catalog.get');
    await second.close();
    expect(service.log.length - before).toBe(0);
    expect(warm.readyShoots.map((s) => s.id)).toEqual(cold.readyShoots.map((s) => s.id));
  });

  it('keeps one entry per service origin and key fingerprint, and never the key', async () => {
    const service = await standIn();
    const dataDir = tempDir();
    const s = studio(dataDir, httpClient(service));
    await s.openRecipeBuilder();
    await s.close();
    const text = fs.readFileSync(path.join(dataDir, CATALOG_CACHE_FILE), 'utf8');
    expect(text).not.toContain(service.apiKey);
    const file = JSON.parse(text) as { entries: Record<string, unknown> };
    expect(Object.keys(file.entries)).toEqual([
      `${service.url} ${httpClient(service).keyFingerprint}`,
    ]);
    // Another key on the same service is another account: its catalog is read afresh (and refused here).
    const other = studio(dataDir, httpClient(service, 'sk_another_key_000000'));
    await expect(other.call('catalog.get')).rejects.toMatchObject({ code: 'service_401' });
    await other.close();
  });

  it('reads again after a day, and serves the last copy with its age when the service cannot be reached', async () => {
    const service = await standIn();
    const dataDir = tempDir();
    let now = new Date('2025-03-01T09:00:00Z');
    const s = studio(dataDir, httpClient(service), () => now);
    await s.call('catalog.get');
    const afterFirst = service.log.length;
    now = new Date('2025-03-01T20:00:00Z');
    await s.call('catalog.get');
    expect(service.log.length).toBe(afterFirst);
    now = new Date('2025-03-02T10:00:00Z');
    const reread = await s.call<CatalogView>('catalog.get');
    expect(service.log.length).toBe(afterFirst * 2);
    expect(reread.cache).toMatchObject({ fetchedAt: '2025-03-02T10:00:00.000Z', stale: false });
    await s.call('looks.list');

    await service.close();
    now = new Date('2025-03-03T12:00:00Z');
    const offline = await s.call<CatalogView>('catalog.get');
    expect(offline.tools.map((t) => t.id)).toContain('remove_background');
    expect(offline.cache).toMatchObject({
      fetchedAt: '2025-03-02T10:00:00.000Z',
      ageSeconds: 26 * 3600,
      stale: true,
      error: expect.stringMatching(/could not be reached/),
    });
    const looks = await s.call<LookView[]>('looks.list');
    expect(looks).toHaveLength(1);
    await s.close();
  });

  it('without a cached copy, an unreachable service is an error, not an empty catalog', async () => {
    const service = await standIn();
    await service.close();
    const s = studio(tempDir(), httpClient(service));
    await expect(s.call('catalog.get')).rejects.toMatchObject({ code: 'service_0' });
    await s.close();
  });

  it('a look deleted through the studio, or a refresh, reads the list again', async () => {
    const service = await standIn();
    const s = studio(tempDir(), httpClient(service));
    const [look] = await s.call<LookView[]>('looks.list');
    await s.call('looks.delete', { id: look!.id });
    expect(await s.call<LookView[]>('looks.list')).toEqual([]);
    const reads = service.count('GET', '/v1/template-sets');
    expect(reads).toBe(2);
    await s.call('looks.list', { refresh: true });
    expect(service.count('GET', '/v1/template-sets')).toBe(3);
    await s.close();
  });

  it('a damaged cache file is read as empty and rewritten; one that cannot be written costs only the cache', async () => {
    const service = await standIn();
    const damaged = tempDir();
    fs.writeFileSync(
      path.join(damaged, CATALOG_CACHE_FILE),
      '{"version":1,"entries":{"x":{"catalog":{"fetchedAt":"yesterday"',
    );
    const s = studio(damaged, httpClient(service));
    expect((await s.call<CatalogView>('catalog.get')).tools.length).toBeGreaterThan(0);
    await s.close();
    expect(
      JSON.parse(fs.readFileSync(path.join(damaged, CATALOG_CACHE_FILE), 'utf8')),
    ).toMatchObject({ version: 1 });

    const unwritable = tempDir();
    fs.mkdirSync(path.join(unwritable, CATALOG_CACHE_FILE)); // a folder where the file should go
    const t = studio(unwritable, httpClient(service));
    const before = service.log.length;
    expect((await t.call<CatalogView>('catalog.get')).tools.length).toBeGreaterThan(0);
    const [look] = await t.call<LookView[]>('looks.list');
    expect(await t.call('looks.delete', { id: look!.id })).toEqual({ deleted: true });
    await t.close();
    expect(service.log.length - before).toBe(11);
  });

  it('says when the ready shoots could not be read whole', async () => {
    const service = await standIn({ cursorParam: 'pageCursor', readySets: 250 });
    const s = studio(tempDir(), httpClient(service));
    const catalog = await s.call<CatalogView>('catalog.get');
    expect(catalog.readyShoots).toHaveLength(100);
    expect(catalog.cache!.warnings).toEqual([
      'Ready shoots: 100 read in 2 requests, then the service answered a page already read (it ignores our cursor), so reading stopped; the service may have more.',
    ]);
    await s.close();
  });
});
