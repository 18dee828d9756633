/** A provider that sends each tool to its configured adapter, and everything else to the local one. */
import { ProviderError, type ProviderAdapter } from '../types';
import { FAL_DEFAULT_MODELS, type ProviderConfig } from './config';
import { runFal } from './fal';
import { runOpenAiImages } from './openai-images';

export function createRoutedProvider(
  config: ProviderConfig,
  local: ProviderAdapter,
): ProviderAdapter {
  const routed = Object.entries(config.routes).filter(([, r]) => r && r.adapter !== 'local');
  if (routed.length === 0) return local;
  return {
    name: `routed (${routed.map(([tool, r]) => `${tool}→${r!.adapter}`).join(', ')})`,
    async run(job, ctx) {
      const route = config.routes[job.toolId];
      if (!route || route.adapter === 'local')
        return (await local.run(job, ctx)).map((o) => ({ ...o, source: local.name }));
      const signal = route.timeoutMs
        ? AbortSignal.any([ctx.signal, AbortSignal.timeout(route.timeoutMs)])
        : ctx.signal;
      try {
        if (route.adapter === 'fal') {
          const model = route.model ?? FAL_DEFAULT_MODELS[job.toolId];
          return (await runFal(job, model, config.fal!, signal, route.costPerOutputUsd)).map(
            (o) => ({ ...o, source: `fal:${model}` }),
          );
        }
        const model = route.model ?? config.openai!.model;
        return (
          await runOpenAiImages(job, model, config.openai!, signal, route.costPerOutputUsd)
        ).map((o) => ({ ...o, source: `openai:${model}` }));
      } catch (error) {
        if (signal.aborted && !ctx.signal.aborted)
          throw new ProviderError(
            `${route.adapter} did not finish within ${Math.round((route.timeoutMs ?? 0) / 1000)} s; the job was cancelled there`,
          );
        throw error;
      }
    },
  };
}
