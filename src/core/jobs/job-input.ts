/**
 * What a job stores about its work: one unit per output group (one for a generation, one per shot
 * for a catalog job), with every image already resolved. Parsed with zod when read back from
 * disk, so a corrupt row fails its job instead of crashing the runner.
 */
import { z } from 'zod';
import { JEWELRY_TYPES, TOOL_IDS, type GenerationParamField } from '../../shared/api';
import { UPLOAD_MIMES } from '../../shared/media-types';

const StoredImageSchema = z.discriminatedUnion('source', [
  z.object({ source: z.literal('blob'), sha256: z.string(), mime: z.enum(UPLOAD_MIMES) }),
  z.object({ source: z.literal('catalog'), file: z.string(), mime: z.enum(UPLOAD_MIMES) }),
]);

const EntitySchema = z.object({ id: z.string().nullable(), image: StoredImageSchema });

/**
 * The request's settings a unit keeps, one per request field but the pose (resolved into `pose`);
 * loose, since they were checked on the way in. The compiler asks for a new request field here.
 */
const StoredParamsShape = {
  shotType: z.string().optional(),
  stylePreset: z.string().optional(),
  customPrompt: z.string().optional(),
  motionPrompt: z.string().optional(),
  ratio: z.string().optional(),
  targetRatio: z.string().optional(),
  duration: z.number().optional(),
  jewelryType: z.enum(JEWELRY_TYPES).optional(),
  backgroundColor: z.string().optional(),
} satisfies Record<Exclude<GenerationParamField, 'pose'>, z.ZodType>;

export const StoredUnitSchema = z.object({
  toolId: z.enum(TOOL_IDS),
  shotId: z.string().nullable(),
  images: z.record(z.string(), z.array(StoredImageSchema)),
  fashionModel: EntitySchema.nullable(),
  venue: EntitySchema.nullable(),
  pose: z
    .object({
      id: z.string(),
      type: z.enum(['default', ...JEWELRY_TYPES]),
      image: StoredImageSchema,
    })
    .nullable(),
  params: z.object({
    ...StoredParamsShape,
    modelId: z.string().optional(),
    variant: z.number().int().optional(),
  }),
  outputs: z.number().int().min(1),
});
export type StoredUnit = z.infer<typeof StoredUnitSchema>;

export const JobInputSchema = z.object({
  units: z.array(StoredUnitSchema).min(1),
  /** The styling the caller asked for, kept so "save look" can read it back (template sets). */
  styling: z.object({
    images: z.record(z.string(), z.string()),
    pose: z.string().nullable(),
    shotType: z.string().nullable(),
    stylePreset: z.string().nullable(),
    ratio: z.string().nullable(),
  }),
});
export type JobInput = z.infer<typeof JobInputSchema>;
