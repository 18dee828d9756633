/**
 * Image tools through the service vs the same operations called directly, with the same
 * concurrency (the job runner's default: one per core):
 *  - over HTTP: 50 photos of 3000x4000 through `POST /v1/uploads`, `POST /v1/generations`,
 *    polling and downloading, for photo_enhance and remove_background (target <= 1.25x);
 *  - embedded: 100 photos through photo_enhance with the in-process client (target <= 1.3x).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pLimit from 'p-limit';
import { adminFor } from '../../src/core';
import { systemClock } from '../../src/core/clock';
import { openSqliteStore } from '../../src/core/store/sqlite';
import { HttpClient, type ServiceClient } from '../../src/client';
import { InProcessClient } from '../../src/client/in-process';
import { enhancePhoto } from '../../src/core/providers/local/enhance';
import { removeBackground } from '../../src/core/providers/local/remove-background';
import { fmt, startChild, tempDir, writePhotos, type Row } from './shared';

const CORES = os.availableParallelism();
type Tool = 'photo_enhance' | 'remove_background';
const direct: Record<Tool, (b: Buffer) => Promise<Buffer>> = {
  photo_enhance: (b) => enhancePhoto(b),
  remove_background: removeBackground,
};

async function timeDirect(tool: Tool, files: string[]): Promise<number> {
  const limit = pLimit(CORES);
  const start = performance.now();
  await Promise.all(
    files.map((f) => limit(async () => direct[tool](await fs.promises.readFile(f)))),
  );
  return performance.now() - start;
}

/** Every photo through the service: upload, submit, poll, download; all submitted at once. */
async function timeService(client: ServiceClient, tool: Tool, files: string[]): Promise<number> {
  const limit = pLimit(CORES * 2); // keep the runner fed without flooding memory
  const start = performance.now();
  await Promise.all(
    files.map((f) =>
      limit(async () => {
        const { url } = await client.upload(await fs.promises.readFile(f));
        const { id } = await client.createGeneration({ toolId: tool, images: { user_photo: url } });
        for (;;) {
          const job = await client.getGeneration(id);
          if (job.status === 'failed') throw new Error(job.errorMessage ?? 'failed');
          if (job.status === 'completed') {
            for (const result of job.resultUrls) await client.download(result);
            return;
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      }),
    ),
  );
  return performance.now() - start;
}

export async function imageOpsHttp(count = 50): Promise<Row[]> {
  const dir = tempDir('images');
  const rows: Row[] = [];
  try {
    const files = await writePhotos(path.join(dir, 'photos'), count, 3000, 4000);
    const data = path.join(dir, 'server');
    fs.mkdirSync(data);
    const store = openSqliteStore(path.join(data, 'core.db'));
    const { apiKey } = await adminFor(store, systemClock).createAccount({
      email: 'bench@example.com',
      diamonds: 100_000,
      dailyCap: 1_000_000,
    });
    await store.close();
    for (const tool of ['photo_enhance', 'remove_background'] as const) {
      const directMs = await timeDirect(tool, files);
      const server = await startChild(['real', data]);
      let apiMs: number;
      try {
        apiMs = await timeService(
          new HttpClient({ baseUrl: server.url, apiKey, timeoutMs: 600_000 }),
          tool,
          files,
        );
      } finally {
        await server.stop();
      }
      const ratio = apiMs / directMs;
      rows.push({
        name: `${tool}, ${count} photos 3000x4000 via HTTP API vs direct`,
        measured: `${fmt(apiMs / 1000, 1)} s vs ${fmt(directMs / 1000, 1)} s`,
        ratio,
        target: '<= 1.25',
        pass: ratio <= 1.25,
      });
    }
    return rows;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function imageOpsEmbedded(count = 100): Promise<Row[]> {
  const dir = tempDir('embedded');
  try {
    const files = await writePhotos(path.join(dir, 'photos'), count, 2400, 3200);
    const directMs = await timeDirect('photo_enhance', files);
    const client = await InProcessClient.open({ dataDir: path.join(dir, 'core') });
    let embeddedMs: number;
    try {
      embeddedMs = await timeService(client, 'photo_enhance', files);
    } finally {
      await client.close();
    }
    const ratio = embeddedMs / directMs;
    return [
      {
        name: `photo_enhance, ${count} photos 2400x3200, embedded core vs direct`,
        measured: `${fmt(embeddedMs / 1000, 1)} s vs ${fmt(directMs / 1000, 1)} s`,
        ratio,
        target: '<= 1.3',
        pass: ratio <= 1.3,
      },
    ];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
