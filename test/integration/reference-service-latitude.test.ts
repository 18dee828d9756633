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
      backendHoldMs: 400,
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
    await sleep(500);
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
      backendHoldMs: 400,
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
    await sleep(500);
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
