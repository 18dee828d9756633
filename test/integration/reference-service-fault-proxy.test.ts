/**
 * The fault proxy does to each request what it says, and logs it: faults before forwarding never
 * reach the service, faults after forwarding do (the charge happens, the answer is lost).
 */
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { startReferenceService, type ReferenceService } from '../reference-service';
import { startFaultProxy, type FaultProxy, type FaultName } from '../reference-service/fault-proxy';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

async function setUp(): Promise<{
  service: ReferenceService;
  proxy: FaultProxy;
  apiKey: string;
  photoUrl: string;
}> {
  const service = await startReferenceService({ seed: 5, timeScale: 0.001 });
  open.push(service);
  const { apiKey } = service.createAccount({ email: 'px@ref.test', diamonds: 100 });
  const bytes = await sharp({ create: { width: 8, height: 8, channels: 3, background: 'blue' } })
    .jpeg()
    .toBuffer();
  const up = await fetch(`${service.url}/v1/uploads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}` },
    body: new Uint8Array(bytes),
  });
  const photoUrl = ((await up.json()) as { url: string }).url;
  const proxy = await startFaultProxy({
    target: service.url,
    seed: 9,
    stallHoldMs: 50,
    retryAfterSeconds: 3,
  });
  open.push(proxy);
  return { service, proxy, apiKey, photoUrl };
}

const create = (proxy: FaultProxy, apiKey: string, photoUrl: string) =>
  fetch(`${proxy.url}/v1/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ toolId: 'remove_background', images: { user_photo: photoUrl } }),
  });

describe('fault proxy', () => {
  it.each<[FaultName, number | 'lost', boolean]>([
    ['error500Before', 500, false],
    ['error500After', 500, true],
    ['dropAfter', 'lost', true],
    ['resetBefore', 'lost', false],
    ['stallMs', 'lost', false],
    ['rateLimit429', 429, false],
    ['insufficient402', 402, false],
  ])('%s answers %s and forwards: %s', async (fault, answer, forwarded) => {
    const { service, proxy, apiKey, photoUrl } = await setUp();
    proxy.setFaults({ [fault]: 1 });
    const outcome = await create(proxy, apiKey, photoUrl).then(
      async (res) => ({
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        body: (await res.json()) as { success: boolean; error: string },
      }),
      () => 'lost' as const,
    );
    if (answer === 'lost') expect(outcome).toBe('lost');
    else {
      expect(outcome).toMatchObject({ status: answer, body: { success: false } });
      if (answer === 429) expect(outcome).toMatchObject({ retryAfter: '3' });
      if (answer === 402)
        expect((outcome as { body: { error: string } }).body.error).toMatch(
          /^Insufficient diamonds: required \d+, balance \d+$/,
        );
    }
    expect(service.jobs('px@ref.test')).toHaveLength(forwarded ? 1 : 0);
    expect(service.balance('px@ref.test')).toBe(forwarded ? 99 : 100);
    expect(proxy.log).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: '/v1/generations',
        fault,
        forwarded,
        upstreamStatus: forwarded ? 202 : null,
      }),
    ]);
  });

  it('draws the same faults for the same seed, and passes everything once faults are off', async () => {
    const { service, apiKey } = await setUp();
    const sequences: (string | null)[][] = [];
    for (let round = 0; round < 2; round++) {
      const proxy = await startFaultProxy({
        target: service.url,
        seed: 42,
        faults: { error500Before: 0.3, rateLimit429: 0.3 },
      });
      open.push(proxy);
      for (let i = 0; i < 20; i++)
        await fetch(`${proxy.url}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } });
      sequences.push(proxy.log.map((e) => e.fault));
      proxy.setFaults({});
      const res = await fetch(`${proxy.url}/v1/models`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(res.status).toBe(200);
    }
    expect(sequences[0]).toEqual(sequences[1]);
    expect(new Set(sequences[0])).toEqual(new Set([null, 'error500Before', 'rateLimit429']));
  });
});
