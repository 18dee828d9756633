import fs from 'node:fs';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

const ALL_TESTS = [
  'test/unit/**/*.test.ts',
  'test/integration/**/*.test.ts',
  'test/component/**/*.test.tsx',
];

/**
 * The /v1 conformance files that run a second time on team mode's storage (PostgreSQL + S3,
 * issue 14): every integration file built on the /v1 test harness (helpers/server.ts). Files
 * that check rows or stored bytes read them through helpers/core-storage.ts, so they assert the
 * same on both set-ups.
 */
const INTEGRATION = 'test/integration';
/**
 * Files that exercise the core without helpers/server.ts (the CLI as child processes, a core
 * opened in the test) and take the same storage through helpers/cli-storage.ts. restart's case
 * on a unit's started mark stays SQLite-only (a crash is a lapsed lease on PostgreSQL, shown by
 * team-crash-loop); cli's argument-parsing cases open no storage and run once.
 */
const CORE_OUTSIDE_THE_HARNESS = ['providers.test.ts', 'restart.test.ts', 'cli.test.ts'];
const V1_ON_TEAM_STORAGE = fs
  .readdirSync(INTEGRATION)
  .filter((f) => f.endsWith('.test.ts'))
  .filter(
    (f) =>
      fs.readFileSync(path.join(INTEGRATION, f), 'utf8').includes("'./helpers/server'") ||
      CORE_OUTSIDE_THE_HARNESS.includes(f),
  )
  .map((f) => `${INTEGRATION}/${f}`);

/**
 * The second run needs PostgreSQL: on when DROPSHOOT_TEST_DATABASE_URL is set (`source
 * .ci/postgres`, as .ci/run does) or in CI (where the harness then fails for want of it instead
 * of skipping). `vitest run --project default` runs the first set-up alone.
 */
const teamStorage =
  (process.env.DROPSHOOT_TEST_DATABASE_URL ?? '') !== '' ||
  !['', '0', 'false'].includes((process.env.CI ?? '').toLowerCase());

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start servers and spawn CLIs; two cores, so keep the pool small.
    maxWorkers: 2,
    reporters: ['default', './test/summary-reporter.ts'],
    projects: [
      { extends: true, test: { name: 'default', include: ALL_TESTS } },
      ...(teamStorage
        ? [
            {
              extends: true,
              test: {
                name: 'v1-on-pg-s3',
                include: V1_ON_TEAM_STORAGE,
                env: { DROPSHOOT_TEST_STORE: 'pg', DROPSHOOT_TEST_BLOBS: 's3' },
              },
            },
          ]
        : []),
    ],
  },
});
