/**
 * Request rules of spec 4.6 and 4.10 (validation only, no side effects): which fields each tool
 * needs, and the 400 messages in the spec's form ("<toolId>: missing required image <field>").
 */
import { z } from 'zod';
import { POSES, toolById, type ToolRule } from './catalog';

export class BadRequest extends Error {
  constructor(
    readonly status: 400 | 402 | 404,
    message: string,
  ) {
    super(message);
  }
}

const ImageValue = z.union([z.string(), z.array(z.string())]);
/** Loose on purpose: unknown fields are ignored (the spec does not say they are refused). */
export const GenerationRequestSchema = z.looseObject({
  toolId: z.string().optional(),
  images: z.record(z.string(), ImageValue).optional(),
  pose: z.string().optional(),
  shotType: z.string().optional(),
  stylePreset: z.string().optional(),
  customPrompt: z.string().optional(),
  motionPrompt: z.string().optional(),
  ratio: z.string().optional(),
  duration: z.number().positive().optional(),
  targetRatio: z.string().optional(),
  jewelryType: z.string().optional(),
  backgroundColor: z.string().optional(),
  templateSetId: z.string().optional(),
});
export type GenerationRequest = z.infer<typeof GenerationRequestSchema>;

export const CatalogJobRequestSchema = z.looseObject({
  readyTemplateSetId: z.string().optional(),
  images: z.record(z.string(), ImageValue).optional(),
  shotIds: z.array(z.string()).optional(),
  ratio: z.string().optional(),
  modelId: z.string().optional(),
});

export const TemplateSetCreateSchema = z.looseObject({
  label: z.string().optional(),
  sourceMediaId: z.string().optional(),
  toolId: z.string().optional(),
  images: z.record(z.string(), ImageValue).optional(),
  pose: z.string().optional(),
});

const RATIOS = ['1:1', '9:16', '16:9', '4:3', '3:4', '4:5', 'auto'];
const VIRTUAL_MODEL_RATIOS = ['1:1', '4:5', '3:4', '9:16', '16:9'];
const JEWELRY_TYPES = ['ring', 'necklace', 'earring', 'bracelet'];

export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new BadRequest(
      400,
      `Invalid request: ${issue ? `${issue.path.join('.') || 'body'} ${issue.message}` : 'malformed body'}`,
    );
  }
  return parsed.data;
}

/** Checks a (template-merged) generation request; returns the tool it names. */
export function checkGeneration(request: GenerationRequest): ToolRule {
  if (!request.toolId) throw new BadRequest(400, 'Unknown toolId: toolId is required');
  const tool = toolById(request.toolId);
  if (!tool) throw new BadRequest(400, `Unknown toolId '${request.toolId}'`);
  const images = request.images ?? {};
  const present = (field: string) => {
    const v = images[field];
    return Array.isArray(v)
      ? v.length > 0 && v.every((x) => x.trim() !== '')
      : typeof v === 'string' && v.trim() !== '';
  };
  for (const need of tool.requiredImages) {
    const options = Array.isArray(need) ? need : [need];
    if (!options.some(present))
      throw new BadRequest(
        400,
        `${tool.id}: missing required image images.${options.join(' or images.')}`,
      );
  }
  for (const field of tool.requiredFields) {
    const value = (request as Record<string, unknown>)[field];
    if (typeof value !== 'string' || value.trim() === '')
      throw new BadRequest(400, `${tool.id}: missing required field ${field}`);
  }
  if (request.ratio !== undefined) {
    const allowed = tool.id === 'virtual_model' ? VIRTUAL_MODEL_RATIOS : RATIOS;
    if (!allowed.includes(request.ratio))
      throw new BadRequest(400, `${tool.id}: ratio must be one of ${allowed.join(', ')}`);
  }
  if (request.jewelryType !== undefined && !JEWELRY_TYPES.includes(request.jewelryType)) {
    throw new BadRequest(400, `${tool.id}: jewelryType must be one of ${JEWELRY_TYPES.join(', ')}`);
  }
  if (request.pose !== undefined && !POSES.some((p) => p.id === request.pose))
    throw new BadRequest(400, `${tool.id}: unknown pose '${request.pose}'`);
  return tool;
}

/** The field holding the product photo that results are made from. */
export function productImage(
  images: Record<string, string | string[]>,
): { field: string; url: string } | null {
  for (const field of [
    'user_photo',
    'garment_photo',
    'garment_photos',
    'jewelry_image',
    'jewelry_images',
  ]) {
    const v = images[field];
    const url = Array.isArray(v) ? v[0] : v;
    if (typeof url === 'string' && url.trim() !== '') return { field, url };
  }
  return null;
}
