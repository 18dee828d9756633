/**
 * Team mode's job notices (issue 14): a LISTEN that hears nothing (behind a pooler in
 * transaction mode) makes the workers poll, but not until the process restarts: LISTEN is tried
 * again in the background with a back-off, and once its probe is heard the notices wake the
 * workers again. The fall-back and the return are each said once, not once per try.
 *
 * Real PostgreSQL; the listening connection goes through a proxy that drops notification
 * messages while told to (what a pooler in transaction mode does to LISTEN), the pool and the
 * NOTIFYs go to PostgreSQL directly.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
import { JobNotices, NOTIFY_JOBS } from '../../src/core/store/pg/job-notices';
import { openPgPool, type PgPool } from '../../src/core/store/pg/pool';
import { parsePostgresUrl } from '../../src/core/store/pg/url';
import { describePostgres } from '../support/postgres';
import { startDeafProxy, type DeafProxy } from './helpers/pg-deaf-proxy';

async function until(what: string, check: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(20);
  }
}

describePostgres('job notices behind a LISTEN that hears nothing', (databaseUrl) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const clean of cleanups.splice(0).reverse()) await clean().catch(() => undefined);
  });

  async function setUp() {
    const proxy: DeafProxy = await startDeafProxy(databaseUrl());
    cleanups.push(() => proxy.close());
    const handle: PgPool = openPgPool(databaseUrl(), { max: 3, applicationName: 'listen-retry' });
    cleanups.push(() => handle.pool.end());
    const log: string[] = [];
    const notices = new JobNotices(handle, {
      listenTarget: parsePostgresUrl(proxy.url),
      log: (m) => log.push(m),
      probeMs: 1_000, // short for the test, long enough for a loaded machine
      retry: { minMs: 50, maxMs: 200 },
      deafRetry: { minMs: 100, maxMs: 400 },
    });
    cleanups.push(() => notices.close());
    return { proxy, handle, notices, log };
  }

  const deafWarnings = (log: string[]) => log.filter((l) => l.includes('receives no notices'));
  const backLines = (log: string[]) => log.filter((l) => l.includes('again (after'));

  it('polls meanwhile, tries LISTEN again in the background, and takes notices again once they arrive; each change said once', async () => {
    const { proxy, handle, notices, log } = await setUp();
    proxy.deaf = true;
    let wakes = 0;
    const watch = notices.watch(() => wakes++);
    await watch.ready(); // polling: ready at once, the poll does the work
    await until('the deaf LISTEN is found out', () => deafWarnings(log).length > 0);
    expect(deafWarnings(log)[0]).toMatch(/claims fall back to polling/);

    // Tried again while deaf, without a line per try.
    const connectionsThen = proxy.connections;
    await until(
      'LISTEN tried again in the background',
      () => proxy.connections >= connectionsThen + 3,
    );
    expect(deafWarnings(log), log.join('\n')).toHaveLength(1);
    expect(backLines(log)).toEqual([]);

    proxy.deaf = false;
    await until('listening again', () => backLines(log).length === 1);
    await watch.ready();
    // A job's notice now wakes the watcher at once (no poll in this test).
    const before = wakes;
    await handle.pool.query(`SELECT ${NOTIFY_JOBS}`);
    await until('the notice woke the watcher', () => wakes > before, 3_000);

    await sleep(600); // past a few back-offs: no further tries, no further lines
    const settled = proxy.connections;
    await sleep(600);
    expect(proxy.connections).toBe(settled);
    expect(deafWarnings(log), log.join('\n')).toHaveLength(1);
    expect(backLines(log), log.join('\n')).toHaveLength(1);
    await watch.stop();
  }, 60_000);

  it('a LISTEN that hears its probe from the start says nothing', async () => {
    const { handle, notices, log } = await setUp();
    let wakes = 0;
    const watch = notices.watch(() => wakes++);
    await watch.ready();
    const before = wakes;
    await handle.pool.query(`SELECT ${NOTIFY_JOBS}`);
    await until('the notice woke the watcher', () => wakes > before, 3_000);
    expect(log).toEqual([]);
    await watch.stop();
  }, 30_000);
});
