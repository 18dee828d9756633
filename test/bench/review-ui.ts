/**
 * The review UI in Chromium (Debian's, through Playwright) against `dropshoot studio` holding
 * 10,000 results: frame times while scrolling the whole grid (p95, target under 20 ms), and the
 * UI's first contentful paint (median of 3 cold loads, target under 1.5 s).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from '@playwright/test';
import { openStudioDatabase } from '../../src/studio/db/open';
import * as store from '../../src/studio/db/store';
import { Library } from '../../src/studio/library';
import { fmt, productPhoto, tempDir, type Row } from './shared';

const RESULTS = 10_000;
const repo = path.resolve(import.meta.dirname, '../..');

async function seed(dataDir: string): Promise<void> {
  const db = openStudioDatabase(path.join(dataDir, 'studio.db'));
  const library = new Library(path.join(dataDir, 'library'));
  const now = new Date().toISOString();
  const stored = await Promise.all(
    [0, 1, 2, 3, 4].map(async (i) =>
      library.store(await productPhoto(800, 1000, i * 70), 'image/jpeg', {
        sourceSha256: 'bench',
        sourceName: `bench-${i}.jpg`,
        recipe: {},
        jobId: `job_bench${i}`,
        shotId: null,
        service: 'embedded',
        diamonds: 4,
        submittedAt: now,
        completedAt: now,
        downloadedAt: now,
      }),
    ),
  );
  db.prepare(
    "INSERT INTO batches (id, folder_id, kind, output_dir, auto_approve, ceiling, created_at) VALUES ('b_bench', NULL, 'run', ?, 0, NULL, ?)",
  ).run(path.join(dataDir, 'out'), now);
  db.transaction(() => {
    for (let i = 0; i < RESULTS; i++) {
      const id = `it_${String(i).padStart(5, '0')}`;
      store.insertItem(db, {
        id,
        batchId: 'b_bench',
        folderId: null,
        sourcePath: `/nowhere/${id}.jpg`,
        rootDir: '/nowhere',
        relativeDir: '',
        name: `${id}.jpg`,
        sha256: id,
        recipe: '{}',
        recipeHash: 'r',
        kind: 'tool',
        toolId: 'virtual_model',
        state: 'review',
        waitReason: null,
        note: null,
        createdAt: now,
      });
      const file = stored[i % stored.length]!;
      store.insertResult(db, {
        id: `res_${i}`,
        itemId: id,
        n: 0,
        shotId: null,
        sha256: file.sha256,
        mime: 'image/jpeg',
        file: file.file,
        thumb: file.thumb,
        createdAt: new Date(Date.parse(now) + i).toISOString(),
      });
    }
  })();
  db.close();
}

export async function reviewUi(): Promise<Row[]> {
  const root = tempDir('ui');
  const dataDir = path.join(root, 'data');
  try {
    await seed(dataDir);
    const build = spawn(
      process.execPath,
      [path.join(repo, 'node_modules/electron-vite/bin/electron-vite.js'), 'build'],
      { cwd: repo, stdio: 'ignore' },
    );
    await new Promise((resolve) => build.once('exit', resolve));
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(repo, 'src/cli/index.ts'),
        'studio',
        '--data',
        dataDir,
        '--port',
        '0',
      ],
      { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        const line = out.split('\n').find((l) => l.startsWith('{"studio"'));
        if (line) resolve((JSON.parse(line) as { studio: string }).studio);
      });
      child.once('exit', (code) => reject(new Error(`studio exited ${code}`)));
    });
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const paints: number[] = [];
      for (let i = 0; i < 3; i++) {
        const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
        const page = await context.newPage();
        await page.goto(url);
        await page.getByRole('heading', { level: 1 }).waitFor();
        paints.push(
          await page.evaluate(
            () =>
              performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN,
          ),
        );
        await context.close();
      }
      const fcp = [...paints].sort((a, b) => a - b)[1]!;

      const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
      await page.goto(url);
      await page.getByRole('button', { name: /^Review/ }).click();
      const grid = page.getByTestId('review-grid');
      await grid.getByRole('option').first().waitFor();
      const frames = await grid.evaluate(async (element) => {
        const deltas: number[] = [];
        let last = performance.now();
        while (element.scrollTop + element.clientHeight < element.scrollHeight - 1) {
          element.scrollTop += 600;
          await new Promise((resolve) => requestAnimationFrame(resolve));
          const now = performance.now();
          deltas.push(now - last);
          last = now;
        }
        return { deltas, rows: element.scrollHeight };
      });
      const sorted = [...frames.deltas].sort((a, b) => a - b);
      const p95 = sorted[Math.floor(sorted.length * 0.95)]!;
      const rendered = await grid.getByRole('option').count();
      return [
        {
          name: `review grid scroll, ${RESULTS} results (${frames.deltas.length} frames, ${rendered} cards in the DOM)`,
          measured: `p95 frame ${fmt(p95, 1)} ms (median ${fmt(sorted[Math.floor(sorted.length / 2)]!, 1)} ms)`,
          ratio: p95 / 20,
          target: '< 1 (20 ms)',
          pass: p95 < 20,
        },
        {
          name: 'UI first contentful paint (median of 3 cold loads)',
          measured: `${fmt(fcp, 0)} ms (${paints.map((p) => fmt(p, 0)).join(', ')})`,
          ratio: fcp / 1500,
          target: '< 1 (1.5 s)',
          pass: fcp < 1500,
        },
      ];
    } finally {
      await browser.close();
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
