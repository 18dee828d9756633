/**
 * The embedded core of `run` (and `studio`, `generate`) chooses its storage as `serve` does
 * (issue 14): DROPSHOOT_DATABASE_URL / `--database` and DROPSHOOT_BLOBS_URL / `--blobs`. A batch
 * run on PostgreSQL + an S3 bucket exports the samples, its rows land in PostgreSQL and its files
 * in the bucket, and nothing of the core is written under --data but scratch copies. Malformed
 * URLs are usage errors naming the flag or variable, never the password.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_ACCOUNT_EMAIL } from '../../src/client/in-process';
import { openStore } from '../../src/core/store/open-store';
import { ToEngineSchema } from '../../src/shared/engine-process';
import { openStudioHost } from '../../src/studio/host/open-host';
import { describePostgres } from '../support/postgres';
import { makeTempDir, removeDir } from './helpers/api';
import { killGroup, REPO_ROOT, runCli } from './helpers/cli';
import { startTestS3, type TestS3 } from './helpers/s3';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) removeDir(dir);
});
const tempDir = (tag: string) => {
  const dir = makeTempDir(tag);
  dirs.push(dir);
  return dir;
};

/** Runs the CLI with these variables set (and the others as they are), then puts them back. */
async function withEnv<T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

const filesUnder = (dir: string): string[] =>
  fs.existsSync(dir)
    ? fs
        .readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => path.join(e.parentPath, e.name))
    : [];

const SAMPLES = ['--in', 'resources/samples/photos'];
const RECIPE = ['--recipe', 'resources/samples/recipes/cutout-amazon.json'];

describe('run, studio and generate: store flags', () => {
  it('the engine start message carries the embedded storage, validated: a malformed URL is refused before the folder is touched, without its password', async () => {
    const data = tempDir('host-storage-');
    const start = (storage: Record<string, string>) => ({
      type: 'start',
      config: { dataDir: data, service: { mode: 'embedded', storage } },
    });
    const good = ToEngineSchema.safeParse(
      start({
        databaseUrl: 'postgres://dropshoot:pw@db.internal:5432/dropshoot?schema=team',
        blobsUrl: 's3://team?endpoint=http://minio.internal:9000&region=us-east-1',
      }),
    );
    expect(good.success).toBe(true);
    const malformed: Record<string, string>[] = [
      { databaseUrl: 'mysql://root:hunter2-secret@db.internal/dropshoot' },
      { blobsUrl: 'https://bucket.example/x' },
      { databaseUrl: 'postgres://db', extra: 'x' },
    ];
    for (const bad of malformed)
      expect(ToEngineSchema.safeParse(start(bad)).success, JSON.stringify(bad)).toBe(false);

    const refused = await openStudioHost(
      {
        dataDir: data,
        service: {
          mode: 'embedded',
          providerKeys: {},
          storage: { databaseUrl: 'mysql://root:hunter2-secret@db.internal/dropshoot' },
        },
      },
      () => undefined,
    ).then(
      () => 'opened',
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    expect(refused).toMatch(/expected postgres:\/\//);
    expect(refused).not.toContain('hunter2');
    expect(filesUnder(data)).toEqual([]); // not locked, no core opened
  });

  it('refuses a malformed DROPSHOOT_DATABASE_URL, naming the variable and not the password', async () => {
    const data = tempDir('run-flags-');
    const res = await withEnv(
      { DROPSHOOT_DATABASE_URL: 'mysql://root:hunter2-secret@db.internal/dropshoot' },
      () => runCli(['run', ...SAMPLES, ...RECIPE, '--out', path.join(data, 'out'), '--data', data]),
    );
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toContain('DROPSHOOT_DATABASE_URL');
    expect(res.stderr).not.toContain('hunter2-secret');
    // Refused before anything opened: no core under --data.
    expect(fs.existsSync(path.join(data, 'core'))).toBe(false);
  });

  it('refuses a malformed --database and --blobs on studio and generate, naming the flag', async () => {
    const data = tempDir('run-flags-');
    const studio = await runCli([
      'studio',
      '--data',
      data,
      '--port',
      '0',
      '--database',
      'postgres://u:hunter2-secret@/',
    ]);
    expect(studio.code, studio.stderr).toBe(2);
    expect(studio.stderr).toContain('--database');
    expect(studio.stderr).not.toContain('hunter2-secret');
    const generate = await runCli([
      'generate',
      '--tool',
      'remove_background',
      '--image',
      'resources/samples/photos/red-tee.jpg',
      '--data',
      data,
      '--blobs',
      'http://bucket.example/x',
    ]);
    expect(generate.code, generate.stderr).toBe(2);
    expect(generate.stderr).toContain('--blobs');
    expect(generate.stderr).toContain('s3://');
    const remote = await runCli([
      'run',
      ...SAMPLES,
      ...RECIPE,
      '--out',
      path.join(data, 'out'),
      '--remote',
      'http://127.0.0.1:9',
      '--key',
      'k',
      '--database',
      'postgres://u:p@localhost/db',
    ]);
    expect(remote.code, remote.stderr).toBe(2);
    expect(remote.stderr).toContain('--remote');
  });
});

describePostgres('run on PostgreSQL and S3', (databaseUrl) => {
  const BUCKET = 'dropshoot-run';
  let s3: TestS3;
  beforeAll(async () => {
    s3 = await startTestS3([BUCKET]);
  });
  afterAll(async () => {
    await s3?.close();
  });

  it('exports the sample batch; its rows are in PostgreSQL, its files in the bucket', async () => {
    const data = tempDir('run-team-');
    const out = path.join(data, 'out');
    const res = await withEnv(
      { DROPSHOOT_DATABASE_URL: databaseUrl(), DROPSHOOT_BLOBS_URL: s3.blobsUrl(BUCKET) },
      () => runCli(['run', ...SAMPLES, ...RECIPE, '--out', out, '--data', data], 180_000),
    );
    expect(res.code, res.stderr).toBe(0);
    const summary = JSON.parse(res.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(summary).toMatchObject({ photos: 3, exported: 3, failed: [] });
    const exported = filesUnder(out);
    expect(exported).toHaveLength(3);
    for (const file of exported) expect(fs.statSync(file).size).toBeGreaterThan(1000);

    // Nothing of the core under --data but scratch copies: no SQLite file, no blob folder.
    expect(fs.existsSync(path.join(data, 'core', 'core.db'))).toBe(false);
    expect(filesUnder(path.join(data, 'core', 'blobs'))).toEqual([]);

    const store = await openStore({ databaseUrl: databaseUrl(), dataDir: data, migrate: false });
    try {
      const accountId = await store.accounts.idByEmail(LOCAL_ACCOUNT_EMAIL);
      expect(accountId).toBeDefined();
      const charges = (await store.ledger.entriesFor(accountId!)).filter(
        (e) => e.kind === 'charge',
      );
      expect(charges).toHaveLength(3);
      expect(-charges.reduce((sum, e) => sum + e.amount, 0)).toBe(summary.diamondsSpent);
      const keys = new Set(await s3.keys(BUCKET));
      for (const charge of charges) {
        const job = await store.jobs.get(charge.jobId!);
        expect(job?.status).toBe('completed');
        const results = await store.jobs.resultsOf(charge.jobId!);
        expect(results.length).toBeGreaterThan(0);
        for (const result of results) {
          const blob = await store.blobs.get(result.blobId);
          expect(blob).toBeDefined();
          expect([...keys].some((k) => k.endsWith(blob!.sha256))).toBe(true);
        }
      }
    } finally {
      await store.close();
    }
  });

  it('studio opens its embedded core on the database of --database (the local account is made there)', async () => {
    const data = tempDir('studio-team-');
    // A schema of its own: the run above made the local account in the database's default one.
    const schemaUrl = new URL(databaseUrl());
    schemaUrl.searchParams.set('schema', 'studio_only');
    const url = schemaUrl.toString();
    const email = await withEnv({ DROPSHOOT_BLOBS_URL: s3.blobsUrl(BUCKET) }, async () => {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          'src/cli/index.ts',
          'studio',
          '--data',
          data,
          '--port',
          '0',
          '--database',
          url,
        ],
        { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
      );
      try {
        let stdout = '';
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`studio did not start: ${stderr}`)),
            60_000,
          );
          child.stdout.setEncoding('utf8').on('data', (d: string) => {
            stdout += d;
            if (stdout.includes('"studio"')) {
              clearTimeout(timer);
              resolve();
            }
          });
          child.on('exit', (code) => {
            clearTimeout(timer);
            reject(new Error(`studio exited ${code}: ${stderr}`));
          });
        });
        const store = await openStore({
          databaseUrl: url,
          dataDir: data,
          migrate: false,
        });
        try {
          const accountId = await store.accounts.idByEmail(LOCAL_ACCOUNT_EMAIL);
          return accountId && (await store.accounts.get(accountId))?.email;
        } finally {
          await store.close();
        }
      } finally {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
        killGroup(child);
      }
    });
    expect(email).toBe(LOCAL_ACCOUNT_EMAIL);
    expect(fs.existsSync(path.join(data, 'core', 'core.db'))).toBe(false);
  });
});
