/**
 * The reference service (test/reference-service, written from the spec alone) follows the spec:
 * these tests speak plain HTTP to it, the way any client would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import {
  startReferenceService,
  type ReferenceService,
  type ReferenceServiceOptions,
} from '../reference-service';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are read deep in assertions, checked by the expectations themselves
type Body = Record<string, any>;
const running: ReferenceService[] = [];
const children: ChildProcess[] = [];
const temps: string[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const dir of temps.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

async function start(options: ReferenceServiceOptions = {}) {
  const service = await startReferenceService({ seed: 7, timeScale: 0.002, ...options });
  running.push(service);
  return service;
}
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'refsvc-test-'));
  temps.push(dir);
  return dir;
}

async function call(
  base: string,
  method: string,
  p: string,
  key: string | null,
  body?: unknown,
  raw?: { bytes: Buffer; type: string },
) {
  const headers: Record<string, string> = {};
  if (key) headers.authorization = `Bearer ${key}`;
  let payload: BodyInit | undefined;
  if (raw) {
    headers['content-type'] = raw.type;
    payload = new Uint8Array(raw.bytes);
  } else if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const res = await fetch(`${base}${p}`, { method, headers, body: payload });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Body };
}

const photo = (r: number) =>
  sharp({ create: { width: 64, height: 48, channels: 3, background: { r, g: 120, b: 200 } } })
    .jpeg()
    .toBuffer();

async function uploadPhoto(service: ReferenceService, key: string, r = 10): Promise<string> {
  const res = await call(service.url, 'POST', '/v1/uploads', key, undefined, {
    bytes: await photo(r),
    type: 'application/octet-stream',
  });
  expect(res.status).toBe(200);
  return res.body.url as string;
}

async function pollUntil(
  service: ReferenceService,
  key: string,
  id: string,
  done: (b: Body) => boolean,
  seen: Body[] = [],
): Promise<Body> {
  for (let i = 0; i < 2000; i++) {
    const res = await call(service.url, 'GET', `/v1/generations/${id}`, key);
    expect(res.status).toBe(200);
    seen.push(res.body);
    if (done(res.body)) return res.body;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`job ${id} never settled`);
}
const settled = (b: Body) => !['processing', 'pack_processing'].includes(b.status as string);

describe('reference service', () => {
  it('answers 401 to missing, malformed and unknown keys on every endpoint', async () => {
    const service = await start();
    for (const p of ['/v1/models', '/v1/account', '/v1/generations/x']) {
      expect((await call(service.url, 'GET', p, null)).status).toBe(401);
      const malformed = await fetch(`${service.url}${p}`, {
        headers: { authorization: 'Token abc' },
      });
      expect(malformed.status).toBe(401);
      const unknown = await call(service.url, 'GET', p, 'rk-nope');
      expect(unknown.status).toBe(401);
      expect(unknown.body).toMatchObject({ success: false, error: expect.any(String) });
    }
  });

  it('enforces the daily cap before any other work, counting every call', async () => {
    const service = await start();
    const { apiKey } = service.createAccount({ email: 'cap@ref.test', diamonds: 100, dailyCap: 3 });
    const url = await uploadPhoto(service, apiKey);
    expect((await call(service.url, 'GET', '/v1/models', apiKey)).status).toBe(200);
    expect((await call(service.url, 'GET', '/v1/generations/unknown', apiKey)).status).toBe(404);
    expect(service.requestsToday(apiKey)).toBe(3);
    const refused = await call(service.url, 'POST', '/v1/generations', apiKey, {
      toolId: 'remove_background',
      images: { user_photo: url },
    });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatch(/\b3\b/);
    expect(refused.body.error).toContain('reached for this key');
    expect(refused.headers.get('retry-after')).toBeNull();
    expect(service.balance('cap@ref.test')).toBe(100);
    expect(service.jobs('cap@ref.test')).toEqual([]);
    service.setDailyCap(apiKey, 10);
    expect(
      (
        await call(service.url, 'POST', '/v1/generations', apiKey, {
          toolId: 'remove_background',
          images: { user_photo: url },
        })
      ).status,
    ).toBe(202);
  });

  it('refuses with 402 naming the required amount and the balance, charging nothing', async () => {
    const service = await start({ chargeExtra: 1 });
    const { apiKey } = service.createAccount({ email: 'poor@ref.test', diamonds: 4 });
    const url = await uploadPhoto(service, apiKey);
    const models = await call(service.url, 'GET', '/v1/models', apiKey);
    expect(
      models.body.models.find((m: Body) => m.id === 'virtual_model').fallbackPriceDiamonds,
    ).toBe(4);
    const res = await call(service.url, 'POST', '/v1/generations', apiKey, {
      toolId: 'virtual_model',
      images: { garment_photo: url, fashion_model: 'person-001' },
    });
    expect(res.status).toBe(402);
    expect(res.body.error).toBe('Insufficient diamonds: required 5, balance 4');
    expect(service.ledger('poor@ref.test').map((e) => e.kind)).toEqual(['grant']);
    expect(service.balance('poor@ref.test')).toBe(4);
  });

  it('validates with 400 in the spec form before charging', async () => {
    const service = await start();
    const { apiKey } = service.createAccount({ email: 'v@ref.test', diamonds: 50 });
    const missing = await call(service.url, 'POST', '/v1/generations', apiKey, {
      toolId: 'virtual_model',
      images: { fashion_model: 'person-001' },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(
      /^virtual_model: missing required image images\.garment_photo/,
    );
    expect(
      (
        await call(service.url, 'POST', '/v1/generations', apiKey, {
          toolId: 'no_such_tool',
          images: {},
        })
      ).status,
    ).toBe(400);
    const unresolvable = await call(service.url, 'POST', '/v1/generations', apiKey, {
      toolId: 'remove_background',
      images: { user_photo: `${service.url}/files/missing.jpg` },
    });
    expect(unresolvable.status).toBe(400);
    expect((await call(service.url, 'GET', '/v1/venues?limit=0', apiKey)).status).toBe(400);
    expect((await call(service.url, 'GET', '/v1/venues?limit=101', apiKey)).status).toBe(400);
    expect(
      (await call(service.url, 'GET', '/v1/poses?limit=100', apiKey)).body.poses.length,
    ).toBeGreaterThan(20);
    expect(
      (await call(service.url, 'GET', '/v1/fashion-models', apiKey)).body.fashionModels,
    ).toHaveLength(20);
    expect(service.balance('v@ref.test')).toBe(50);
  });

  it('sniffs uploads by signature: 415 for non-images, 413 past 8 MB', async () => {
    const service = await start();
    const { apiKey } = service.createAccount({ email: 'up@ref.test', diamonds: 0 });
    const text = await call(service.url, 'POST', '/v1/uploads', apiKey, undefined, {
      bytes: Buffer.from('hello, not an image'),
      type: 'image/jpeg',
    });
    expect(text.status).toBe(415);
    const big = Buffer.concat([await photo(1), Buffer.alloc(8 * 1024 * 1024)]);
    expect(
      (
        await call(service.url, 'POST', '/v1/uploads', apiKey, undefined, {
          bytes: big,
          type: 'image/jpeg',
        })
      ).status,
    ).toBe(413);
    const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: 'red' } })
      .png()
      .toBuffer();
    const ok = await call(service.url, 'POST', '/v1/uploads', apiKey, undefined, {
      bytes: png,
      type: 'application/octet-stream',
    });
    expect(ok.status).toBe(200);
    const fetched = await fetch(ok.body.url as string);
    expect(Buffer.from(await fetched.arrayBuffer()).equals(png)).toBe(true);
  });

  it('charges at creation, completes with decodable results, and hides jobs from other accounts', async () => {
    const service = await start({ idStyle: 'opaque', extraFields: true });
    const { apiKey } = service.createAccount({ email: 'a@ref.test', diamonds: 20 });
    const other = service.createAccount({ email: 'b@ref.test', diamonds: 20 });
    const url = await uploadPhoto(service, apiKey);
    const created = await call(service.url, 'POST', '/v1/generations', apiKey, {
      toolId: 'clothing_ecom_pack',
      images: { user_photo: url },
    });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ success: true, status: 'processing', region: 'ref-eu-1' });
    expect(created.body.id).toMatch(/^[A-Za-z0-9]{22}$/);
    expect(service.balance('a@ref.test')).toBe(8);
    expect(
      (await call(service.url, 'GET', `/v1/generations/${created.body.id}`, other.apiKey)).status,
    ).toBe(404);
    const done = await pollUntil(service, apiKey, created.body.id as string, settled);
    expect(done.status).toBe('completed');
    expect(done.resultUrls).toHaveLength(4);
    const images = await Promise.all(
      (done.resultUrls as string[]).map(async (u) =>
        Buffer.from(await (await fetch(u)).arrayBuffer()),
      ),
    );
    for (const bytes of images) expect((await sharp(bytes).metadata()).format).toBe('jpeg');
    expect(new Set(images.map((b) => b.toString('base64'))).size).toBe(4);
    expect(service.ledger('a@ref.test').map((e) => [e.kind, e.delta])).toEqual([
      ['grant', 20],
      ['charge', -12],
    ]);
  });

  it('refunds a job that fails, with an errorMessage and no results', async () => {
    const service = await start({ failJobs: 1 });
    const { apiKey } = service.createAccount({ email: 'f@ref.test', diamonds: 10 });
    const url = await uploadPhoto(service, apiKey);
    const created = await call(service.url, 'POST', '/v1/generations', apiKey, {
      toolId: 'remove_background',
      images: { user_photo: url },
    });
    expect(service.balance('f@ref.test')).toBe(9);
    const done = await pollUntil(service, apiKey, created.body.id as string, settled);
    expect(done).toMatchObject({
      status: 'failed',
      resultUrls: [],
      errorMessage: expect.any(String),
    });
    expect(service.balance('f@ref.test')).toBe(10);
    expect(service.jobs('f@ref.test')[0]).toMatchObject({
      status: 'failed',
      charged: 1,
      refunded: 1,
    });
  });

  it('answers 500 after the charge and refunds it (the job is failed)', async () => {
    const service = await start({ fail500AfterCharge: 1 });
    const { apiKey } = service.createAccount({ email: 'e@ref.test', diamonds: 10 });
    const url = await uploadPhoto(service, apiKey);
    const res = await call(service.url, 'POST', '/v1/generations', apiKey, {
      toolId: 'virtual_model',
      images: { garment_photo: url, fashion_model: 'person-002' },
    });
    expect(res.status).toBe(500);
    expect(res.body.success).toBe(false);
    expect(service.ledger('e@ref.test').map((e) => [e.kind, e.delta])).toEqual([
      ['grant', 10],
      ['charge', -4],
      ['refund', 4],
    ]);
    expect(service.jobs('e@ref.test')).toMatchObject([
      { status: 'failed', charged: 4, refunded: 4 },
    ]);
  });

  it('answers transient 429s with Retry-After, not counted against the cap', async () => {
    const service = await start({ rateLimit: { probability: 1, retryAfterSeconds: 2 } });
    const { apiKey } = service.createAccount({ email: 'r@ref.test', diamonds: 0, dailyCap: 1 });
    const res = await call(service.url, 'GET', '/v1/models', apiKey);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('2');
    expect(res.body.error).not.toContain('reached for this key');
    expect(service.requestsToday(apiKey)).toBe(0);
    service.setOptions({ rateLimit: { probability: 0, retryAfterSeconds: 2 } });
    expect((await call(service.url, 'GET', '/v1/models', apiKey)).status).toBe(200);
  });

  it('runs catalog jobs shot by shot: pack statuses, progressive results, partial failure kept, total failure refunded', async () => {
    const service = await start({
      catalogStatus: 'pack',
      failShots: 0.5,
      jobSeconds: [1, 40],
      timeScale: 0.01,
    });
    const { apiKey } = service.createAccount({ email: 'c@ref.test', diamonds: 200 });
    const sets = await call(service.url, 'GET', '/v1/ready-template-sets?limit=50', apiKey);
    const set = (sets.body.templateSets as Body[]).find((s) => s.shotCount === 5)!;
    const outcomes = new Set<string>();
    for (let i = 0; i < 8; i++) {
      const url = await uploadPhoto(service, apiKey, i * 20);
      const before = service.balance('c@ref.test');
      const created = await call(service.url, 'POST', '/v1/catalog-jobs', apiKey, {
        readyTemplateSetId: set.id,
        images: { garment_photo: url },
      });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({
        status: 'pack_processing',
        packTotal: 5,
        diamondCost: 15,
      });
      expect(service.balance('c@ref.test')).toBe(before - 15);
      const seen: Body[] = [];
      const done = await pollUntil(
        service,
        apiKey,
        created.body.mediaItemId as string,
        settled,
        seen,
      );
      for (const [k, poll] of seen.entries()) {
        expect(poll.resultUrls).toHaveLength(poll.packCompleted as number);
        if (k > 0)
          expect(seen[k - 1]!.resultUrls).toEqual(
            (poll.resultUrls as string[]).slice(0, seen[k - 1]!.resultUrls.length),
          );
        if (poll.status === 'pack_processing')
          expect(poll.packCompleted + poll.packFailed).toBeLessThan(5);
      }
      expect(done.packCompleted + done.packFailed).toBe(5);
      if (done.packCompleted === 0) {
        expect(done.status).toBe('pack_failed');
        expect(service.balance('c@ref.test')).toBe(before);
      } else {
        expect(done.status).toBe('pack_completed');
        expect(service.balance('c@ref.test')).toBe(before - 15);
      }
      outcomes.add(done.status as string);
    }
    expect(outcomes.has('pack_completed')).toBe(true);
    expect(
      (
        await call(service.url, 'POST', '/v1/catalog-jobs', apiKey, {
          readyTemplateSetId: 'shoot-13',
          images: { garment_photo: 'x' },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await call(service.url, 'POST', '/v1/catalog-jobs', apiKey, {
          images: { garment_photo: 'x' },
        })
      ).status,
    ).toBe(400);
  });

  it('refunds a catalog job in full when every shot fails, and answers the spec statuses by default', async () => {
    const service = await start({ failShots: 1 });
    const { apiKey } = service.createAccount({ email: 'cf@ref.test', diamonds: 30 });
    const url = await uploadPhoto(service, apiKey);
    const created = await call(service.url, 'POST', '/v1/catalog-jobs', apiKey, {
      readyTemplateSetId: 'shoot-01',
      images: { garment_photo: url },
      shotIds: ['take-1'],
    });
    expect(created.body).toMatchObject({ packTotal: 1, diamondCost: 3 });
    const done = await pollUntil(service, apiKey, created.body.mediaItemId as string, settled);
    expect(done).toMatchObject({
      status: 'failed',
      packFailed: 1,
      packCompleted: 0,
      errorMessage: expect.any(String),
    });
    expect(service.balance('cf@ref.test')).toBe(30);
    expect(service.ledger('cf@ref.test').map((e) => e.kind)).toEqual(['grant', 'charge', 'refund']);
  });

  it('serves results from another host as extension-less application/octet-stream', async () => {
    const service = await start({ resultsOnOtherHost: true });
    const { apiKey } = service.createAccount({ email: 'o@ref.test', diamonds: 10 });
    const url = await uploadPhoto(service, apiKey);
    const created = await call(service.url, 'POST', '/v1/generations', apiKey, {
      toolId: 'remove_background',
      images: { user_photo: url },
    });
    const done = await pollUntil(service, apiKey, created.body.id as string, settled);
    const result = new URL(done.resultUrls[0] as string);
    expect(result.origin).not.toBe(new URL(service.url).origin);
    expect(result.pathname).not.toMatch(/\.[a-z]+$/);
    const res = await fetch(result);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect((await sharp(Buffer.from(await res.arrayBuffer())).metadata()).format).toBe('png');
  });

  it('pages ready template sets with its own cursor name; another name is ignored (first page again)', async () => {
    const service = await start({ readySetPageSize: 4 });
    const { apiKey } = service.createAccount({ email: 'p@ref.test', diamonds: 0 });
    const ids: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const res = await call(
        service.url,
        'GET',
        `/v1/ready-template-sets${cursor ? `?after=${cursor}` : ''}`,
        apiKey,
      );
      ids.push(...(res.body.templateSets as Body[]).map((s) => s.id as string));
      cursor = res.body.nextCursor as string | null;
      if (!cursor) break;
    }
    expect(ids).toHaveLength(12);
    expect(new Set(ids).size).toBe(12);
    const first = await call(service.url, 'GET', '/v1/ready-template-sets', apiKey);
    const wrongName = await call(
      service.url,
      'GET',
      `/v1/ready-template-sets?cursor=${first.body.nextCursor}`,
      apiKey,
    );
    expect(wrongName.body.templateSets).toEqual(first.body.templateSets);
    expect(
      (await call(service.url, 'GET', '/v1/ready-template-sets/shoot-13', apiKey)).status,
    ).toBe(404);
    expect(
      (await call(service.url, 'GET', '/v1/ready-template-sets/shoot-02', apiKey)).body.templateSet
        .shots.length,
    ).toBe(3);
  });

  it('saves template sets and replays them, refusing a different toolId', async () => {
    const service = await start();
    const { apiKey } = service.createAccount({ email: 't@ref.test', diamonds: 50 });
    const url = await uploadPhoto(service, apiKey);
    expect(
      (
        await call(service.url, 'POST', '/v1/template-sets', apiKey, {
          toolId: 'virtual_model',
          images: { fashion_model: 'person-003' },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await call(service.url, 'POST', '/v1/template-sets', apiKey, {
          label: 'x',
          toolId: 'remove_background',
          images: { fashion_model: 'person-003' },
        })
      ).status,
    ).toBe(400);
    const saved = await call(service.url, 'POST', '/v1/template-sets', apiKey, {
      label: 'Look',
      toolId: 'virtual_model',
      images: { fashion_model: 'person-003', venue: 'place-002' },
      pose: 'stance-004',
    });
    expect(saved.status).toBe(201);
    const wrong = await call(service.url, 'POST', '/v1/generations', apiKey, {
      templateSetId: saved.body.id,
      toolId: 'outfit_photo',
      images: { garment_photo: url },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toContain("saved for toolId 'virtual_model'");
    const replay = await call(service.url, 'POST', '/v1/generations', apiKey, {
      templateSetId: saved.body.id,
      images: { garment_photo: url },
    });
    expect(replay.status).toBe(202);
    const list = await call(service.url, 'GET', '/v1/template-sets', apiKey);
    expect(list.body.templateSets[0]).toMatchObject({
      label: 'Look',
      toolId: 'virtual_model',
      pose: 'stance-004',
    });
    expect(list.body.templateSets[0].images.fashion_model).toMatch(/^http/);
    expect(
      (await call(service.url, 'DELETE', `/v1/template-sets/${saved.body.id}`, apiKey)).status,
    ).toBe(200);
    expect(
      (await call(service.url, 'DELETE', `/v1/template-sets/${saved.body.id}`, apiKey)).status,
    ).toBe(404);
    const account = await call(service.url, 'GET', '/v1/account', apiKey);
    expect(account.body).toMatchObject({
      email: 't@ref.test',
      diamondBalance: 46,
      plan: { status: 'active', renewsAt: expect.stringMatching(/Z$/) },
    });
  });

  it('keeps state across a restart of its process (kill -9): ledger, counts, files, and unfinished jobs resume', async () => {
    const dir = tempDir();
    const statePath = path.join(dir, 'state.json');
    const token = 'admin-secret';
    const launch = async (port = 0) => {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          'test/reference-service/main.ts',
          '--port',
          String(port),
          '--state',
          statePath,
          '--admin-token',
          token,
          '--options',
          JSON.stringify({ seed: 3, timeScale: 0.05 }),
        ],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      children.push(child);
      const line = await new Promise<string>((resolve, reject) => {
        readline.createInterface({ input: child.stdout! }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`reference service exited ${code}`)));
      });
      return { child, url: (JSON.parse(line) as { listening: string }).listening };
    };
    const admin = async (url: string, method: string, p: string, body?: unknown, t = token) => {
      const res = await fetch(`${url}${p}`, {
        method,
        headers: { 'x-ref-token': t, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as Body };
    };
    const first = await launch();
    expect(
      (await admin(first.url, 'GET', '/_ref/balance?email=x', undefined, 'wrong')).status,
    ).toBe(401);
    const { apiKey } = (
      await admin(first.url, 'POST', '/_ref/accounts', { email: 'k@ref.test', diamonds: 20 })
    ).body as { apiKey: string };
    const up = await call(first.url, 'POST', '/v1/uploads', apiKey, undefined, {
      bytes: await photo(99),
      type: 'image/jpeg',
    });
    const created = await call(first.url, 'POST', '/v1/generations', apiKey, {
      toolId: 'virtual_model',
      images: { garment_photo: up.body.url, fashion_model: 'person-001' },
    });
    expect(created.status).toBe(202);
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    const second = await launch(Number(new URL(first.url).port));
    expect(second.url).toBe(first.url);
    expect((await admin(second.url, 'GET', '/_ref/balance?email=k@ref.test')).body.balance).toBe(
      16,
    );
    expect(
      (await admin(second.url, 'GET', '/_ref/requests-today?apiKey=' + apiKey)).body.requests,
    ).toBe(2);
    expect((await fetch(up.body.url as string)).status).toBe(200);
    const seen: Body[] = [];
    for (let i = 0; i < 500 && !(seen.at(-1)?.status === 'completed'); i++) {
      seen.push((await call(second.url, 'GET', `/v1/generations/${created.body.id}`, apiKey)).body);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(seen.at(-1)).toMatchObject({ status: 'completed', resultUrls: [expect.any(String)] });
    const ledger = (await admin(second.url, 'GET', '/_ref/ledger?email=k@ref.test')).body
      .ledger as Body[];
    expect(ledger.map((e) => [e.kind, e.delta])).toEqual([
      ['grant', 20],
      ['charge', -4],
    ]);
    const next = await call(second.url, 'POST', '/v1/uploads', apiKey, undefined, {
      bytes: await photo(98),
      type: 'image/jpeg',
    });
    expect(next.body.id).not.toBe(up.body.id);
  });
});
