/**
 * fal's queue protocol: POST {base}/{model} -> {request_id, status_url, response_url,
 * cancel_url}; GET status_url until COMPLETED (IN_QUEUE, IN_PROGRESS before it); GET
 * response_url for the output; PUT cancel_url when we give up. Images travel as data URIs (our
 * blobs are not reachable from the internet); results are downloaded before the job completes.
 */
import fs from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { assemblePrompt } from '../prompts';
import { ProviderError, type InputImage, type ProviderJob, type ProviderOutput } from '../types';
import { call, download, json, redact, type RemoteCall } from './http';
import { inputImages, toOutput } from './outputs';

export type FalOptions = { apiKey: string; baseUrl: string; pollIntervalMs: number };

const Submitted = z.object({
  request_id: z.string(),
  status_url: z.url(),
  response_url: z.url(),
  cancel_url: z.url().optional(),
});
const Status = z.object({ status: z.string(), error: z.unknown().optional() });
const FileRef = z.object({ url: z.string().min(1) });
const Result = z.object({
  images: z.array(FileRef).optional(),
  image: FileRef.optional(),
  video: FileRef.optional(),
});

async function dataUri(image: InputImage): Promise<string> {
  return `data:${image.mime};base64,${(await fs.readFile(image.path)).toString('base64')}`;
}

/** The request body: the assembled prompt, the product images first, then model/venue/pose references. */
export async function falInput(
  job: ProviderJob,
  outputs: number,
): Promise<Record<string, unknown>> {
  const { product, references } = inputImages(job);
  const imageUrls = await Promise.all([...product, ...references].map(dataUri));
  const input: Record<string, unknown> = {
    image_url: imageUrls[0],
    image_urls: imageUrls,
    num_images: outputs,
  };
  const prompt = assemblePrompt(job);
  if (prompt) input.prompt = prompt;
  // The fashion model is the first reference, right after the product photos.
  if (job.fashionModel) input.human_image_url = imageUrls[product.length];
  if (product[0]) input.garment_image_url = imageUrls[0];
  const ratio = job.params.targetRatio ?? job.params.ratio;
  if (ratio && ratio !== 'auto') input.aspect_ratio = ratio;
  if (job.toolId === 'ai_videos') input.duration = String(Math.round(job.params.duration ?? 5));
  if (job.toolId === 'photo_enhance') input.scale_factor = 2;
  return input;
}

export async function runFal(
  job: ProviderJob,
  model: string,
  opts: FalOptions,
  signal: AbortSignal,
  costPerOutputUsd?: number,
): Promise<ProviderOutput[]> {
  const ctx: RemoteCall = { secret: opts.apiKey, provider: `fal (${model})`, signal };
  const headers = { authorization: `Key ${opts.apiKey}`, 'content-type': 'application/json' };
  const submitted = Submitted.safeParse(
    await json(
      await call(
        `${opts.baseUrl.replace(/\/$/, '')}/${model}`,
        { method: 'POST', headers, body: JSON.stringify(await falInput(job, job.outputs)) },
        ctx,
      ),
      'queue answer',
      ctx,
    ),
  );
  if (!submitted.success)
    throw new ProviderError(`${ctx.provider} did not return a queue request id`);
  const request = submitted.data;
  try {
    for (;;) {
      const status = Status.safeParse(
        await json(await call(request.status_url, { headers }, ctx), 'status', ctx),
      );
      if (!status.success) throw new ProviderError(`${ctx.provider} sent a status without a state`);
      if (status.data.status === 'COMPLETED') break;
      if (status.data.status !== 'IN_QUEUE' && status.data.status !== 'IN_PROGRESS') {
        const detail =
          typeof status.data.error === 'string'
            ? status.data.error
            : status.data.status.toLowerCase();
        throw new ProviderError(redact(`${ctx.provider} failed: ${detail}`, opts.apiKey));
      }
      await sleep(opts.pollIntervalMs, undefined, { signal });
    }
    const result = Result.safeParse(
      await json(await call(request.response_url, { headers }, ctx), 'result', ctx),
    );
    const files = result.success
      ? [
          ...(result.data.images ?? []),
          ...(result.data.image ? [result.data.image] : []),
          ...(result.data.video ? [result.data.video] : []),
        ]
      : [];
    if (files.length === 0)
      throw new ProviderError(`${ctx.provider} completed without any image or video in its result`);
    return await Promise.all(
      files.map(async (file) =>
        toOutput(await download(file.url, ctx), ctx.provider, costPerOutputUsd),
      ),
    );
  } catch (error) {
    // Given up (timeout, shutdown) or failed: tell fal to stop working (and billing) on it.
    if (signal.aborted && request.cancel_url) {
      await fetch(request.cancel_url, {
        method: 'PUT',
        headers,
        signal: AbortSignal.timeout(5000),
      }).catch(() => undefined);
    }
    throw error;
  }
}
