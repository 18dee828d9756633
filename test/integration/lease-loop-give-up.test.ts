/**
 * The lease loop giving up a failed run's job (issue 14): the run ended on an error, so the job
 * is released (one lapse) for any worker. A renewal answered while that release is on its way
 * still lists the job as held here; it must not be taken for a job to run again here, or the
 * job runs here and, once released, on another worker too. The renewal is made to answer right
 * then by a wrapper over the real PostgreSQL store that holds its answer back until the release
 * has started (or 500 ms, when the loop orders the release after it).
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
import { LeaseLoop } from '../../src/core/jobs/lease-loop';
import { openPostgresStore } from '../../src/core/store/pg/index';
import { describePostgres } from '../support/postgres';
import { seedJobs } from './helpers/seed-jobs';

function opened(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const within = (p: Promise<void>, ms: number) => Promise.race([p, delay(ms)]);

describePostgres('lease loop: a failed run given up', (databaseUrl) => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  it('a renewal answering while the release is on its way does not start the job again here before the release', async () => {
    const schema = `gu_${randomBytes(4).toString('hex')}`;
    const url = new URL(databaseUrl());
    const store = await openPostgresStore(url.toString(), { schema, max: 4 });
    closers.push(() => store.close());
    const id = (await seedJobs(store, 1))[0]!;

    const events: string[] = [];
    const renewalAnswered = opened();
    const releaseStarted = opened();
    const renewalRead = opened();
    let armed = false;
    const real = store.jobs;
    const jobs = {
      claim: real.claim.bind(real),
      releaseLeases: real.releaseLeases.bind(real),
      watchClaimable: real.watchClaimable?.bind(real),
      async renewLease(workerId: string, leaseMs: number) {
        const held = await real.renewLease(workerId, leaseMs);
        if (armed && held.includes(id)) {
          armed = false;
          renewalAnswered.resolve();
          await within(releaseStarted.promise, 500);
          setImmediate(renewalRead.resolve); // renew() has read this answer by then
        }
        return held;
      },
      async releaseFailedRun(workerId: string, jobId: string) {
        releaseStarted.resolve();
        await within(renewalRead.promise, 500);
        const released = await real.releaseFailedRun!(workerId, jobId);
        events.push('released');
        return released;
      },
    };
    let runs = 0;
    const loop = new LeaseLoop({
      jobs,
      workers: 2,
      leaseMs: 300,
      claimIntervalMs: 50,
      runJob: async () => {
        runs++;
        events.push('run');
        if (runs > 1) return;
        armed = true;
        await renewalAnswered.promise;
        throw new Error('the database went away');
      },
    });
    closers.unshift(() => loop.stop());
    loop.start();
    await delay(1_000);
    expect(events.indexOf('released'), events.join(', ')).toBeGreaterThan(0);
    expect(events.slice(0, events.indexOf('released')), 'runs before the release').toEqual(['run']);
  }, 20_000);
});
