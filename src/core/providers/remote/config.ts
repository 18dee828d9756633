/**
 * Which adapter and model serves each tool. Read from `<data>/providers.json`, overridden by
 * environment variables; tools without a route use the local provider. Keys live here only:
 * never in job records, logs or error messages.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { TOOL_IDS, type ToolId } from '../../../shared/api';
import type { ProviderKeys } from '../../../shared/provider-keys';

const RouteSchema = z.strictObject({
  adapter: z.enum(['fal', 'openai', 'local']),
  model: z.string().min(1).max(200).optional(),
  /** What the provider charges per output, recorded next to the diamonds. */
  costPerOutputUsd: z.number().min(0).optional(),
  timeoutMs: z
    .number()
    .int()
    .min(1000)
    .max(60 * 60_000)
    .optional(),
});
export type Route = z.infer<typeof RouteSchema>;

export const ProviderConfigSchema = z.strictObject({
  fal: z
    .strictObject({
      apiKey: z.string().min(1),
      baseUrl: z.url().default('https://queue.fal.run'),
      pollIntervalMs: z.number().int().min(50).default(1000),
    })
    .optional(),
  openai: z
    .strictObject({
      apiKey: z.string().min(1),
      baseUrl: z.url().default('https://api.openai.com'),
      model: z.string().default('gpt-image-1'),
    })
    .optional(),
  routes: z.partialRecord(z.enum(TOOL_IDS), RouteSchema).default({}),
});
export type ProviderConfig = z.infer<typeof ProviderConfigSchema>;

/** fal model per tool when a route names the fal adapter without a model (README lists them). */
export const FAL_DEFAULT_MODELS: Record<ToolId, string> = {
  virtual_model: 'fal-ai/kling/v1-5/kolors-virtual-try-on',
  outfit_photo: 'fal-ai/kling/v1-5/kolors-virtual-try-on',
  pro_studio: 'fal-ai/flux-pro/kontext/multi',
  jewelry_on_model: 'fal-ai/flux-pro/kontext/multi',
  clothing_ecom_pack: 'fal-ai/flux-pro/kontext/multi',
  jewelry_ecom_pack: 'fal-ai/flux-pro/kontext/multi',
  model_to_flat_lay: 'fal-ai/flux-pro/kontext',
  pose_angle_switch: 'fal-ai/flux-pro/kontext',
  model_swap: 'fal-ai/flux-pro/kontext/multi',
  photo_edit: 'fal-ai/flux-pro/kontext',
  photo_enhance: 'fal-ai/clarity-upscaler',
  remove_background: 'fal-ai/birefnet/v2',
  photo_reframe: 'fal-ai/flux-pro/kontext',
  amateur_to_pro: 'fal-ai/flux-pro/kontext',
  ai_videos: 'fal-ai/kling-video/v2.1/standard/image-to-video',
};

const ENV_ROUTE = /^DROPSHOOT_ROUTE_([A-Z_]+)$/;

/** Keys held outside the file (the desktop app keeps them in the system keychain). */
export type { ProviderKeys };

/**
 * The file (if any) with the environment on top: DROPSHOOT_FAL_KEY, DROPSHOOT_FAL_BASE_URL,
 * DROPSHOOT_OPENAI_KEY, DROPSHOOT_OPENAI_BASE_URL, DROPSHOOT_OPENAI_MODEL, and
 * DROPSHOOT_ROUTE_<TOOL>=adapter[:model] (DROPSHOOT_ROUTE_VIRTUAL_MODEL=fal). `keys` (from a
 * keychain) sit between the file and the environment.
 */
export function loadProviderConfig(
  dataDir: string,
  env: NodeJS.ProcessEnv = process.env,
  keys: ProviderKeys = {},
): ProviderConfig {
  const file = path.join(dataDir, 'providers.json');
  let raw: Record<string, unknown> = {};
  if (fs.existsSync(file)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch {
      // Not the parser's message: it quotes the text around the error, which may be a key.
      throw new Error(`${file} is not valid JSON (check its quotes, commas and braces)`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error(`${file} must hold one JSON object`);
    raw = parsed as Record<string, unknown>;
  }
  const fal = { ...(raw.fal as object | undefined) } as Record<string, unknown>;
  if (keys.fal) fal.apiKey = keys.fal;
  if (env.DROPSHOOT_FAL_KEY) fal.apiKey = env.DROPSHOOT_FAL_KEY;
  if (env.DROPSHOOT_FAL_BASE_URL) fal.baseUrl = env.DROPSHOOT_FAL_BASE_URL;
  const openai = { ...(raw.openai as object | undefined) } as Record<string, unknown>;
  if (keys.openai) openai.apiKey = keys.openai;
  if (env.DROPSHOOT_OPENAI_KEY) openai.apiKey = env.DROPSHOOT_OPENAI_KEY;
  if (env.DROPSHOOT_OPENAI_BASE_URL) openai.baseUrl = env.DROPSHOOT_OPENAI_BASE_URL;
  if (env.DROPSHOOT_OPENAI_MODEL) openai.model = env.DROPSHOOT_OPENAI_MODEL;
  const routes = { ...(raw.routes as object | undefined) } as Record<string, unknown>;
  for (const [name, value] of Object.entries(env)) {
    const match = ENV_ROUTE.exec(name);
    if (!match?.[1] || !value) continue;
    const [adapter, ...model] = value.split(':');
    const tool = match[1].toLowerCase();
    routes[tool] = {
      ...(routes[tool] as object | undefined),
      adapter,
      ...(model.length ? { model: model.join(':') } : {}),
    };
  }
  const parsed = ProviderConfigSchema.safeParse({
    ...raw,
    ...(Object.keys(fal).length ? { fal } : {}),
    ...(Object.keys(openai).length ? { openai } : {}),
    routes,
  });
  if (!parsed.success) {
    // zod echoes values; a key must not end up in a log line, so only paths and messages go out.
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(
      `provider configuration (${file} and DROPSHOOT_* variables) is invalid: ${issues}`,
    );
  }
  for (const [tool, route] of Object.entries(parsed.data.routes)) {
    if (route?.adapter === 'fal' && !parsed.data.fal)
      throw new Error(`route ${tool} uses fal, but no fal apiKey is configured`);
    if (route?.adapter === 'openai' && !parsed.data.openai)
      throw new Error(`route ${tool} uses openai, but no openai apiKey is configured`);
  }
  return parsed.data;
}
