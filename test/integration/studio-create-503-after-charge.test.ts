/**
 * A create charged by the service and then answered 503 (a gateway such as Envoy answers
 * "upstream connect error or disconnect/reset before headers" when the backend's connection drops
 * after it acted; review rev19 G1). The 503 was read as "nothing charged": the same body went
 * again up to 12 times per photo, each paid, and the balance drop was booked outside the run
 * (not in diamondsSpent, not against --max-diamonds). A create's 503 is now a lost answer: its key
 * is probed; a service that keeps no keys leaves the photo uncertain (held, nothing paid twice),
 * one that keeps them replays the job. Even on a service a probe showed keeps keys, a later 503 is
 * probed before any resend: its record of the key may have expired during the wait (review rev21
 * B: resent unprobed, each was charged again), and a 503 before any charge (maintenance) cannot be
 * told from one after it, so the photo waits for a person, saying so. Against the reference /v1
 * service (written from the spec alone) behind a rewriting front, through `run`'s own path.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import {
  chargedTo,
  expectEveryPhotoPaidOnce,
  referenceWorld,
  runOnWorld,
  stopAfter,
  type ReferenceWorld,
} from './helpers/reference-studio';
import { rewritingFront, type FrontAnswer, type FrontRequest } from './helpers/rewriting-front';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'create-503-after-charge@ref.test';
const PHOTOS = 3;
const CEILING = 2;

const ENVOY_503: FrontAnswer = {
  status: 503,
  headers: { 'content-type': 'text/plain', 'retry-after': '1' },
  body: Buffer.from(
    'upstream connect error or disconnect/reset before headers. reset reason: connection termination',
  ),
};

/** A create of a photo (not the key probe, whose body names no images). */
const photoCreate = (request: FrontRequest) => {
  if (request.method !== 'POST' || request.path !== '/v1/generations') return null;
  const body = JSON.parse(request.body.toString('utf8')) as { images?: unknown };
  return body.images === undefined ? null : JSON.stringify(body.images);
};

/**
 * A front answering a photo's charged create (2xx) 503 once the service acted: every one
 * (`firstPerKey` false) or the first per Idempotency-Key. Counts the charged creates per photo.
 * With `maintenance.on`, each key's first create, and its first probe, is answered 503 instead,
 * before the service sees it.
 */
async function frontAfterCharge(world: ReferenceWorld, firstPerKey: boolean) {
  const chargesPerPhoto = new Map<string, number>();
  const keysAnswered503 = new Set<string>();
  const maintenance = {
    on: false,
    refusedKeys: new Set<string>(),
    refusedProbes: new Set<string>(),
  };
  /** The wait each 503 asks for (seconds). */
  const retryAfter = { seconds: 1 };
  const unavailable = (body?: string): FrontAnswer => ({
    ...ENVOY_503,
    headers: { ...ENVOY_503.headers, 'retry-after': String(retryAfter.seconds) },
    ...(body ? { body: Buffer.from(body) } : {}),
  });
  const keyOf = (request: FrontRequest) => String(request.headers['idempotency-key']);
  const url = await rewritingFront(
    cleanups,
    world.service.url,
    (request, answer) => {
      const photo = photoCreate(request);
      if (photo === null || answer.status < 200 || answer.status >= 300) return answer;
      const replay = firstPerKey && keysAnswered503.has(keyOf(request));
      if (!replay) chargesPerPhoto.set(photo, (chargesPerPhoto.get(photo) ?? 0) + 1);
      if (maintenance.on || replay) return answer;
      keysAnswered503.add(keyOf(request));
      return unavailable();
    },
    {
      route: (request) => {
        if (!maintenance.on || request.method !== 'POST' || request.path !== '/v1/generations')
          return undefined;
        const refused =
          photoCreate(request) === null ? maintenance.refusedProbes : maintenance.refusedKeys;
        if (refused.has(keyOf(request))) return undefined;
        refused.add(keyOf(request));
        return unavailable('Service Unavailable: maintenance');
      },
    },
  );
  return { url, chargesPerPhoto, maintenance, retryAfter };
}

describe("a create answered 503 after the service charged is not read as 'nothing charged'", () => {
  it(`service keeping no keys, every create 503 after its charge, --max-diamonds ${CEILING}, two runs: each photo paid once at most, the ledger within the ceiling, reported spend never below it`, async () => {
    const world = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 100,
      service: { seed: 7, timeScale: 0.01, jobSeconds: [20, 30] },
      photos: PHOTOS,
    });
    const front = await frontAfterCharge(world, false);
    const run = () =>
      runOnWorld(world, {
        baseUrl: front.url,
        maxDiamonds: CEILING,
        signal: stopAfter(cleanups, 60_000),
      });
    const first = await run();
    // Before: 12 charges for each photo started, reported 0 (booked outside the run): 24 > 2.
    expect(chargedTo(world.service, EMAIL)).toBeLessThanOrEqual(CEILING);
    expect(first.diamondsSpent).toBeGreaterThanOrEqual(chargedTo(world.service, EMAIL));
    // Held for a person as maybe charged (this service keeps no Idempotency-Key), not failed.
    expect(first.uncertain.length).toBeGreaterThan(0);
    expect(first.failed).toEqual([]);
    const second = await run();
    const charged = chargedTo(world.service, EMAIL);
    expect(Math.max(...front.chargesPerPhoto.values())).toBe(1);
    expect(charged).toBeLessThanOrEqual(PHOTOS);
    expect(first.diamondsSpent + second.diamondsSpent).toBeGreaterThanOrEqual(charged);
  }, 150_000);

  it('service keeping no keys, the first create of each key 503 after its charge: each photo paid once at most over two runs, reported spend never below the ledger', async () => {
    const world = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 100,
      service: { seed: 8, timeScale: 0.01, jobSeconds: [20, 30] },
      photos: PHOTOS,
    });
    const front = await frontAfterCharge(world, true);
    const run = () =>
      runOnWorld(world, { baseUrl: front.url, signal: stopAfter(cleanups, 60_000) });
    const first = await run();
    const second = await run();
    const charged = chargedTo(world.service, EMAIL);
    // Before: the same body sent again under the same key was charged again, 6 / reported 3.
    expect(Math.max(...front.chargesPerPhoto.values())).toBe(1);
    expect(charged).toBe(PHOTOS);
    expect(first.uncertain).toHaveLength(PHOTOS);
    expect(first.diamondsSpent + second.diamondsSpent).toBeGreaterThanOrEqual(charged);
  }, 150_000);

  it('service keeping keys, records kept 3 s: delivered, each paid once; once that is known, a 503 is still probed: a record expired during the wait, or a maintenance 503, leaves the photo for a person, never paid twice', async () => {
    const world = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 100,
      service: {
        seed: 9,
        timeScale: 0.01,
        jobSeconds: [20, 30],
        honourIdempotencyKey: true,
        idempotencyKeyTtlMs: 3_000,
      },
      photos: PHOTOS,
    });
    const front = await frontAfterCharge(world, true);
    // A key's record is taken as written this soon after its first send (5 min by default).
    const engine = { keyRecordGraceMs: 500 };
    front.retryAfter.seconds = 0;
    const first = await runOnWorld(world, {
      baseUrl: front.url,
      engine,
      signal: stopAfter(cleanups, 60_000),
    });
    expectEveryPhotoPaidOnce(first, world.service, EMAIL, PHOTOS);
    expect(Math.max(...front.chargesPerPhoto.values())).toBe(1);

    /** A run over new photos through the same front (one origin: what a probe showed is kept). */
    const runOver = async (name: string, uncertain?: 'resubmit') => {
      const inDir = path.join(world.root, name);
      if (!fs.existsSync(inDir)) {
        fs.mkdirSync(inDir);
        for (let i = 0; i < PHOTOS; i++)
          await sharp({
            create: {
              width: 320,
              height: 400,
              channels: 3,
              background: { r: 40 + name.length * 20, g: 40 * i, b: 30 },
            },
          })
            .png()
            .toFile(path.join(inDir, `${name}-${i}.png`));
      }
      return runOnWorld(world, {
        baseUrl: front.url,
        folders: { inDir, outDir: path.join(world.root, `out-${name}`) },
        engine,
        ...(uncertain ? { uncertain } : {}),
        signal: stopAfter(cleanups, 60_000),
      });
    };

    // Charged, answered 503 asking for 5 s: the service's record of the key is gone by then.
    // Before: sent again under the key unprobed, each charged anew (2 charges per photo).
    front.retryAfter.seconds = 5;
    const expired = await runOver('expired');
    expect(chargedTo(world.service, EMAIL)).toBe(2 * PHOTOS);
    expect(expired.uncertain).toHaveLength(PHOTOS);

    // The same service in maintenance: each key's first create, and its first probe, answered 503
    // by the front before the service saw them. Nothing tells it from the 503 above: held for a
    // person, saying what to do (before, a photo whose probe met the 503 too lost those words).
    front.retryAfter.seconds = 0;
    front.maintenance.on = true;
    const maintenance = await runOver('maintenance');
    expect(maintenance.uncertain).toHaveLength(PHOTOS);
    expect(front.maintenance.refusedProbes.size).toBe(PHOTOS);
    for (const u of maintenance.uncertain)
      expect(JSON.stringify(u)).toMatch(
        /maintenance answers 503 before any charge.*--uncertain resubmit/,
      );
    expect(chargedTo(world.service, EMAIL)).toBe(2 * PHOTOS);
    front.maintenance.on = false;
    const resubmitted = await runOver('maintenance', 'resubmit');
    expect(resubmitted.exported).toBe(PHOTOS);
    expect(chargedTo(world.service, EMAIL)).toBe(3 * PHOTOS);
    expect(Math.max(...front.chargesPerPhoto.values())).toBe(1);
  }, 150_000);
});
