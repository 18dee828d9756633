/**
 * GET /v1/generations/{id} (authenticated and counted against the daily cap) in requests per
 * second, against a bare node:http handler returning the same bytes; both measured with
 * autocannon on loopback with the same connections and duration, each server in its own process.
 */
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { adminFor } from '../../src/core';
import { systemClock } from '../../src/core/clock';
import { openSqliteStore } from '../../src/core/store/sqlite';
import { fmt, productPhoto, startChild, tempDir, type Row } from './shared';

const CONNECTIONS = 10;
const SECONDS = 5;
const ROUNDS = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function load(url: string, headers: Record<string, string>): Promise<number> {
  await autocannon({ url, connections: CONNECTIONS, duration: 1, headers }); // warm-up
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}

export async function pollThroughput(): Promise<Row[]> {
  const dir = tempDir('poll');
  try {
    const store = openSqliteStore(path.join(dir, 'core.db'));
    const { apiKey } = await adminFor(store, systemClock).createAccount({
      email: 'bench@example.com',
      diamonds: 1000,
      dailyCap: 1_000_000_000,
    });
    await store.close();
    let realRps = 0;
    let bareRps = 0;
    let healthRps = 0;
    const real = await startChild(['real', dir]);
    const auth = { authorization: `Bearer ${apiKey}` };
    try {
      const upload = (await (
        await fetch(`${real.url}/v1/uploads`, {
          method: 'POST',
          headers: auth,
          body: new Uint8Array(await productPhoto(400, 500, 20)),
        })
      ).json()) as { url: string };
      const created = (await (
        await fetch(`${real.url}/v1/generations`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ toolId: 'photo_enhance', images: { user_photo: upload.url } }),
        })
      ).json()) as { id: string };
      const pollUrl = `${real.url}/v1/generations/${created.id}`;
      let body: Buffer;
      for (;;) {
        body = Buffer.from(await (await fetch(pollUrl, { headers: auth })).arrayBuffer());
        if ((JSON.parse(body.toString()) as { status: string }).status !== 'processing') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const bodyFile = path.join(dir, 'body.json');
      fs.writeFileSync(bodyFile, body);
      const bare = await startChild(['bare', '200', bodyFile]);
      try {
        // Alternating rounds, medians: the load generator shares the machine, so one long run of
        // each would compare two different moments of background noise.
        const real: number[] = [];
        const bareRuns: number[] = [];
        const health: number[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          real.push(await load(pollUrl, auth));
          bareRuns.push(await load(`${bare.url}/v1/generations/${created.id}`, auth));
          health.push(await load(`${new URL(pollUrl).origin}/healthz`, {}));
        }
        ({ realRps, bareRps, healthRps } = {
          realRps: median(real),
          bareRps: median(bareRuns),
          healthRps: median(health),
        });
      } finally {
        await bare.stop();
      }
    } finally {
      await real.stop();
    }
    const ratio = realRps / bareRps;
    return [
      {
        name: 'GET /v1/generations/{id} rps vs bare node:http',
        measured: `${fmt(realRps, 0)} vs ${fmt(bareRps, 0)} req/s`,
        ratio,
        target: '>= 0.5',
        pass: ratio >= 0.5,
      },
      // For reading the one above: what the HTTP framework alone leaves of the bare handler.
      {
        name: 'GET /healthz (no auth, no SQLite) rps vs bare node:http',
        measured: `${fmt(healthRps, 0)} vs ${fmt(bareRps, 0)} req/s`,
        ratio: healthRps / bareRps,
        target: 'info',
        pass: true,
      },
    ];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
