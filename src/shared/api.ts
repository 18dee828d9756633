/**
 * The /v1 wire format from the service spec: request schemas (validated at every boundary) and
 * the response shapes. Types are derived from the schemas, never written twice.
 */
import { z } from 'zod';

/** The tools whose settings can be saved as a template set (a look). */
export const SAVEABLE_TOOL_IDS = [
  'virtual_model',
  'outfit_photo',
  'pro_studio',
  'jewelry_on_model',
  'clothing_ecom_pack',
  'jewelry_ecom_pack',
] as const;

export const TOOL_IDS = [
  ...SAVEABLE_TOOL_IDS,
  'ai_videos',
  'model_to_flat_lay',
  'amateur_to_pro',
  'pose_angle_switch',
  'model_swap',
  'photo_edit',
  'photo_enhance',
  'remove_background',
  'photo_reframe',
] as const;
export const ToolIdSchema = z.enum(TOOL_IDS);
export type ToolId = z.infer<typeof ToolIdSchema>;

export const RATIOS = ['1:1', '9:16', '16:9', '4:3', '3:4', '4:5', 'auto'] as const;
export const VIRTUAL_MODEL_RATIOS = ['1:1', '4:5', '3:4', '9:16', '16:9'] as const;
export const JEWELRY_TYPES = ['ring', 'necklace', 'earring', 'bracelet'] as const;
export const JewelryTypeSchema = z.enum(JEWELRY_TYPES);
export type JewelryType = z.infer<typeof JewelryTypeSchema>;
/** Spec: "Allowed values: not shown". Our decision, documented in README's API section. */
export const SHOT_TYPES = ['full_body', 'half_body', 'close_up', 'back_view', 'side_view'] as const;
export const STYLE_PRESETS = ['minimal', 'editorial', 'streetwear', 'luxury', 'catalog'] as const;
export const GENDERS = ['male', 'female'] as const;

/** Limits the spec leaves open ("not shown"); our decisions. */
export const LIMITS = {
  uploadBytes: 8 * 1024 * 1024,
  jsonBodyBytes: 1024 * 1024,
  imagesPerArray: 10,
  urlLength: 2048,
  promptLength: 2000,
  labelLength: 200,
  idLength: 128,
  maxVideoSeconds: 15,
  activeKeysPerAccount: 5,
  defaultDailyCap: 500,
  remoteImageBytes: 32 * 1024 * 1024,
} as const;

const trimmed = (max: number) => z.string().trim().min(1).max(max);
/** Ids we hand out are short tokens; anything else (path separators, SQL, NUL) is refused early. */
export const IdSchema = z
  .string()
  .min(1)
  .max(LIMITS.idLength)
  .regex(/^[A-Za-z0-9_-]+$/, 'must contain only letters, digits, "_" and "-"');

/** `W:H` with small positive integers; covers every listed ratio and marketplace ones (25:36). */
export const AspectRatioSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,2}:[1-9][0-9]{0,2}$/, 'must look like "4:5"')
  .refine((value) => {
    const [w, h] = value.split(':').map(Number) as [number, number];
    return w / h <= 10 && h / w <= 10;
  }, 'must be between 1:10 and 10:1');

export const ImageRefSchema = z.string().trim().min(1).max(LIMITS.urlLength);
export const ImageValueSchema = z.union([
  ImageRefSchema,
  z.array(ImageRefSchema).min(1).max(LIMITS.imagesPerArray),
]);
export const ImagesSchema = z
  .record(z.string().min(1).max(64), ImageValueSchema)
  .refine((r) => Object.keys(r).length <= 16, 'at most 16 image fields');
export type Images = z.infer<typeof ImagesSchema>;

/**
 * A generation request's settings besides `toolId`, `images` and `templateSetId`: the one list of
 * request fields (rule checks, stored job parameters and providers all take their names from it).
 */
const GenerationParamsShape = {
  pose: IdSchema.optional(),
  shotType: z.enum(SHOT_TYPES).optional(),
  stylePreset: z.enum(STYLE_PRESETS).optional(),
  customPrompt: trimmed(LIMITS.promptLength).optional(),
  motionPrompt: trimmed(LIMITS.promptLength).optional(),
  ratio: z.enum(RATIOS).optional(),
  duration: z.number().positive().max(LIMITS.maxVideoSeconds).optional(),
  targetRatio: AspectRatioSchema.optional(),
  jewelryType: JewelryTypeSchema.optional(),
  backgroundColor: z
    .string()
    .regex(/^#(?:[0-9a-fA-F]{3}){1,2}$/, 'must be a hex colour like "#f4f1ea"')
    .optional(),
};
export type GenerationParamField = keyof typeof GenerationParamsShape;
export const GENERATION_PARAM_FIELDS = Object.keys(GenerationParamsShape) as GenerationParamField[];

export const GenerationRequestSchema = z.strictObject({
  toolId: z.string().min(1).max(64).optional(),
  images: ImagesSchema.optional(),
  ...GenerationParamsShape,
  templateSetId: IdSchema.optional(),
});
export type GenerationRequest = z.infer<typeof GenerationRequestSchema>;

export const TemplateSetCreateSchema = z.strictObject({
  label: z.string().max(LIMITS.labelLength).optional(),
  sourceMediaId: IdSchema.optional(),
  toolId: z.string().min(1).max(64).optional(),
  images: ImagesSchema.optional(),
  pose: IdSchema.optional(),
  shotType: z.enum(SHOT_TYPES).optional(),
  stylePreset: z.enum(STYLE_PRESETS).optional(),
  ratio: z.enum(RATIOS).optional(),
});
export type TemplateSetCreate = z.infer<typeof TemplateSetCreateSchema>;

export const CatalogJobRequestSchema = z.strictObject({
  readyTemplateSetId: IdSchema.optional(),
  images: ImagesSchema.optional(),
  shotIds: z.array(IdSchema).min(1).max(100).optional(),
  ratio: z.enum(RATIOS).optional(),
  modelId: z
    .string()
    .regex(/^[\w.:/-]{1,200}$/, 'must be a model identifier')
    .optional(),
});
export type CatalogJobRequest = z.infer<typeof CatalogJobRequestSchema>;

const LimitQuery = z.coerce.number().int().min(1).max(100).default(20);
export const FashionModelsQuerySchema = z.object({
  gender: z.enum(GENDERS).optional(),
  limit: LimitQuery,
});
export const VenuesQuerySchema = z.object({ limit: LimitQuery });
export const PosesQuerySchema = z.object({ type: JewelryTypeSchema.optional(), limit: LimitQuery });
export const ReadySetsQuerySchema = z.object({
  category: z.string().min(1).max(64).optional(),
  limit: LimitQuery,
  cursor: z.string().min(1).max(256).optional(),
});
export type FashionModelsQuery = z.infer<typeof FashionModelsQuerySchema>;
export type VenuesQuery = z.infer<typeof VenuesQuerySchema>;
export type PosesQuery = z.infer<typeof PosesQuerySchema>;
export type ReadySetsQuery = z.infer<typeof ReadySetsQuerySchema>;

// ---- Responses -------------------------------------------------------------------------------

export const JOB_STATUSES = ['processing', 'completed', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export type ErrorBody = { success: false; error: string };
export type ToolEntry = {
  id: ToolId;
  inputShape: 'model_garment' | 'user_photo' | 'deterministic';
  promptMode: 'assembled' | 'none';
  fallbackPriceDiamonds: number;
};
export type FashionModelEntry = {
  id: string;
  name: string;
  gender: 'male' | 'female';
  imageUrl: string;
};
export type VenueEntry = { id: string; name: string; category: string; imageUrl: string };
export type PoseEntry = {
  id: string;
  name: string;
  type: 'default' | JewelryType;
  imageUrl: string;
};
export type ReadyShot = {
  id: string;
  name: string;
  pose: string;
  fashionModel: string;
  venue: string;
  ratio: string;
};
export type ReadyTemplateSetEntry = {
  id: string;
  name: string;
  category: string;
  coverUrl: string;
  shotCount: number;
  shots: ReadyShot[];
};
export type TemplateSetEntry = {
  id: string;
  label: string;
  toolId: ToolId;
  images: Record<string, string>;
  pose: string | null;
  shotType: string | null;
  stylePreset: string | null;
  ratio: string | null;
  coverUrl: string | null;
  createdAt: string;
};
export type GenerationBody = {
  success: true;
  id: string;
  status: JobStatus;
  resultUrls: string[];
  errorMessage: string | null;
  packTotal?: number;
  packCompleted?: number;
  packFailed?: number;
  /**
   * Places of `resultUrls` left empty (`null` or `""`), beyond the spec: an output that failed, or
   * one not copied out yet. Read by the client; the service never sends it.
   */
  emptyPlaces?: number;
  /**
   * The ids a poll's answer names (`id`, `mediaItemId`) when none is the one polled, beyond the
   * spec: read by the client; the caller tells another of its jobs from an internal id.
   */
  answeredAs?: string[];
  /** Catalog jobs (beyond the spec): per-shot status and URLs. */
  shots?: { shotId: string; status: 'pending' | 'completed' | 'failed'; resultUrls: string[] }[];
};
export type PlanStatus =
  'active' | 'will_expire' | 'paused' | 'billing_issue' | 'expired' | 'refunded' | 'none';
export type AccountBody = {
  success: true;
  email: string;
  diamondBalance: number;
  plan: {
    isPremium: boolean;
    status: PlanStatus;
    planProductId: string;
    provider: string;
    cancelAtPeriodEnd: boolean;
    renewsAt: string;
  };
};
export type CatalogJobBody = {
  success: true;
  mediaItemId: string;
  status: 'pack_processing';
  packTotal: number;
  diamondCost: number;
  readyTemplateSetId: string;
  shotIds: string[];
};
export type UploadBody = { success: true; id: string; url: string };
