/**
 * Crash safety: `dropshoot run` on 50 photos is killed with SIGKILL at random moments, ten times,
 * and restarted on the same data folder each time. At the end every photo is exported exactly
 * once and the core's ledger shows exactly one unrefunded charge per photo.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import sharp from 'sharp';
import { afterAll, expect, it } from 'vitest';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-crash-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const repo = path.resolve(import.meta.dirname, '../..');

/**
 * Runs the CLI; `killWhen` is checked every 50 ms and SIGKILLs the process once it says so (by
 * progress, not by the clock, so the kills land mid-batch however loaded the machine is).
 */
function runCli(
  args: string[],
  killWhen: (() => boolean) | null,
): Promise<{ code: number | null; killed: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // One process (tsx as a loader, not as a wrapper that forks): SIGKILL must hit the engine itself.
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(repo, 'src/cli/index.ts'), ...args],
      { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    let killed = false;
    const timer =
      killWhen === null
        ? null
        : setInterval(() => {
            if (!killed && killWhen()) killed = child.kill('SIGKILL');
          }, 50);
    child.on('exit', (code) => {
      if (timer) clearInterval(timer);
      resolve({ code, killed, stdout, stderr });
    });
  });
}

it('survives ten SIGKILLs during a 50-photo batch: each photo exported once, charged once', async () => {
  const inDir = path.join(root, 'in');
  const outDir = path.join(root, 'out');
  const dataDir = path.join(root, 'data');
  fs.mkdirSync(inDir, { recursive: true });
  const photos = 50;
  for (let i = 0; i < photos; i++) {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="1200"><rect width="100%" height="100%" fill="#f2f2f0"/><rect x="${160 + (i % 10) * 16}" y="240" width="560" height="720" rx="60" fill="hsl(${i * 7},65%,45%)"/></svg>`;
    await sharp(Buffer.from(svg))
      .jpeg()
      .toFile(path.join(inDir, `shot-${String(i).padStart(2, '0')}.jpg`));
  }
  const recipe = path.join(root, 'recipe.json');
  fs.writeFileSync(
    recipe,
    JSON.stringify({
      request: { toolId: 'photo_enhance', images: { user_photo: '{photo}' } },
      export: { preset: 'original', format: 'jpeg', quality: 85, naming: '{name}-{n}' },
    }),
  );
  // One photo at a time keeps the batch long enough for the kills to land mid-flight.
  const args = [
    'run',
    '--in',
    inDir,
    '--recipe',
    recipe,
    '--out',
    outDir,
    '--data',
    dataDir,
    '--concurrency',
    '1',
  ];

  // Seeded kill moments: after 1 to 5 more photos were exported in that run (or, should a run
  // make no progress, after 60 s), so each kill lands mid-batch at any machine speed.
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const exportedNow = () => (fs.existsSync(outDir) ? fs.readdirSync(outDir).length : 0);
  let kills = 0;
  const exportedAfterKill: number[] = [];
  for (let i = 0; i < 10; i++) {
    const start = exportedNow();
    const more = 1 + Math.floor(random() * 5);
    const startedAt = Date.now();
    const outcome = await runCli(
      args,
      () => exportedNow() >= Math.min(photos, start + more) || Date.now() - startedAt > 60_000,
    );
    if (outcome.killed) kills++;
    else expect(outcome.code, outcome.stderr).toBe(0);
    exportedAfterKill.push(exportedNow());
  }
  console.log(`kills: ${kills}; photos exported after each run: ${exportedAfterKill.join(', ')}`);
  // The kills landed mid-batch: progress was partial after most of them.
  expect(exportedAfterKill.filter((n) => n > 0 && n < photos).length).toBeGreaterThanOrEqual(5);
  const final = await runCli(args, null);
  expect(final.code, `${final.stderr}\n${final.stdout}`).toBe(0);
  const summary = JSON.parse(final.stdout.trim().split('\n').at(-1)!) as {
    photos: number;
    exported: number;
    skipped: number;
  };
  expect(summary.photos).toBe(photos);
  expect(kills).toBeGreaterThan(0);

  const written = fs.readdirSync(outDir).sort();
  expect(written).toEqual(
    Array.from({ length: photos }, (_, i) => `shot-${String(i).padStart(2, '0')}-1.jpg`),
  );

  const core = new Database(path.join(dataDir, 'core', 'core.db'), { readonly: true });
  try {
    const charges = (
      core.prepare("SELECT COUNT(*) AS n FROM ledger WHERE kind = 'charge'").get() as { n: number }
    ).n;
    const refunds = (
      core.prepare("SELECT COUNT(*) AS n FROM ledger WHERE kind = 'refund'").get() as { n: number }
    ).n;
    expect(charges - refunds).toBe(photos);
    const studio = new Database(path.join(dataDir, 'studio.db'), { readonly: true });
    try {
      const exported = studio
        .prepare("SELECT COUNT(*) AS n FROM items WHERE state = 'exported'")
        .get() as { n: number };
      expect(exported.n).toBe(photos);
    } finally {
      studio.close();
    }
  } finally {
    core.close();
  }
}, 600_000);
