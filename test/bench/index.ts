/**
 * `npm run bench [-- poll|images|embedded|ingest|ui ...]`: speed and memory targets, each printed as
 * a ratio measured side by side in this run. Exits 0 either way: the figures are the point.
 */
import { imageOpsEmbedded, imageOpsHttp } from './image-ops';
import { ingest } from './ingest';
import { pollThroughput } from './poll-throughput';
import { quality } from './quality';
import { reviewUi } from './review-ui';
import { requests } from './requests';
import type { Row } from './shared';

const BENCHES: Record<string, () => Promise<Row[]>> = {
  poll: pollThroughput,
  images: () => imageOpsHttp(),
  embedded: () => imageOpsEmbedded(),
  ingest: () => ingest(),
  ui: () => reviewUi(),
  quality: () => quality(),
  'quality-perturbed': async () => (await import('./quality-perturbed')).qualityPerturbed(),
  'retouch-perturbed': async () => (await import('./retouch-perturbed')).retouchPerturbed(),
  requests: () => requests(),
  team: async () => (await import('./team')).team(),
};

const wanted = process.argv.slice(2).filter((a) => a !== '--');
const names = wanted.length ? wanted : Object.keys(BENCHES);
const unknown = names.filter((n) => !(n in BENCHES));
if (unknown.length) {
  console.error(
    `unknown bench ${unknown.join(', ')}; choose from ${Object.keys(BENCHES).join(', ')}`,
  );
  process.exit(2);
}

const rows: Row[] = [];
for (const name of names) {
  console.log(`running ${name}...`);
  const started = performance.now();
  const result = await BENCHES[name]!();
  for (const row of result)
    console.log(
      `  ${row.name}: ${row.measured} -> ratio ${row.ratio.toFixed(2)} (target ${row.target}) ${row.pass ? 'PASS' : 'FAIL'}`,
    );
  console.log(`  (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  rows.push(...result);
}
console.log('\nSummary');
for (const row of rows)
  console.log(
    `${row.pass ? 'PASS' : 'FAIL'}  ${row.ratio.toFixed(2).padStart(6)}  ${row.target.padEnd(10)}  ${row.name}: ${row.measured}`,
  );
