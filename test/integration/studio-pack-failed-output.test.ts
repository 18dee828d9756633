/**
 * A pack generation (4 outputs, charged as a whole) one of whose outputs failed and is listed in
 * its place as null or "" (`["u1", null, "u3", "u4"]`): the spec types resultUrls as URLs and does
 * not say how one failed output shows; partial failures are not refunded per shot (spec 3.2,
 * 7). Before (review rev23 N1) every poll of the job was unreadable ("resultUrls holds entries
 * that are not URLs"): the paid job sat 'processing' until --give-up-after, none of its 3 outputs
 * collected, in every run. The reference service's failPackOutputs and failedOutputListedAs make
 * it so; a small stand-in answers the same list with no counters at all.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import type { Recipe } from '../../src/shared/studio';
import { chargedTo, referenceWorld, runOnWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const PACK: Recipe = {
  request: { toolId: 'clothing_ecom_pack', images: { user_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{tool}-{n}' },
};

describe('a pack generation with one failed output listed in its place', () => {
  for (const slot of ['null', 'empty'] as const)
    it(`listed as ${slot === 'null' ? 'null' : '""'}: the 3 outputs made are collected and the failed one is told`, async () => {
      const email = `pack-slot-${slot}@example.com`;
      const w = await referenceWorld(cleanups, {
        email,
        diamonds: 100,
        photos: 1,
        service: {
          seed: 5,
          timeScale: 0.01,
          jobSeconds: [20, 20],
          failPackOutputs: [2],
          failedOutputListedAs: slot,
        },
      });
      // Bounds the run before the fix (the job never readable); after it the run ends by itself.
      const first = await runOnWorld(w, { recipe: PACK, giveUpAfterMs: 15_000 });
      expect(chargedTo(w.service, email)).toBe(12);
      expect(first.diamondsSpent).toBe(12);
      expect(w.service.jobs(email)).toHaveLength(1);
      // Before: 0 exported, the job left 'on jobs to collect'.
      expect(first.exported).toBe(1);
      expect(first.files).toHaveLength(3);
      for (const file of first.files) expect(fs.existsSync(file)).toBe(true);
      // The failed output is told: paid and not delivered, not refunded.
      const told = [...(first.notices ?? []), ...(first.partial ?? []).map((p) => p.reason)];
      expect(told.join('\n')).toMatch(
        /exported without every output paid for.*1 output\(s\) failed/,
      );
      expect(told.join('\n')).toContain(path.basename(fs.readdirSync(w.inDir)[0]!));

      // The next run pays nothing and has nothing to collect.
      const second = await runOnWorld(w, { recipe: PACK, giveUpAfterMs: 15_000 });
      expect(chargedTo(w.service, email)).toBe(12);
      expect(second.diamondsSpent).toBe(0);
    }, 90_000);
});

describe('the client reads an empty place in resultUrls as an output not delivered', () => {
  it('["u1", null, "u3", ""]: 2 URLs and 2 empty places; other garbage stays unreadable', async () => {
    let answer: unknown = null;
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const client = new HttpClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      apiKey: 'k',
      timeoutMs: 5000,
    });
    const base = { success: true, id: 'g1', status: 'completed', errorMessage: null };
    answer = { ...base, resultUrls: ['http://x/u1', null, 'http://x/u3', ''] };
    const job = await client.getGeneration('g1');
    expect(job.resultUrls).toEqual(['http://x/u1', 'http://x/u3']);
    expect(job.emptyPlaces).toBe(2);
    // Failed or not copied out yet, the answer cannot tell: the service's own counter stands.
    expect(job.packFailed).toBeUndefined();
    answer = { ...base, resultUrls: ['http://x/u1', null], packFailed: 0, packTotal: 2 };
    expect((await client.getGeneration('g1')).packFailed).toBe(0);
    // Garbage is not a failed output: still unreadable.
    answer = { ...base, resultUrls: ['http://x/u1', { href: 1 }] };
    await expect(client.getGeneration('g1')).rejects.toThrow(/not URLs/);
  });
});
