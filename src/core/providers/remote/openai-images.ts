/**
 * The OpenAI Images protocol's edit endpoint (`POST {base}/v1/images/edits`, multipart): several
 * input images and the assembled prompt, size from the ratio. Works against any server that
 * speaks it (set the base URL).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { assemblePrompt } from '../prompts';
import { ProviderError, type ProviderJob, type ProviderOutput } from '../types';
import { call, download, json, type RemoteCall } from './http';
import { inputImages, toOutput } from './outputs';

export type OpenAiOptions = { apiKey: string; baseUrl: string; model: string };

const Answer = z.object({
  data: z.array(z.object({ b64_json: z.string().optional(), url: z.string().optional() })),
});

/** The protocol's sizes: square, portrait or landscape, whichever is nearest the ratio. */
export function sizeFor(ratio: string | undefined): '1024x1024' | '1024x1536' | '1536x1024' {
  if (!ratio || ratio === 'auto') return '1024x1024';
  const [w, h] = ratio.split(':').map(Number);
  if (!w || !h) return '1024x1024';
  const r = w / h;
  return r < 0.85 ? '1024x1536' : r > 1.18 ? '1536x1024' : '1024x1024';
}

export async function runOpenAiImages(
  job: ProviderJob,
  model: string | undefined,
  opts: OpenAiOptions,
  signal: AbortSignal,
  costPerOutputUsd?: number,
): Promise<ProviderOutput[]> {
  const ctx: RemoteCall = {
    secret: opts.apiKey,
    provider: `OpenAI-compatible images (${model ?? opts.model})`,
    signal,
  };
  if (job.toolId === 'ai_videos')
    throw new ProviderError(
      'the OpenAI Images protocol cannot make videos; route ai_videos to fal or local',
    );
  const { product, references } = inputImages(job);
  const form = new FormData();
  form.set('model', model ?? opts.model);
  form.set(
    'prompt',
    assemblePrompt(job) ?? `Apply the ${job.toolId.replaceAll('_', ' ')} operation to the image.`,
  );
  form.set('n', String(job.outputs));
  form.set('size', sizeFor(job.params.targetRatio ?? job.params.ratio));
  for (const [i, image] of [...product, ...references].entries()) {
    form.append(
      'image[]',
      new Blob([new Uint8Array(await fs.readFile(image.path))], { type: image.mime }),
      `image-${i}${path.extname(image.path) || '.png'}`,
    );
  }
  const response = await call(
    `${opts.baseUrl.replace(/\/$/, '')}/v1/images/edits`,
    { method: 'POST', headers: { authorization: `Bearer ${opts.apiKey}` }, body: form },
    ctx,
  );
  const answer = Answer.safeParse(await json(response, 'answer', ctx));
  if (!answer.success || answer.data.data.length === 0)
    throw new ProviderError(`${ctx.provider} answered without any image`);
  return Promise.all(
    answer.data.data.map(async (item) => {
      if (item.b64_json)
        return toOutput(Buffer.from(item.b64_json, 'base64'), ctx.provider, costPerOutputUsd);
      if (item.url) return toOutput(await download(item.url, ctx), ctx.provider, costPerOutputUsd);
      throw new ProviderError(`${ctx.provider} sent an image entry with neither b64_json nor url`);
    }),
  );
}
