/**
 * The UI's budget reads on a day the service's daily-cap 429 has closed: `budget.get` answers from
 * the balance last read (saying when) and sends nothing, since the service would refuse the read
 * and count it. Against the reference /v1 service (written from the spec alone) on loopback; the
 * studio's own clock is moved 20 s on so its 15 s balance cache is stale.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { startReferenceService } from '../reference-service';
import { engineWithBudgetReads } from './helpers/studio-budget-reads';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

it("on a day closed by the service's 429, stale budget reads send nothing", async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-budget-closed-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  // Its 429 names no number, so no cap is remembered (a named one is: the reserve's case, in
  // studio-budget-reserve).
  const service = await startReferenceService({
    seed: 12,
    timeScale: 0.02,
    dailyCapMessage: 'Daily request cap reached for this key',
  });
  cleanups.push(() => service.close());
  const { apiKey } = service.createAccount({
    email: 'closed@ref.test',
    diamonds: 100,
    dailyCap: 50,
  });
  const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
  cleanups.push(() => client.close());
  const { engine, skew, budgetGet } = engineWithBudgetReads(
    { dataDir: path.join(root, 'data'), client, apiKey },
    (close) => cleanups.push(close),
  );
  const first = await budgetGet();
  expect(first.diamondBalance).toBe(100);
  const readAt = first.diamondBalanceReadAt;
  expect(readAt).not.toBeNull();

  // Other users of the key take the rest of the day: the next request (a price read) gets the
  // service's daily-cap 429, which closes the studio's day. No cap is remembered (no reserve).
  service.setDailyCap(apiKey, service.requestsToday(apiKey));
  engine.loadPrices();
  for (let i = 0; i < 100 && !engine.dayClosed(); i++) await new Promise((r) => setTimeout(r, 50));
  expect(engine.dayClosed()).toBe(true);
  expect(engine.spending.reserveReached()).toBe(false);
  const sent = service.requestsToday(apiKey);

  skew(20_000);
  for (let i = 0; i < 5; i++) {
    const view = await budgetGet();
    expect(view.diamondBalance).toBe(100);
    expect(view.diamondBalanceReadAt).toBe(readAt);
  }
  expect(service.requestsToday(apiKey)).toBe(sent);
}, 60_000);
