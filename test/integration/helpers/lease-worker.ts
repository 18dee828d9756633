/**
 * A worker process for the lease-loop test's kill -9 case: started with
 * `fork(..., { execArgv: ['--import', 'tsx'] })` and one JSON argument
 * `{ url, schema, workers, leaseMs }`, it opens the PostgreSQL store, runs a LeaseLoop whose jobs
 * never end (it reports `{ started: jobId, at }` for each), and says `{ ready: workerId }`.
 * The test then kills it with SIGKILL: nothing is released, as after a crash.
 */
import { z } from 'zod';
import { LeaseLoop } from '../../../src/core/jobs/lease-loop';
import { openPostgresStore } from '../../../src/core/store/pg/index';

const args = z
  .object({
    url: z.string(),
    schema: z.string(),
    workers: z.number().int().positive(),
    leaseMs: z.number().int().positive(),
  })
  .parse(JSON.parse(process.argv[2] ?? '{}'));
const send = (message: object) => process.send?.(message);

const store = await openPostgresStore(args.url, {
  schema: args.schema,
  max: 3,
  applicationName: 'lease-worker',
});
const loop = new LeaseLoop({
  jobs: store.jobs,
  workers: args.workers,
  leaseMs: args.leaseMs,
  claimIntervalMs: 20,
  runJob: (job, signal) => {
    send({ started: job.id, at: Date.now() });
    // Runs until the process is killed (or, should the lease be lost, until aborted).
    return new Promise<void>((resolve) =>
      signal.addEventListener('abort', () => resolve(), { once: true }),
    );
  },
});
loop.start();
send({ ready: loop.workerId });
// Kept alive by the IPC channel; the test kills it with SIGKILL.
