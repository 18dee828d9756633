/**
 * The reference service's latitude switches (what a production service may do where the spec is
 * silent) each do what options.ts says: plain fetch against the service, money read from its ledger.
 */
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
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

async function start(options: ReferenceServiceOptions = {}) {
  const service = await startReferenceService({ seed: 11, timeScale: 0.002, ...options });
  running.push(service);
  const email = `latitude-${running.length}@ref.test`;
  const { apiKey } = service.createAccount({ email, diamonds: 100 });
  return { service, email, key: apiKey };
}

type Call = { status: number; headers: Headers; text: string; body: Body | null };
async function call(
  base: string,
  method: string,
  p: string,
  key: string | null,
  opts: { json?: unknown; bytes?: Buffer; idem?: string } = {},
): Promise<Call> {
  const headers: Record<string, string> = {};
  if (key) headers.authorization = `Bearer ${key}`;
  if (opts.idem) headers['idempotency-key'] = opts.idem;
  let payload: BodyInit | undefined;
  if (opts.bytes) {
    headers['content-type'] = 'application/octet-stream';
    payload = new Uint8Array(opts.bytes);
  } else if (opts.json !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(opts.json);
  }
  const res = await fetch(`${base}${p}`, { method, headers, body: payload });
  const text = await res.text();
  let body: Body | null = null;
  try {
    body = JSON.parse(text) as Body;
  } catch {
    body = null;
  }
  return { status: res.status, headers: res.headers, text, body };
}

const photo = () =>
  sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 90, g: 120, b: 200 } } })
    .jpeg()
    .toBuffer();

async function upload(s: { service: ReferenceService; key: string }, idem?: string) {
  const res = await call(s.service.url, 'POST', '/v1/uploads', s.key, {
    bytes: await photo(),
    ...(idem ? { idem } : {}),
  });
  expect(res.status).toBe(200);
  return res;
}

const removeBackground = (url: string) => ({
  toolId: 'remove_background',
  images: { user_photo: url },
});
const charges = (service: ReferenceService, email: string) =>
  service.ledger(email).filter((e) => e.kind === 'charge');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Time-limited behaviours last this long: wide enough for a loaded machine's first calls to land inside. */
const WINDOW_MS = 1000;

describe('reference service latitude: idempotency and gateways', () => {
  it('echoes Idempotency-Key on uploads only, on every write, or never (the default)', async () => {
    for (const echo of [undefined, 'none', 'uploads', 'all'] as const) {
      const s = await start(echo ? { echoIdempotencyKey: echo } : {});
      const up = await upload(s, 'k-up');
      const create = await call(s.service.url, 'POST', '/v1/generations', s.key, {
        json: removeBackground(up.body!.url as string),
        idem: 'k-create',
      });
      expect(create.status).toBe(202);
      const poll = await call(
        s.service.url,
        'GET',
        `/v1/generations/${create.body!.id as string}`,
        s.key,
        { idem: 'k-poll' },
      );
      expect(up.headers.get('idempotency-key')).toBe(
        echo === 'uploads' || echo === 'all' ? 'k-up' : null,
      );
      expect(create.headers.get('idempotency-key')).toBe(echo === 'all' ? 'k-create' : null);
      expect(poll.headers.get('idempotency-key')).toBeNull();
    }
  });

  it('gatewayTimeoutFirstCreates: charges, answers 504 HTML; a same-key retry gets 409 while the backend holds, then the stored 202', async () => {
    const s = await start({
      honourIdempotencyKey: true,
      idempotencyInFlight409: true,
      gatewayTimeoutFirstCreates: 1,
      backendHoldMs: WINDOW_MS,
    });
    const url = (await upload(s)).body!.url as string;
    const first = await call(s.service.url, 'POST', '/v1/generations', s.key, {
      json: removeBackground(url),
      idem: 'k1',
    });
    expect(first.status).toBe(504);
    expect(first.headers.get('content-type')).toMatch(/^text\/html/);
    expect(first.body).toBeNull();
    expect(charges(s.service, s.email)).toHaveLength(1);
    const jobId = s.service.jobs(s.email)[0]!.id;

    const during = await call(s.service.url, 'POST', '/v1/generations', s.key, {
      json: removeBackground(url),
      idem: 'k1',
    });
    expect(during.status).toBe(409);
    expect(during.body).toEqual({
      success: false,
      error: 'A request with this Idempotency-Key is still being processed',
    });
    await sleep(WINDOW_MS + 100);
    const after = await call(s.service.url, 'POST', '/v1/generations', s.key, {
      json: removeBackground(url),
      idem: 'k1',
    });
    expect(after.status).toBe(202);
    expect(after.body).toEqual({ success: true, id: jobId, status: 'processing' });
    expect(charges(s.service, s.email)).toHaveLength(1);
    expect(s.service.balance(s.email)).toBe(99);

    // Only the first N: the next create answers normally.
    const next = await call(s.service.url, 'POST', '/v1/generations', s.key, {
      json: removeBackground(url),
      idem: 'k2',
    });
    expect(next.status).toBe(202);
  });

  it('without idempotencyInFlight409 a retry during the hold is a new request (charged again)', async () => {
    const s = await start({
      honourIdempotencyKey: true,
      gatewayTimeoutFirstCreates: 1,
      backendHoldMs: WINDOW_MS,
    });
    const url = (await upload(s)).body!.url as string;
    const send = () =>
      call(s.service.url, 'POST', '/v1/generations', s.key, {
        json: removeBackground(url),
        idem: 'k1',
      });
    expect((await send()).status).toBe(504);
    const retry = await send();
    expect(retry.status).toBe(202);
    expect(charges(s.service, s.email)).toHaveLength(2);
    // The retry's record was stored first and is kept.
    await sleep(WINDOW_MS + 100);
    expect((await send()).body).toEqual(retry.body);
    expect(charges(s.service, s.email)).toHaveLength(2);
  });

  it('gatewayTimeoutFirstCreates counts catalog jobs too, and times out without idempotency', async () => {
    const s = await start({ gatewayTimeoutFirstCreates: 1 });
    const url = (await upload(s)).body!.url as string;
    const res = await call(s.service.url, 'POST', '/v1/catalog-jobs', s.key, {
      json: { readyTemplateSetId: 'shoot-01', images: { garment_photo: url } },
    });
    expect(res.status).toBe(504);
    expect(s.service.jobs(s.email)).toMatchObject([{ kind: 'catalog', status: 'processing' }]);
    expect(charges(s.service, s.email)).toHaveLength(1);
  });

  it('replay402: a 402 is stored under the key and replayed after the balance is topped up', async () => {
    for (const replay402 of [true, false]) {
      const s = await start({ honourIdempotencyKey: true, replay402 });
      const url = (await upload(s)).body!.url as string;
      s.service.grant(s.email, -100);
      const send = () =>
        call(s.service.url, 'POST', '/v1/generations', s.key, {
          json: removeBackground(url),
          idem: 'k402',
        });
      const first = await send();
      expect(first.status).toBe(402);
      s.service.grant(s.email, 10);
      const again = await send();
      if (replay402) {
        expect(again.status).toBe(402);
        expect(again.body).toEqual(first.body);
        expect(charges(s.service, s.email)).toHaveLength(0);
      } else {
        expect(again.status).toBe(202);
        expect(charges(s.service, s.email)).toHaveLength(1);
      }
    }
  });

  it('idempotencyKeyReuse: a known key with another body is refused 422 naming the key, 400 in Stripe words, or given the stored answer', async () => {
    for (const idempotencyKeyReuse of ['refuse', 'refuse400', 'replay'] as const) {
      const s = await start({ honourIdempotencyKey: true, idempotencyKeyReuse });
      const url = (await upload(s)).body!.url as string;
      const first = await call(s.service.url, 'POST', '/v1/generations', s.key, {
        json: removeBackground(url),
        idem: 'k-reuse',
      });
      expect(first.status).toBe(202);
      const other = await call(s.service.url, 'POST', '/v1/generations', s.key, {
        json: { toolId: 'no_such_tool', images: { user_photo: url } },
        idem: 'k-reuse',
      });
      if (idempotencyKeyReuse === 'refuse') {
        expect(other.status).toBe(422);
        expect(other.body!.error).toContain('k-reuse');
      } else if (idempotencyKeyReuse === 'refuse400') {
        expect(other.status).toBe(400);
        expect(other.body!.error).toMatch(/idempotent requests .* same parameters/);
      } else {
        expect(other.status).toBe(202);
        expect(other.body).toEqual(first.body);
      }
      // An unknown key with that body is refused for the body, nothing charged.
      const fresh = await call(s.service.url, 'POST', '/v1/generations', s.key, {
        json: { toolId: 'no_such_tool', images: { user_photo: url } },
        idem: 'k-fresh',
      });
      expect(fresh.status).toBe(400);
      expect(charges(s.service, s.email)).toHaveLength(1);
    }
  });

  it('idempotencyKeyTtlMs: a key record is forgotten after its time, and the same request charged anew', async () => {
    const s = await start({ honourIdempotencyKey: true, idempotencyKeyTtlMs: 300 });
    const url = (await upload(s)).body!.url as string;
    const send = () =>
      call(s.service.url, 'POST', '/v1/generations', s.key, {
        json: removeBackground(url),
        idem: 'k-ttl',
      });
    const first = await send();
    expect((await send()).body).toEqual(first.body);
    expect(charges(s.service, s.email)).toHaveLength(1);
    await sleep(400);
    const late = await send();
    expect(late.status).toBe(202);
    expect(late.body!.id).not.toBe(first.body!.id);
    expect(charges(s.service, s.email)).toHaveLength(2);
  });

  it('refusedCreateReplaysFirst: a keyed create refused for its body gets the first charged reply, uncharged', async () => {
    const s = await start({ refusedCreateReplaysFirst: true });
    const url = (await upload(s)).body!.url as string;
    const first = await call(s.service.url, 'POST', '/v1/generations', s.key, {
      json: removeBackground(url),
      idem: 'k-1',
    });
    expect(first.status).toBe(202);
    await call(s.service.url, 'POST', '/v1/generations', s.key, {
      json: removeBackground(url),
      idem: 'k-2',
    });
    const refused = { toolId: 'no-such-tool' };
    const replayed = await call(s.service.url, 'POST', '/v1/generations', s.key, {
      json: refused,
      idem: 'k-3',
    });
    expect(replayed.status).toBe(202);
    expect(replayed.body).toEqual(first.body);
    // Without a key the refusal stands.
    const plain = await call(s.service.url, 'POST', '/v1/generations', s.key, { json: refused });
    expect(plain.status).toBe(400);
    expect(charges(s.service, s.email)).toHaveLength(2);
  });

  it('logs every request with its Idempotency-Key and whether it carried Authorization', async () => {
    const s = await start();
    const up = await upload(s, 'k-up');
    await call(s.service.url, 'GET', '/v1/models', null);
    await fetch(up.body!.url as string);
    const log = s.service.requests();
    expect(log.map((e) => [e.method, e.kind, e.idempotencyKey, e.authorization, e.status])).toEqual(
      [
        ['POST', 'api', 'k-up', true, 200],
        ['GET', 'api', null, false, 401],
        ['GET', 'upload', null, false, 200],
      ],
    );
    expect(s.service.resultRequests()).toEqual([]);
  });
});

async function createJob(s: { service: ReferenceService; key: string }, body: unknown) {
  const catalog = (body as Body).readyTemplateSetId !== undefined;
  const res = await call(
    s.service.url,
    'POST',
    catalog ? '/v1/catalog-jobs' : '/v1/generations',
    s.key,
    { json: body },
  );
  expect(res.status).toBe(catalog ? 200 : 202);
  return { id: (catalog ? res.body!.mediaItemId : res.body!.id) as string, answer: res.body! };
}
async function poll(s: { service: ReferenceService; key: string }, id: string) {
  const res = await call(s.service.url, 'GET', `/v1/generations/${id}`, s.key);
  return { status: res.status, body: res.body! };
}
async function pollUntil(
  s: { service: ReferenceService; key: string },
  id: string,
  done: (b: Body) => boolean,
): Promise<Body> {
  for (let i = 0; i < 1000; i++) {
    const { status, body } = await poll(s, id);
    expect(status).toBe(200);
    if (done(body)) return body;
    await sleep(10);
  }
  throw new Error(`job ${id} never got there`);
}
const ended = (b: Body) => /completed|failed/.test(b.status as string);
async function completedGeneration(options: ReferenceServiceOptions) {
  const s = await start(options);
  const url = (await upload(s)).body!.url as string;
  const { id } = await createJob(s, removeBackground(url));
  const body = await pollUntil(s, id, (b) => ended(b) && b.resultUrls.length > 0);
  return { ...s, id, resultUrl: body.resultUrls[0] as string };
}

describe('reference service latitude: polls and result URLs', () => {
  it('catalogQueuedMs: a catalog job polls pack_queued with null counts, and its shots start after', async () => {
    const s = await start({ catalogQueuedMs: WINDOW_MS, jobSeconds: [0, 0] });
    const url = (await upload(s)).body!.url as string;
    const created = Date.now();
    const { id } = await createJob(s, {
      readyTemplateSetId: 'shoot-01',
      images: { garment_photo: url },
    });
    const first = await poll(s, id);
    expect(first.body).toMatchObject({
      status: 'pack_queued',
      resultUrls: [],
      packTotal: null,
      packCompleted: null,
      packFailed: null,
    });
    const final = await pollUntil(s, id, (b) => b.status !== 'pack_queued');
    expect(Date.now() - created).toBeGreaterThanOrEqual(WINDOW_MS);
    const done = await pollUntil(s, id, ended);
    expect(done).toMatchObject({ status: 'completed', packTotal: 2, packCompleted: 2 });
    expect(final.packTotal).toBe(2);
  });

  it('completedEmptyMs: a generation first polls completed with no resultUrls', async () => {
    const s = await start({ completedEmptyMs: WINDOW_MS });
    const url = (await upload(s)).body!.url as string;
    const { id } = await createJob(s, removeBackground(url));
    const first = await pollUntil(s, id, ended);
    expect(first).toMatchObject({ status: 'completed', resultUrls: [] });
    const later = await pollUntil(s, id, (b) => b.resultUrls.length > 0);
    expect(later.status).toBe('completed');
    expect(later.resultUrls).toHaveLength(1);
  });

  it('catalogShotsField: catalog polls carry shots [{id, status, imageUrl}]; not by default', async () => {
    for (const catalogShotsField of [true, false]) {
      const s = await start({ catalogShotsField });
      const url = (await upload(s)).body!.url as string;
      const { id } = await createJob(s, {
        readyTemplateSetId: 'shoot-01',
        images: { garment_photo: url },
      });
      const done = await pollUntil(s, id, ended);
      if (!catalogShotsField) {
        expect(done.shots).toBeUndefined();
        continue;
      }
      expect(done.shots.map((x: Body) => [x.id, x.status])).toEqual([
        ['take-1', 'completed'],
        ['take-2', 'completed'],
      ]);
      expect(new Set(done.shots.map((x: Body) => x.imageUrl))).toEqual(new Set(done.resultUrls));
    }
  });

  it('resultUrlTtlMs + resultFailFirst: signed URLs, a 503 first, 403 XML once expired or tampered', async () => {
    const s = await completedGeneration({ resultUrlTtlMs: WINDOW_MS, resultFailFirst: 1 });
    expect(s.resultUrl).toMatch(/\?exp=\d+&sig=[0-9a-f]+$/);
    const busy = await fetch(s.resultUrl);
    expect(busy.status).toBe(503);
    const ok = await fetch(s.resultUrl);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('image/png');
    expect((await sharp(Buffer.from(await ok.arrayBuffer())).metadata()).format).toBe('png');
    const tampered = await fetch(s.resultUrl.replace(/sig=./, 'sig=x'));
    expect(tampered.status).toBe(403);
    expect(await tampered.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
    const unsigned = await fetch(s.resultUrl.replace(/\?.*$/, ''));
    expect(unsigned.status).toBe(403);
    await sleep(WINDOW_MS + 100);
    const expired = await fetch(s.resultUrl);
    expect(expired.status).toBe(403);
    expect(expired.headers.get('content-type')).toBe('application/xml');
    expect(await expired.text()).toMatch(/<Code>AccessDenied<\/Code>.*expired/);
    const fresh = (await poll(s, s.id)).body.resultUrls[0] as string;
    expect(fresh).not.toBe(s.resultUrl);
    expect((await fetch(fresh)).status).toBe(200);
    expect(s.service.resultRequests().map((e) => e.status)).toEqual([503, 200, 403, 403, 403, 200]);
  });

  it('resultUrlsNeedKey: results under /v1/files/ answer 401 without the Bearer key, 404 to another account', async () => {
    const s = await completedGeneration({ resultUrlsNeedKey: true });
    expect(s.resultUrl.startsWith(`${s.service.url}/v1/files/`)).toBe(true);
    expect((await fetch(s.resultUrl)).status).toBe(401);
    const other = s.service.createAccount({ email: 'other@ref.test', diamonds: 0 }).apiKey;
    const foreign = await fetch(s.resultUrl, { headers: { authorization: `Bearer ${other}` } });
    expect(foreign.status).toBe(404);
    const owned = await fetch(s.resultUrl, { headers: { authorization: `Bearer ${s.key}` } });
    expect(owned.status).toBe(200);
    expect(
      Buffer.from(await owned.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    expect(s.service.resultRequests().map((e) => [e.authorization, e.status])).toEqual([
      [false, 401],
      [true, 404],
      [true, 200],
    ]);
  });

  it('relativeResultUrls: resultUrls are paths on the service', async () => {
    const s = await completedGeneration({ relativeResultUrls: true });
    expect(s.resultUrl).toMatch(/^\/results\/[A-Za-z0-9-]+\.png$/);
    expect((await fetch(`${s.service.url}${s.resultUrl}`)).status).toBe(200);
  });

  it('packTotalFullSet: a subset of shots reports the full set as packTotal, makes and charges only the asked ones', async () => {
    for (const packTotalFullSet of [true, false]) {
      const s = await start({ packTotalFullSet, catalogStatus: 'pack' });
      const url = (await upload(s)).body!.url as string;
      const { id, answer } = await createJob(s, {
        readyTemplateSetId: 'shoot-03',
        shotIds: ['take-2'],
        images: { garment_photo: url },
      });
      const total = packTotalFullSet ? 4 : 1;
      expect(answer).toMatchObject({ packTotal: total, diamondCost: 3 });
      const done = await pollUntil(s, id, ended);
      expect(done).toMatchObject({ status: 'pack_completed', packTotal: total, packCompleted: 1 });
      expect(done.resultUrls).toHaveLength(1);
      expect(charges(s.service, s.email).map((e) => e.delta)).toEqual([-3]);
    }
  });

  it('catalogPartialFailedStatus + failShotIds: one failed shot ends the job failed, resultUrls [], counters kept, not refunded', async () => {
    for (const catalogPartialFailedStatus of [true, false]) {
      const s = await start({ catalogPartialFailedStatus, failShotIds: ['take-2'] });
      const url = (await upload(s)).body!.url as string;
      const { id } = await createJob(s, {
        readyTemplateSetId: 'shoot-02',
        images: { garment_photo: url },
      });
      const done = await pollUntil(s, id, ended);
      expect(done).toMatchObject({
        status: catalogPartialFailedStatus ? 'failed' : 'completed',
        packTotal: 3,
        packCompleted: 2,
        packFailed: 1,
      });
      expect(done.resultUrls).toHaveLength(catalogPartialFailedStatus ? 0 : 2);
      expect(s.service.ledger(s.email).map((e) => e.kind)).toEqual(['grant', 'charge']);
    }
  });
});

describe('reference service latitude: balance, limits, ids and shapes', () => {
  it("creditOnFirstPoll: each account is credited once, at its first poll, as 'external'", async () => {
    const s = await start({ creditOnFirstPoll: 50 });
    expect((await poll(s, 'no-such-job')).status).toBe(404);
    expect(s.service.balance(s.email)).toBe(150);
    await poll(s, 'no-such-job');
    expect(s.service.balance(s.email)).toBe(150);
    expect(s.service.ledger(s.email).map((e) => [e.kind, e.delta])).toEqual([
      ['grant', 100],
      ['external', 50],
    ]);
  });

  it('drainBalanceAfterFirstCreate: the balance drops to 0 after the first charge', async () => {
    const s = await start({ drainBalanceAfterFirstCreate: true });
    const url = (await upload(s)).body!.url as string;
    await createJob(s, removeBackground(url));
    expect(s.service.balance(s.email)).toBe(0);
    expect(s.service.ledger(s.email).map((e) => [e.kind, e.delta])).toEqual([
      ['grant', 100],
      ['charge', -1],
      ['external', -99],
    ]);
    s.service.grant(s.email, 5);
    await createJob(s, removeBackground(url));
    expect(s.service.balance(s.email)).toBe(4);
  });

  it('rateLimit.message and dailyCapMessage set the 429 wording', async () => {
    const s = await start({
      rateLimit: { probability: 1, retryAfterSeconds: 3, message: 'Slow down' },
      dailyCapMessage: 'Quota exceeded for quota metric requests',
    });
    const limited = await call(s.service.url, 'GET', '/v1/models', s.key);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect(limited.body).toEqual({ success: false, error: 'Slow down' });
    s.service.setOptions({ rateLimit: { probability: 0, retryAfterSeconds: 3 } });
    s.service.setDailyCap(s.key, 1);
    expect((await call(s.service.url, 'GET', '/v1/models', s.key)).status).toBe(200);
    const capped = await call(s.service.url, 'GET', '/v1/models', s.key);
    expect(capped.status).toBe(429);
    expect(capped.body).toEqual({
      success: false,
      error: 'Quota exceeded for quota metric requests',
    });
  });

  it('poll404ForMs: a new job answers 404 to polls for a while, then 200', async () => {
    const s = await start({ poll404ForMs: WINDOW_MS });
    const url = (await upload(s)).body!.url as string;
    const { id } = await createJob(s, removeBackground(url));
    const early = await poll(s, id);
    expect(early.status).toBe(404);
    expect(early.body).toEqual({ success: false, error: `Generation ${id} not found` });
    await sleep(WINDOW_MS + 100);
    expect((await poll(s, id)).status).toBe(200);
  });

  it('uploadUrlTtlMs: an older upload is refused with 400 (no charge) and its URL answers 403', async () => {
    const s = await start({ uploadUrlTtlMs: WINDOW_MS });
    const url = (await upload(s)).body!.url as string;
    await createJob(s, removeBackground(url));
    expect((await fetch(url)).status).toBe(200);
    await sleep(WINDOW_MS + 100);
    const late = await call(s.service.url, 'POST', '/v1/generations', s.key, {
      json: removeBackground(url),
    });
    expect(late.status).toBe(400);
    expect(late.body!.error).toBe(
      'remove_background: required image user_photo could not be resolved (expired upload URL)',
    );
    expect(charges(s.service, s.email)).toHaveLength(1);
    expect((await fetch(url)).status).toBe(403);
  });

  it("idStyle 'long': 320-character hex ids that poll and resolve", async () => {
    const s = await completedGeneration({ idStyle: 'long' });
    expect(s.id).toMatch(/^[0-9a-f]{320}$/);
    const up = await upload(s);
    expect(up.body!.id).toMatch(/^[0-9a-f]{320}$/);
    expect((await fetch(s.resultUrl)).status).toBe(200);
  });

  it('readySetShape: templateSet (default), readyTemplateSet or flat', async () => {
    for (const shape of [undefined, 'templateSet', 'readyTemplateSet', 'flat'] as const) {
      const s = await start(shape ? { readySetShape: shape } : {});
      const res = await call(s.service.url, 'GET', '/v1/ready-template-sets/shoot-01', s.key);
      expect(res.status).toBe(200);
      const set = shape === 'flat' ? res.body : res.body![shape ?? 'templateSet'];
      expect(set).toMatchObject({ id: 'shoot-01', shotCount: 2 });
      expect(Object.keys(res.body!).sort()).toEqual(
        shape === 'flat'
          ? ['category', 'coverUrl', 'id', 'shotCount', 'shots', 'success']
          : [shape ?? 'templateSet', 'success'].sort(),
      );
    }
  });

  it('tiffResults: results are TIFF bytes', async () => {
    const s = await completedGeneration({ tiffResults: true });
    expect(s.resultUrl).toMatch(/\.tif$/);
    const res = await fetch(s.resultUrl);
    expect(res.headers.get('content-type')).toBe('image/tiff');
    const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
    expect(meta.format).toBe('tiff');
  });
});
