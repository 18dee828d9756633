/**
 * The built-in local provider: all 15 tools offline. Deterministic tools are real image
 * operations (cut-out, upscale, reframe, retouch); the generative ones go through the preview
 * compositor; ai_videos renders an H.264 clip with ffmpeg.
 */
import fs from 'node:fs';
import type { Catalog } from '../../catalog';
import {
  ProviderError,
  type ProviderAdapter,
  type ProviderJob,
  type ProviderOutput,
} from '../types';
import { Compositor } from './compose';
import { enhancePhoto } from './enhance';
import { checkAborted } from './image-io';
import { editPhoto } from './photo-edit';
import { reframePhoto } from './reframe';
import { removeBackground } from './remove-background';
import { retouchPhoto } from './retouch';
import { renderVideo } from './video';

const jpeg = (data: Buffer): ProviderOutput => ({ data, mime: 'image/jpeg' });

function firstImage(job: ProviderJob, key = 'user_photo'): string {
  const file = job.images[key]?.[0];
  if (!file) throw new ProviderError(`${job.toolId}: missing image '${key}'`);
  return file.path;
}

const read = (file: string) => fs.promises.readFile(file);

export function createLocalProvider(opts: { catalog: Catalog }): ProviderAdapter {
  const compose = new Compositor(opts.catalog);

  async function runOne(job: ProviderJob, signal: AbortSignal): Promise<ProviderOutput[]> {
    checkAborted(signal);
    switch (job.toolId) {
      case 'remove_background':
        return [{ data: await removeBackground(await read(firstImage(job))), mime: 'image/png' }];
      case 'photo_enhance': {
        const input = await read(firstImage(job));
        const data = await enhancePhoto(input);
        const mime = job.images.user_photo?.[0]?.mime ?? 'image/jpeg';
        return [{ data, mime }];
      }
      case 'photo_reframe':
        return [
          jpeg(await reframePhoto(await read(firstImage(job)), job.params.targetRatio ?? '1:1')),
        ];
      case 'amateur_to_pro':
        return [jpeg(await retouchPhoto(await read(firstImage(job))))];
      case 'photo_edit':
        return [await editPhoto(await read(firstImage(job)), job.params.customPrompt ?? '')];
      case 'ai_videos':
        return [
          {
            data: await renderVideo(
              await read(firstImage(job)),
              {
                motionPrompt: job.params.motionPrompt ?? '',
                duration: job.params.duration,
                ratio: job.params.ratio,
              },
              signal,
            ),
            mime: 'video/mp4',
          },
        ];
      case 'virtual_model':
        return [jpeg(await compose.onModel(job, ['garment_photo', 'garment_photos']))];
      case 'outfit_photo':
        return [jpeg(await compose.onModel(job, ['garment_photos']))];
      case 'pro_studio':
        return [
          jpeg(
            await compose.onModel(job, ['garment_photos'], {
              facing:
                job.params.shotType === 'back_view'
                  ? -1
                  : job.params.shotType === 'side_view'
                    ? 0
                    : undefined,
            }),
          ),
        ];
      case 'jewelry_on_model':
        return [jpeg(await compose.onModel(job, ['jewelry_image', 'jewelry_images']))];
      case 'pose_angle_switch':
      case 'model_swap':
        return [jpeg(await compose.labelledLayout(job))];
      case 'model_to_flat_lay':
        return [jpeg(await compose.flatLay(job, ['user_photo'], undefined, true))];
      case 'clothing_ecom_pack':
      case 'jewelry_ecom_pack': {
        // Distinct shots: on-model, flat lay, detail, on white.
        const shots: ((j: ProviderJob) => Promise<Buffer>)[] = [
          (j) => compose.onModel(j, ['user_photo']),
          (j) =>
            compose.flatLay(
              j,
              ['user_photo'],
              job.toolId === 'jewelry_ecom_pack' ? '#2d2a33' : '#eae6df',
            ),
          (j) => compose.detail(j, ['user_photo']),
          (j) => compose.onWhite(j, ['user_photo']),
        ];
        const out: ProviderOutput[] = [];
        for (let i = 0; i < job.outputs; i++) {
          checkAborted(signal);
          out.push(
            jpeg(await shots[i % shots.length]!({ ...job, params: { ...job.params, variant: i } })),
          );
        }
        return out;
      }
    }
  }

  return {
    name: 'local',
    run: (job, ctx) => runOne(job, ctx.signal),
  };
}
