/**
 * Fault injection: a proxy between the studio and `dropshoot serve` answers 500s, 429s and 402s,
 * resets connections (before and after forwarding, so answers get lost) and stalls. The batch
 * must still finish with every photo exported exactly once and one charge per exported photo.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import sharp from 'sharp';
import { afterEach, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { StudioEngine } from '../../src/studio/engine';
import { PROBE_ID } from '../../src/studio/idempotency';
import { runBatch } from '../../src/studio/run-batch';
import { startServer } from '../../src/server';
import { openSqliteStore } from '../../src/core/store/sqlite';
import { adminFor } from '../../src/core';
import { systemClock } from '../../src/core/clock';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

type Fault = 'pass' | '500' | '500-after' | '429' | '402' | 'reset' | 'reset-after' | 'stall';

/** Deterministic pseudo-random faults (mulberry32), so a failure can be replayed. */
function faults(seed: number): () => Fault {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const table: [Fault, number][] = [
    ['500', 0.07],
    ['500-after', 0.07],
    ['429', 0.05],
    ['402', 0.05],
    ['reset', 0.06],
    ['reset-after', 0.07],
    ['stall', 0.03],
  ];
  return () => {
    let r = next();
    for (const [fault, p] of table) {
      if (r < p) return fault;
      r -= p;
    }
    return 'pass';
  };
}

function startProxy(
  target: string,
  pick: () => Fault,
  counts: Map<Fault, number>,
): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  let seen = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen++;
      // The first requests pass, so the studio learns the service honours Idempotency-Key.
      const fault: Fault = seen <= 3 || !req.url?.startsWith('/v1/') ? 'pass' : pick();
      const finalFault =
        fault === '402' && !(req.method === 'POST' && req.url === '/v1/generations')
          ? 'pass'
          : fault;
      counts.set(finalFault, (counts.get(finalFault) ?? 0) + 1);
      const json = (status: number, error: string) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ success: false, error }));
      };
      if (finalFault === '500') return json(500, 'injected: internal error');
      if (finalFault === '429')
        return json(429, 'injected: Daily request cap of 500 requests reached for this API key');
      if (finalFault === '402')
        return json(402, 'injected: Insufficient diamonds: 1 required, balance is 0');
      if (finalFault === 'reset') return req.socket.destroy();
      if (finalFault === 'stall') return void setTimeout(() => req.socket.destroy(), 2500);
      const forward = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: upstream.host },
        },
        (up) => {
          const body: Buffer[] = [];
          up.on('data', (c: Buffer) => body.push(c));
          up.on('end', () => {
            if (finalFault === 'reset-after') return req.socket.destroy();
            if (finalFault === '500-after')
              return json(500, 'injected: answer lost after processing');
            res.writeHead(up.statusCode ?? 502, up.headers);
            res.end(Buffer.concat(body));
          });
        },
      );
      forward.on('error', () => json(502, 'upstream unreachable'));
      forward.end(Buffer.concat(chunks));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    }),
  );
}

/** A temp folder with `dropshoot serve` on loopback and one account on it. */
async function serviceWithAccount(name: string, email: string, diamonds: number) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `dropshoot-${name}-`));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const serverData = path.join(root, 'server');
  fs.mkdirSync(serverData);
  const store = openSqliteStore(path.join(serverData, 'core.db'));
  const { apiKey } = await adminFor(store, systemClock).createAccount({ email, diamonds });
  await store.close();
  const server = await startServer({ dataDir: serverData, port: 0 });
  cleanups.push(() => server.close());
  return { root, serverData, apiKey, server };
}

it('finishes a batch through 500s, 429s, 402s, resets and stalls, exporting each photo once and charging once', async () => {
  const { root, serverData, apiKey, server } = await serviceWithAccount(
    'faults',
    'faults@example.com',
    100,
  );
  const counts = new Map<Fault, number>();
  const proxy = await startProxy(server.url, faults(7), counts);
  cleanups.push(() => proxy.close());

  const inDir = path.join(root, 'in');
  fs.mkdirSync(inDir);
  const photos = 12;
  for (let i = 0; i < photos; i++) {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="320" height="400"><rect width="100%" height="100%" fill="#efefef"/><circle cx="160" cy="200" r="${60 + i * 4}" fill="hsl(${i * 30},70%,45%)"/></svg>`;
    await sharp(Buffer.from(svg))
      .jpeg()
      .toFile(path.join(inDir, `p${String(i).padStart(2, '0')}.jpg`));
  }
  const outDir = path.join(root, 'out');
  const client = new HttpClient({ baseUrl: proxy.url, apiKey, timeoutMs: 1500 });
  const engine = new StudioEngine({
    dataDir: path.join(root, 'studio'),
    client,
    concurrency: 3,
    backoff: { baseMs: 50, maxMs: 400 },
    capProbeMs: 200,
    balanceRecheckMs: 200,
    maxAttempts: 1000,
    // A lost answer's key refused for reuse is resent after this (test-sized; 5 min by default).
    keyRecordGraceMs: 200,
  });
  cleanups.push(() => engine.close());
  const summary = await runBatch(engine, {
    inDir,
    recipe: {
      request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
      export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{tool}-{n}' },
    },
    outDir,
    // The proxy's 402s and daily-cap 429s are lies about a service with diamonds and requests to
    // spare: wait them out instead of ending the run with the photos held.
    wait: true,
  });

  expect(summary.failed).toEqual([]);
  // A request reset before it reached the service looks like a lost answer; its key's probe finds
  // nothing (the spec names no keys, and a probe cannot tell "never arrived" from "not kept"), so
  // a person decides: every photo is exported once or uncertain for that reason, never paid twice.
  for (const { reason } of summary.uncertain) expect(reason).toMatch(/it refused the body/);
  expect(summary.exported + summary.uncertain.length).toBe(photos);
  expect(summary.exported).toBeGreaterThan(photos / 2);
  const uncertain = new Set(summary.uncertain.map((u) => u.name.replace(/\.jpg$/, '')));
  const written = fs.readdirSync(outDir).sort();
  expect(written).toEqual(
    Array.from({ length: photos }, (_, i) => `p${String(i).padStart(2, '0')}`)
      .filter((name) => !uncertain.has(name))
      .map((name) => `${name}-remove_background-1.png`),
  );

  const ledger = new Database(path.join(serverData, 'core.db'), { readonly: true });
  try {
    const charges = ledger
      .prepare("SELECT COUNT(*) AS n FROM ledger WHERE kind = 'charge'")
      .get() as { n: number };
    const refunds = ledger
      .prepare("SELECT COUNT(*) AS n FROM ledger WHERE kind = 'refund'")
      .get() as { n: number };
    const balance = ledger
      .prepare('SELECT balance FROM accounts WHERE email = ?')
      .get('faults@example.com') as { balance: number };
    // Each exported photo paid once; an uncertain one at most once (if its request arrived).
    expect(charges.n - refunds.n).toBeGreaterThanOrEqual(summary.exported);
    expect(charges.n - refunds.n).toBeLessThanOrEqual(photos);
    expect(balance.balance).toBe(100 - (charges.n - refunds.n));
  } finally {
    ledger.close();
  }
  // The run really went through faults of every kind.
  for (const fault of ['500', '500-after', '429', 'reset', 'reset-after'] as const)
    expect(counts.get(fault) ?? 0).toBeGreaterThan(0);
}, 120_000);

it('a lost answer from a service that ignores Idempotency-Key is flagged uncertain, never paid twice', async () => {
  const { root, serverData, apiKey, server } = await serviceWithAccount(
    'uncertain',
    'uncertain@example.com',
    50,
  );

  // A service without the idempotency extension (the spec has none): the header is not echoed.
  // The first submission is processed and charged, then its answer is lost.
  const upstream = new URL(server.url);
  let submissions = 0;
  const proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // A probe of the lost key (a body naming no tool, refused for free) is no submission.
      const isSubmission =
        req.method === 'POST' &&
        req.url === '/v1/generations' &&
        !Buffer.concat(chunks).toString('utf8').includes(PROBE_ID);
      if (isSubmission) submissions++;
      const headers: http.OutgoingHttpHeaders = { ...req.headers, host: upstream.host };
      delete headers['idempotency-key'];
      const forward = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers,
        },
        (up) => {
          const body: Buffer[] = [];
          up.on('data', (c: Buffer) => body.push(c));
          up.on('end', () => {
            if (isSubmission && submissions === 1) return req.socket.destroy();
            const { 'idempotency-key': _dropped, ...rest } = up.headers;
            res.writeHead(up.statusCode ?? 502, rest);
            res.end(Buffer.concat(body));
          });
        },
      );
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () => new Promise<void>((done) => (proxy.closeAllConnections(), proxy.close(() => done()))),
  );
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;

  const inDir = path.join(root, 'in');
  fs.mkdirSync(inDir);
  for (const [i, name] of ['a.jpg', 'b.jpg'].entries()) {
    await sharp({
      create: {
        width: 320,
        height: 400,
        channels: 3,
        background: { r: 40 + i * 90, g: 90, b: 160 },
      },
    })
      .jpeg()
      .toFile(path.join(inDir, name));
  }
  const engine = new StudioEngine({
    dataDir: path.join(root, 'studio'),
    client: new HttpClient({ baseUrl: proxyUrl, apiKey, timeoutMs: 1500 }),
    concurrency: 1,
    backoff: { baseMs: 50, maxMs: 200 },
  });
  cleanups.push(() => engine.close());
  const summary = await runBatch(engine, {
    inDir,
    recipe: {
      request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
      export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{n}' },
    },
    outDir: path.join(root, 'out'),
  });

  expect(summary.exported).toBe(1);
  expect(summary.uncertain).toEqual([
    { name: 'a.jpg', reason: expect.stringContaining('does not confirm Idempotency-Key') },
  ]);
  expect(submissions).toBe(2); // the lost one and b.jpg's: a.jpg was not sent again
  const ledger = new Database(path.join(serverData, 'core.db'), { readonly: true });
  try {
    expect(
      (
        ledger.prepare("SELECT COUNT(*) AS n FROM ledger WHERE kind = 'charge'").get() as {
          n: number;
        }
      ).n,
    ).toBe(2);
  } finally {
    ledger.close();
  }
}, 60_000);
