/**
 * `npm run soak [-- --schedules N] [--from S] [--seed S] [--keep] [--quiet]`: the seeded fault
 * campaign. For each seed, a random schedule (kill -9 of `run`, service restarts, proxy faults,
 * export failures) over a fresh data and output folder, then invariants checked from the
 * reference service's ledger and the output folder. Prints violations per seed; exits 1 on any.
 */
import { parseArgs } from 'node:util';
import { runSchedule } from './campaign';
import { scheduleFor } from './schedule';

const { values } = parseArgs({
  options: {
    schedules: { type: 'string', default: '10' },
    from: { type: 'string', default: '1' },
    seed: { type: 'string' },
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
if (seeds.some((s) => !Number.isInteger(s))) {
  console.error('--seed, --from and --schedules take whole numbers');
  process.exit(2);
}

const failing: number[] = [];
for (const seed of seeds) {
  const schedule = scheduleFor(seed);
  console.log(
    `\n== seed ${seed}: ${schedule.recipe}, ${schedule.photos} photos, service ${JSON.stringify(schedule.service)}, service faults ${JSON.stringify(schedule.serviceFaults)}${schedule.day ? `, day ${JSON.stringify(schedule.day)}` : ''}`,
  );
  const result = await runSchedule(schedule, {
    keep: values.keep,
    log: values.quiet ? undefined : (line) => console.log(`  ${line}`),
  });
  if (result.violations.length) {
    failing.push(seed);
    console.log(
      `  VIOLATIONS (${result.violations.length}) for seed ${seed}${values.keep ? ` (kept in ${result.workDir})` : ''}:`,
    );
    for (const v of result.violations) console.log(`   - ${v}`);
  } else console.log(`  ok (${(result.ms / 1000).toFixed(0)} s, ${result.runs.length} run(s))`);
}
console.log(
  `\n${seeds.length - failing.length}/${seeds.length} schedules without violations${failing.length ? `; failing seeds: ${failing.join(' ')}` : ''}`,
);
process.exit(failing.length ? 1 : 0);
