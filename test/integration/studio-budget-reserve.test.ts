/**
 * The UI's budget reads at the service's cap as remembered: when only the request kept for the
 * day's closing balance read is left, `budget.get` answers from the balance last read (saying
 * when) and sends nothing, so the closing read still gets its request and the day's spend is
 * confirmed. Against the reference /v1 service (written from the spec alone) on loopback; the
 * process's clock is moved a day on between the day the cap is learned and the day it is used,
 * and the studio's own clock 20 s on so its 15 s balance cache is stale.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { HttpClient } from '../../src/client';
import { StudioEngine } from '../../src/studio/engine';
import { shiftableClock } from './helpers/studio-fixtures';
import { startReferenceService } from '../reference-service';
import { engineWithBudgetReads } from './helpers/studio-budget-reads';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

it("at the remembered cap with one request left, the UI's budget reads send nothing and the closing balance read is answered", async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-budget-reserve-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const service = await startReferenceService({ seed: 11, timeScale: 0.02 });
  cleanups.push(() => service.close());
  const cap = 10;
  const { apiKey } = service.createAccount({
    email: 'reserve@ref.test',
    diamonds: 100,
    dailyCap: cap,
  });
  const dataDir = path.join(root, 'data');
  const client = new HttpClient({ baseUrl: service.url, apiKey, timeoutMs: 5000 });
  cleanups.push(() => client.close());

  // Day 1: balance reads until the service's daily-cap 429, whose number the studio remembers.
  {
    const engine = new StudioEngine({ dataDir, client, apiKey });
    while ((await engine.spending.setAnchor()) !== null);
    expect(engine.spending.serviceCap()).toBe(cap);
    await engine.close();
  }

  // Day 2: the UI reads its budget once (cached), then work takes all but the last request.
  shiftableClock((undo) => cleanups.push(undo)).nextDay();
  const { engine, skew, budgetGet } = engineWithBudgetReads({ dataDir, client, apiKey }, (close) =>
    cleanups.push(close),
  );
  const first = await budgetGet();
  expect(first.diamondBalance).toBe(100);
  const readAt = first.diamondBalanceReadAt;
  expect(readAt).not.toBeNull();
  while (engine.spending.requestsUsedToday() < cap - 1) await engine.spending.setAnchor();
  expect(service.requestsToday(apiKey)).toBe(cap - 1);
  expect(engine.spending.reserveReached()).toBe(true);

  // The cache is stale, yet reads at the reserve answer from it, marked as of its read.
  skew(20_000);
  for (let i = 0; i < 5; i++) {
    const view = await budgetGet();
    expect(view.diamondBalance).toBe(100);
    expect(view.diamondBalanceReadAt).toBe(readAt);
    expect(view.requestsLeftToday).toBe(1);
  }
  expect(service.requestsToday(apiKey)).toBe(cap - 1);

  // The closing balance read (`run`'s, through settleSpend) takes the request kept for it.
  const settling = engine.now().getTime();
  await engine.settleSpend();
  expect(engine.spending.balanceReadSince(settling)).toBe(100);
  expect(service.requestsToday(apiKey)).toBe(cap);
}, 60_000);
