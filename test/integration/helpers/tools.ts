/** The 15 tools of spec 2.2 with the prices decided for this service and a valid request for each. */
import { expect } from 'vitest';
import type { Api, Json } from './api';
import { expectSuccess } from './api';

export const PRICES = {
  virtual_model: 4,
  outfit_photo: 6,
  pro_studio: 8,
  jewelry_on_model: 5,
  clothing_ecom_pack: 12,
  jewelry_ecom_pack: 12,
  ai_videos: 20,
  model_to_flat_lay: 4,
  amateur_to_pro: 2,
  pose_angle_switch: 4,
  model_swap: 4,
  photo_edit: 3,
  photo_enhance: 1,
  remove_background: 1,
  photo_reframe: 2,
} as const;

export type Tool = keyof typeof PRICES;
export const TOOLS = Object.keys(PRICES) as Tool[];
export const SAVEABLE: Tool[] = [
  'virtual_model',
  'outfit_photo',
  'pro_studio',
  'jewelry_on_model',
  'clothing_ecom_pack',
  'jewelry_ecom_pack',
];
export const PACK_TOOLS: Tool[] = ['clothing_ecom_pack', 'jewelry_ecom_pack'];

/** Required image fields per tool (spec 2.2); the missing-image 400 must name the field. */
export const REQUIRED_IMAGES: Record<Tool, string[]> = {
  virtual_model: ['fashion_model', 'garment_photo'],
  outfit_photo: ['fashion_model', 'garment_photos'],
  pro_studio: ['fashion_model', 'garment_photos'],
  jewelry_on_model: ['jewelry_image'],
  clothing_ecom_pack: ['user_photo'],
  jewelry_ecom_pack: ['user_photo'],
  ai_videos: ['user_photo'],
  model_to_flat_lay: ['user_photo'],
  amateur_to_pro: ['user_photo'],
  pose_angle_switch: ['user_photo'],
  model_swap: ['user_photo', 'fashion_model'],
  photo_edit: ['user_photo'],
  photo_enhance: ['user_photo'],
  remove_background: ['user_photo'],
  photo_reframe: ['user_photo'],
};

export type CatalogIds = { fashionModel: string; venue: string; pose: string; ringPose: string };

export async function catalogIds(api: Api): Promise<CatalogIds> {
  const [m, v, p, r] = await Promise.all([
    api.get('/v1/fashion-models?limit=1'),
    api.get('/v1/venues?limit=1'),
    api.get('/v1/poses?limit=1'),
    api.get('/v1/poses?type=ring&limit=1'),
  ]);
  for (const res of [m, v, p, r]) expectSuccess(res, 200);
  const pick = (res: { body: Json }, key: string): string => {
    const list = res.body[key] as Json[];
    expect(Array.isArray(list) && list.length > 0, `${key} must not be empty`).toBe(true);
    return list[0]!.id as string;
  };
  return {
    fashionModel: pick(m, 'fashionModels'),
    venue: pick(v, 'venues'),
    pose: pick(p, 'poses'),
    ringPose: pick(r, 'poses'),
  };
}

/** A valid, minimal request for every tool; `photo` is an uploaded (or otherwise reachable) image URL. */
export function requestFor(tool: Tool, photo: string, ids: CatalogIds, photo2 = photo): Json {
  switch (tool) {
    case 'virtual_model':
      return {
        toolId: tool,
        images: { fashion_model: ids.fashionModel, garment_photo: photo, venue: ids.venue },
        pose: ids.pose,
        ratio: '4:5',
      };
    case 'outfit_photo':
      return {
        toolId: tool,
        images: { fashion_model: ids.fashionModel, garment_photos: [photo, photo2] },
      };
    case 'pro_studio':
      return {
        toolId: tool,
        images: { fashion_model: ids.fashionModel, garment_photos: [photo] },
        shotType: 'full_body',
        stylePreset: 'minimal',
      };
    case 'jewelry_on_model':
      return {
        toolId: tool,
        images: { jewelry_image: photo },
        jewelryType: 'ring',
        pose: ids.ringPose,
        backgroundColor: '#f4efe9',
      };
    case 'clothing_ecom_pack':
    case 'jewelry_ecom_pack':
    case 'model_to_flat_lay':
    case 'amateur_to_pro':
    case 'photo_enhance':
    case 'remove_background':
      return { toolId: tool, images: { user_photo: photo } };
    case 'ai_videos':
      return {
        toolId: tool,
        images: { user_photo: photo },
        motionPrompt: 'slow 360 turn, soft light',
        duration: 2,
      };
    case 'pose_angle_switch':
      return { toolId: tool, images: { user_photo: photo }, pose: ids.pose };
    case 'model_swap':
      return { toolId: tool, images: { user_photo: photo, fashion_model: ids.fashionModel } };
    case 'photo_edit':
      return {
        toolId: tool,
        images: { user_photo: photo },
        customPrompt: 'make the shirt navy blue',
      };
    case 'photo_reframe':
      return { toolId: tool, images: { user_photo: photo }, targetRatio: '4:5' };
  }
}
