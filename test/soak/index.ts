/**
 * `npm run soak [-- --schedules N] [--from S] [--seed S] [--jobs N] [--keep] [--quiet]`: the seeded
 * fault campaign. For each seed, a random schedule (kill -9 of `run`, service restarts, proxy
 * faults, export failures) over a fresh data and output folder, then invariants checked from the
 * reference service's ledger and the output folder. Prints violations per seed; exits 1 on any.
 *
 * `--jobs N` runs N schedules at once. Each schedule already has its own work folder, its own
 * service and proxy on ports the system picks, and its clock offset passed to its own child
 * processes only, so nothing is shared but the machine. A seed's lines are kept until it ends and
 * then printed whole, in seed order, so the log reads as a sequential run's does.
 */
import { parseArgs } from 'node:util';
import { runSchedule } from './campaign';
import { scheduleFor } from './schedule';

const { values } = parseArgs({
  options: {
    schedules: { type: 'string', default: '10' },
    from: { type: 'string', default: '1' },
    seed: { type: 'string' },
    jobs: { type: 'string', default: '1' },
    keep: { type: 'boolean', default: false },
    quiet: { type: 'boolean', default: false },
  },
  strict: true,
  args: process.argv.slice(2).filter((a) => a !== '--'),
});
const seeds =
  values.seed !== undefined
    ? [Number(values.seed)]
    : Array.from({ length: Number(values.schedules) }, (_, i) => Number(values.from) + i);
const jobs = Number(values.jobs);
if (seeds.some((s) => !Number.isInteger(s)) || !Number.isInteger(jobs) || jobs < 1) {
  console.error('--seed, --from and --schedules take whole numbers, --jobs one of 1 or more');
  process.exit(2);
}

type Outcome = { lines: string[]; failed: boolean };

/** One seed, its log kept in memory: a harness error is a failed seed, never the end of the others. */
async function runSeed(seed: number): Promise<Outcome> {
  const lines: string[] = [];
  const schedule = scheduleFor(seed);
  lines.push(
    `\n== seed ${seed}: ${schedule.recipe}, ${schedule.photos} photos, service ${JSON.stringify(schedule.service)}, service faults ${JSON.stringify(schedule.serviceFaults)}${schedule.day ? `, day ${JSON.stringify(schedule.day)}` : ''}`,
  );
  try {
    const result = await runSchedule(schedule, {
      keep: values.keep,
      log: values.quiet ? undefined : (line) => lines.push(`  ${line}`),
    });
    if (result.violations.length) {
      lines.push(
        `  VIOLATIONS (${result.violations.length}) for seed ${seed}${values.keep ? ` (kept in ${result.workDir})` : ''}:`,
      );
      for (const v of result.violations) lines.push(`   - ${v}`);
      return { lines, failed: true };
    }
    lines.push(`  ok (${(result.ms / 1000).toFixed(0)} s, ${result.runs.length} run(s))`);
    return { lines, failed: false };
  } catch (error) {
    lines.push(
      `  HARNESS ERROR for seed ${seed} (the schedule could not be carried out; not a verdict on the studio): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    return { lines, failed: true };
  }
}

const outcomes = new Map<number, Outcome>();
let next = 0;
let printed = 0;
// Prints every finished seed whose predecessors have all been printed.
const flush = () => {
  while (printed < seeds.length && outcomes.has(seeds[printed]!)) {
    console.log(outcomes.get(seeds[printed]!)!.lines.join('\n'));
    printed++;
  }
};
const worker = async () => {
  while (next < seeds.length) {
    const seed = seeds[next++]!;
    outcomes.set(seed, await runSeed(seed));
    flush();
  }
};
const started = Date.now();
await Promise.all(Array.from({ length: Math.min(jobs, seeds.length) }, worker));
flush();

const failing = seeds.filter((s) => outcomes.get(s)!.failed);
console.log(
  `\n${seeds.length - failing.length}/${seeds.length} schedules without violations${failing.length ? `; failing seeds: ${failing.join(' ')}` : ''} (${((Date.now() - started) / 1000).toFixed(0)} s, --jobs ${jobs})`,
);
process.exit(failing.length ? 1 : 0);
