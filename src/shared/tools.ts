/**
 * The 15 tools: which images each needs, which fields it takes, its price and whether it can be
 * saved as a template set. One table; validation, pricing and /v1/models all read it.
 */
import {
  SAVEABLE_TOOL_IDS,
  TOOL_IDS,
  type ToolEntry,
  type ToolId,
  type GenerationRequest,
} from './api';

/** A required image slot: one of `keys` must be present (`[]` keys are arrays). */
export type ImageRequirement = { field: string; oneOf: readonly string[] };

export type ToolSpec = {
  id: ToolId;
  inputShape: ToolEntry['inputShape'];
  promptMode: ToolEntry['promptMode'];
  price: number;
  required: readonly ImageRequirement[];
  /** Every image key the tool accepts; keys ending in [] in the spec are arrays here. */
  imageKeys: readonly string[];
  arrayKeys: readonly string[];
  /** Non-image fields the tool accepts (beyond toolId/images/templateSetId). */
  fields: readonly (keyof GenerationRequest)[];
  requiredFields: readonly (keyof GenerationRequest)[];
  /** Number of result images (packs give several). */
  outputs: number;
  saveable: boolean;
};

const GENERATIVE_COMMON = ['pose', 'customPrompt', 'ratio'] as const;
const one = (field: string, ...oneOf: string[]): ImageRequirement => ({
  field,
  oneOf: oneOf.length ? oneOf : [field],
});

type TableEntry = Omit<ToolSpec, 'saveable' | 'id'>;

/** The image slots of a tool that takes the user's one photo and nothing else. */
const ONE_PHOTO = {
  required: [one('user_photo')],
  imageKeys: ['user_photo'],
  arrayKeys: [],
} as const;

/** The image slots of a tool that dresses a model in several garment photos, in an optional venue. */
const OUTFIT_ON_MODEL = {
  required: [one('fashion_model'), one('garment_photos')],
  imageKeys: ['fashion_model', 'garment_photos', 'venue'],
  arrayKeys: ['garment_photos'],
} as const;

/** A local, prompt-free tool on one photo: only its price and its fields (all required) differ. */
const deterministic = (price: number, fields: TableEntry['fields'] = []): TableEntry => ({
  inputShape: 'deterministic',
  promptMode: 'none',
  price,
  ...ONE_PHOTO,
  fields,
  requiredFields: fields,
  outputs: 1,
});

/** Both e-commerce packs take the same request and return four shots; only their prompts differ. */
const ECOM_PACK: TableEntry = {
  inputShape: 'user_photo',
  promptMode: 'assembled',
  price: 12,
  imageKeys: ['user_photo', 'fashion_model'],
  required: ONE_PHOTO.required,
  arrayKeys: [],
  fields: GENERATIVE_COMMON,
  requiredFields: [],
  outputs: 4,
};

const table: Record<ToolId, TableEntry> = {
  virtual_model: {
    inputShape: 'model_garment',
    promptMode: 'assembled',
    price: 4,
    required: [one('fashion_model'), one('garment_photo')],
    imageKeys: ['fashion_model', 'garment_photo', 'garment_photos', 'venue'],
    arrayKeys: ['garment_photos'],
    fields: GENERATIVE_COMMON,
    requiredFields: [],
    outputs: 1,
  },
  outfit_photo: {
    inputShape: 'model_garment',
    promptMode: 'assembled',
    price: 6,
    ...OUTFIT_ON_MODEL,
    fields: GENERATIVE_COMMON,
    requiredFields: [],
    outputs: 1,
  },
  pro_studio: {
    inputShape: 'model_garment',
    promptMode: 'assembled',
    price: 8,
    ...OUTFIT_ON_MODEL,
    fields: [...GENERATIVE_COMMON, 'shotType', 'stylePreset'],
    requiredFields: ['shotType', 'stylePreset'],
    outputs: 1,
  },
  jewelry_on_model: {
    inputShape: 'model_garment',
    promptMode: 'assembled',
    price: 5,
    required: [one('jewelry_image', 'jewelry_image', 'jewelry_images')],
    imageKeys: ['jewelry_image', 'jewelry_images', 'fashion_model'],
    arrayKeys: ['jewelry_images'],
    fields: [...GENERATIVE_COMMON, 'jewelryType', 'backgroundColor'],
    requiredFields: ['jewelryType'],
    outputs: 1,
  },
  clothing_ecom_pack: ECOM_PACK,
  jewelry_ecom_pack: ECOM_PACK,
  ai_videos: {
    inputShape: 'user_photo',
    promptMode: 'assembled',
    price: 20,
    ...ONE_PHOTO,
    fields: ['motionPrompt', 'duration', 'ratio'],
    requiredFields: ['motionPrompt'],
    outputs: 1,
  },
  model_to_flat_lay: {
    inputShape: 'user_photo',
    promptMode: 'assembled',
    price: 4,
    ...ONE_PHOTO,
    fields: ['customPrompt', 'ratio'],
    requiredFields: [],
    outputs: 1,
  },
  amateur_to_pro: deterministic(2),
  pose_angle_switch: {
    inputShape: 'user_photo',
    promptMode: 'assembled',
    price: 4,
    ...ONE_PHOTO,
    fields: ['pose', 'customPrompt', 'ratio'],
    requiredFields: ['pose'],
    outputs: 1,
  },
  model_swap: {
    inputShape: 'model_garment',
    promptMode: 'assembled',
    price: 4,
    required: [one('user_photo'), one('fashion_model')],
    imageKeys: ['user_photo', 'fashion_model'],
    arrayKeys: [],
    fields: ['customPrompt', 'ratio'],
    requiredFields: [],
    outputs: 1,
  },
  photo_edit: {
    inputShape: 'user_photo',
    promptMode: 'assembled',
    price: 3,
    ...ONE_PHOTO,
    fields: ['customPrompt', 'ratio'],
    requiredFields: ['customPrompt'],
    outputs: 1,
  },
  photo_enhance: deterministic(1),
  remove_background: deterministic(1),
  photo_reframe: deterministic(2, ['targetRatio']),
};

const saveable = new Set<ToolId>(SAVEABLE_TOOL_IDS);
export const TOOLS: ReadonlyMap<ToolId, ToolSpec> = new Map(
  TOOL_IDS.map((id) => [id, { id, saveable: saveable.has(id), ...table[id] }]),
);

export function isToolId(value: string): value is ToolId {
  return TOOLS.has(value as ToolId);
}

export function getTool(id: ToolId): ToolSpec {
  const spec = TOOLS.get(id);
  if (!spec) throw new Error(`tool table has no entry for ${id}`);
  return spec;
}

export function toolEntries(): ToolEntry[] {
  return [...TOOLS.values()].map((t) => ({
    id: t.id,
    inputShape: t.inputShape,
    promptMode: t.promptMode,
    fallbackPriceDiamonds: t.price,
  }));
}

/** Price of one catalog-job shot (each shot is a virtual_model render). */
export const CATALOG_SHOT_PRICE = table.virtual_model.price;
