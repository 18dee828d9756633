/**
 * One photo through one tool, start to finish: upload, submit, poll, download. The CLI's
 * `generate` command uses it; batches go through the studio queue instead.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isUnnamedJob, type ServiceClient } from '../client';
import type { GenerationRequest } from '../shared/api';
import { fillPhoto } from '../shared/studio';
import { pollUntilDone, typicalJobMs } from './poll';

export type OneShotResult = { jobId: string; files: string[]; requests: number };

export async function generateOne(
  client: ServiceClient,
  input: { photo: string; request: GenerationRequest; outDir: string },
): Promise<OneShotResult> {
  let requests = 0;
  const upload = await client.upload(await fs.promises.readFile(input.photo));
  requests++;
  const created = await client.createGeneration({
    ...input.request,
    images: fillPhoto(input.request.images, upload.url),
  });
  const { id } = created;
  requests++;
  // Answered done with its results and no job id (a synchronous service): nothing to poll.
  const listed = (created as { resultUrls?: string[] }).resultUrls ?? [];
  const job = isUnnamedJob(id)
    ? { status: 'completed', resultUrls: listed, errorMessage: null }
    : await pollUntilDone(client, id, {
        firstDelayMs: typicalJobMs(input.request.toolId ?? ''),
        onProgress: () => requests++,
      });
  if (job.status === 'failed')
    throw new Error(`generation ${id} failed: ${job.errorMessage ?? 'unknown reason'}`);
  await fs.promises.mkdir(input.outDir, { recursive: true });
  const base = path.parse(input.photo).name;
  const files: string[] = [];
  for (const [n, url] of job.resultUrls.entries()) {
    // The extension comes from the bytes (the download judges them), never from Content-Type.
    const { data, ext } = await client.download(url);
    const file = path.join(
      input.outDir,
      `${base}-${input.request.toolId ?? 'result'}-${n + 1}.${ext}`,
    );
    await fs.promises.writeFile(file, data);
    files.push(file);
  }
  return { jobId: id, files, requests };
}
