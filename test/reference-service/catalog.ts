/**
 * The reference service's own catalog, chosen from the spec (2.1, 2.2, 2.5, 2.8) where the spec
 * leaves values open. Ids are kebab-case slugs, unlike Dropshoot's `prefix_` ids.
 */
export type ToolRule = {
  id: string;
  inputShape: string;
  promptMode: string;
  fallbackPriceDiamonds: number;
  /** Image fields that must be present (an entry of alternatives means one of them). */
  requiredImages: (string | string[])[];
  /** Other fields that must be present. */
  requiredFields: string[];
  /** Number of result images (packs make several). */
  results: number;
  saveable: boolean;
  video?: boolean;
};

const tool = (
  t: Omit<ToolRule, 'requiredFields' | 'results' | 'saveable'> & Partial<ToolRule>,
): ToolRule => ({
  requiredFields: [],
  results: 1,
  saveable: false,
  ...t,
});

/** The 15 tools of spec 2.2. virtual_model costs 4 (spec); the other prices are our choice. */
export const TOOLS: readonly ToolRule[] = [
  tool({
    id: 'virtual_model',
    inputShape: 'model_garment',
    promptMode: 'assembled',
    fallbackPriceDiamonds: 4,
    requiredImages: ['fashion_model', 'garment_photo'],
    saveable: true,
  }),
  tool({
    id: 'outfit_photo',
    inputShape: 'model_garment',
    promptMode: 'assembled',
    fallbackPriceDiamonds: 5,
    requiredImages: ['fashion_model', 'garment_photos'],
    saveable: true,
  }),
  tool({
    id: 'pro_studio',
    inputShape: 'model_garment',
    promptMode: 'assembled',
    fallbackPriceDiamonds: 6,
    requiredImages: ['fashion_model', 'garment_photos'],
    requiredFields: ['shotType', 'stylePreset'],
    saveable: true,
  }),
  tool({
    id: 'jewelry_on_model',
    inputShape: 'model_garment',
    promptMode: 'assembled',
    fallbackPriceDiamonds: 5,
    requiredImages: [['jewelry_image', 'jewelry_images']],
    requiredFields: ['jewelryType'],
    saveable: true,
  }),
  tool({
    id: 'clothing_ecom_pack',
    inputShape: 'single_photo',
    promptMode: 'assembled',
    fallbackPriceDiamonds: 12,
    requiredImages: ['user_photo'],
    results: 4,
    saveable: true,
  }),
  tool({
    id: 'jewelry_ecom_pack',
    inputShape: 'single_photo',
    promptMode: 'assembled',
    fallbackPriceDiamonds: 12,
    requiredImages: ['user_photo'],
    results: 4,
    saveable: true,
  }),
  tool({
    id: 'ai_videos',
    inputShape: 'single_photo',
    promptMode: 'assembled',
    fallbackPriceDiamonds: 15,
    requiredImages: ['user_photo'],
    requiredFields: ['motionPrompt'],
    video: true,
  }),
  tool({
    id: 'model_to_flat_lay',
    inputShape: 'single_photo',
    promptMode: 'assembled',
    fallbackPriceDiamonds: 4,
    requiredImages: ['user_photo'],
  }),
  tool({
    id: 'amateur_to_pro',
    inputShape: 'deterministic',
    promptMode: 'none',
    fallbackPriceDiamonds: 2,
    requiredImages: ['user_photo'],
  }),
  tool({
    id: 'pose_angle_switch',
    inputShape: 'single_photo',
    promptMode: 'assembled',
    fallbackPriceDiamonds: 4,
    requiredImages: ['user_photo'],
    requiredFields: ['pose'],
  }),
  tool({
    id: 'model_swap',
    inputShape: 'model_garment',
    promptMode: 'assembled',
    fallbackPriceDiamonds: 4,
    requiredImages: ['user_photo', 'fashion_model'],
  }),
  tool({
    id: 'photo_edit',
    inputShape: 'single_photo',
    promptMode: 'instruction',
    fallbackPriceDiamonds: 3,
    requiredImages: ['user_photo'],
    requiredFields: ['customPrompt'],
  }),
  tool({
    id: 'photo_enhance',
    inputShape: 'deterministic',
    promptMode: 'none',
    fallbackPriceDiamonds: 1,
    requiredImages: ['user_photo'],
  }),
  tool({
    id: 'remove_background',
    inputShape: 'deterministic',
    promptMode: 'none',
    fallbackPriceDiamonds: 1,
    requiredImages: ['user_photo'],
  }),
  tool({
    id: 'photo_reframe',
    inputShape: 'deterministic',
    promptMode: 'none',
    fallbackPriceDiamonds: 2,
    requiredImages: ['user_photo'],
    requiredFields: ['targetRatio'],
  }),
];
export const toolById = (id: string): ToolRule | undefined => TOOLS.find((t) => t.id === id);

/** Price of one catalog (ready shoot) shot before `chargeExtra`: our choice, the spec shows none. */
export const SHOT_PRICE = 3;

export const FASHION_MODELS = Array.from({ length: 30 }, (_, i) => ({
  id: `person-${String(i + 1).padStart(3, '0')}`,
  name: `Person ${i + 1}`,
  gender: i % 2 === 0 ? 'female' : 'male',
}));
export const VENUES = Array.from({ length: 25 }, (_, i) => ({
  id: `place-${String(i + 1).padStart(3, '0')}`,
  name: `Place ${i + 1}`,
}));
const JEWELRY = ['ring', 'necklace', 'earring', 'bracelet'] as const;
export const POSES = [
  ...Array.from({ length: 24 }, (_, i) => ({
    id: `stance-${String(i + 1).padStart(3, '0')}`,
    type: null as string | null,
  })),
  ...JEWELRY.flatMap((type) =>
    Array.from({ length: 3 }, (_, i) => ({
      id: `${type}-stance-${i + 1}`,
      type: type as string | null,
    })),
  ),
];

export type ReadySet = {
  id: string;
  category: string;
  active: boolean;
  shots: { id: string; pose: string; label: string }[];
};
const CATEGORIES = ['studio', 'street', 'jewelry'];
/** 13 sets (one inactive, so 404); shot counts 2 to 5. */
export const READY_SETS: readonly ReadySet[] = Array.from({ length: 13 }, (_, i) => ({
  id: `shoot-${String(i + 1).padStart(2, '0')}`,
  category: CATEGORIES[i % 3]!,
  active: i !== 12,
  shots: Array.from({ length: 2 + (i % 4) }, (_, s) => ({
    id: `take-${s + 1}`,
    pose: `stance-${String(s + 1).padStart(3, '0')}`,
    label: `Take ${s + 1}`,
  })),
}));
export const readySetById = (id: string): ReadySet | undefined =>
  READY_SETS.find((s) => s.id === id && s.active);
