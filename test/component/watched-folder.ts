/**
 * A folder the studio of a component test watches: made under `root` as `name`, exported beside
 * it, with an upscale recipe (made in-process in moments, 1 diamond) unless one is given.
 */
import fs from 'node:fs';
import path from 'node:path';
import { studio } from '../../src/renderer/src/transport';
import type { RecipeInput } from '../../src/shared/studio';

export const UPSCALE_RECIPE = {
  request: { toolId: 'photo_enhance', images: { user_photo: '{photo}' } },
  export: { preset: 'original', format: 'jpeg', quality: 85, naming: '{name}-{n}' },
} satisfies RecipeInput;

/** The folder's path, once the studio watches it. */
export async function watchedFolder(
  root: string,
  name: string,
  opts: { maxDiamonds?: number } = {},
): Promise<string> {
  const hot = path.join(root, name);
  fs.mkdirSync(hot);
  await studio().call('folders.add', {
    path: hot,
    outputDir: `${hot}-export`,
    recipe: UPSCALE_RECIPE,
    ...opts,
  });
  return hot;
}
