/** Set-up shared by the studio tests against the reference service: a recipe, photos, a clock. */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { Recipe } from '../../../src/shared/studio';
import { shiftedDate } from '../../support/shifted-date';

const DAY_MS = 86_400_000;

/** The cheapest single-image recipe: a cut-out exported as PNG. */
export const CUTOUT_RECIPE: Recipe = {
  request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{n}' },
};

/** A ready shoot of the reference service's set shoot-02: 3 shots at 3 diamonds each. */
export const SHOOT_02_RECIPE: Recipe = {
  request: { readyTemplateSetId: 'shoot-02', images: { garment_photo: '{photo}' } },
  export: { preset: 'original', format: 'png', quality: 90, naming: '{name}-{shot}-{n}' },
};

/** A file's SHA-256, as the studio records a photo it takes (the runner checks it before upload). */
export const fileSha256 = (file: string): string =>
  createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** `n` different plain JPEGs named `{prefix}{i}.jpg` in `dir` (the same bytes twice would be skipped). */
export async function plainPhotos(
  dir: string,
  prefix: string,
  n: number,
  redStep = 30,
  green = 90,
): Promise<string[]> {
  fs.mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  for (let i = 0; i < n; i++) {
    const file = path.join(dir, `${prefix}${i}.jpg`);
    await sharp({
      create: {
        width: 320,
        height: 400,
        channels: 3,
        background: { r: redStep * i, g: green, b: 150 },
      },
    })
      .jpeg()
      .toFile(file);
    files.push(file);
  }
  return files;
}

/**
 * `n` product-like JPEGs `p00.jpg`, `p01.jpg`… in `dir`: a rounded shape on off-white, placed and
 * coloured differently in each.
 */
export async function shapePhotos(dir: string, n: number): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  for (let i = 0; i < n; i++) {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="320" height="400"><rect width="100%" height="100%" fill="#f0efe9"/><rect x="${60 + i * 7}" y="80" width="180" height="240" rx="24" fill="hsl(${i * 37},65%,45%)"/></svg>`;
    await sharp(Buffer.from(svg))
      .jpeg({ quality: 90 })
      .toFile(path.join(dir, `p${String(i).padStart(2, '0')}.jpg`));
  }
}

/**
 * Moves the whole process's clock (service and studio alike) on by whole days, or by `ms`;
 * `onCleanup` receives the undo, to run after the test.
 */
export function shiftableClock(onCleanup: (undo: () => void) => void): {
  nextDay: () => void;
  moveOn: (ms: number) => void;
} {
  const Real = globalThis.Date;
  let offset = 0;
  globalThis.Date = shiftedDate(() => offset);
  onCleanup(() => {
    globalThis.Date = Real;
  });
  const moveOn = (ms: number): void => {
    offset += ms;
  };
  return { nextDay: () => moveOn(DAY_MS), moveOn };
}

/**
 * `n` plain photos in `root/in` and the cut-out recipe in `root/recipe.json`, with `dropshoot run`'s
 * arguments for them (exports into `root/out`, studio data in `root/data`) against `remote`.
 */
export async function cutoutRunFolder(
  root: string,
  n: number,
): Promise<{ runArgs: (remote: string, key: string) => string[] }> {
  const inDir = path.join(root, 'in');
  await plainPhotos(inDir, 'p', n);
  const recipe = path.join(root, 'recipe.json');
  fs.writeFileSync(recipe, JSON.stringify(CUTOUT_RECIPE));
  return {
    runArgs: (remote, key) => [
      ...['--in', inDir, '--recipe', recipe, '--out', path.join(root, 'out')],
      ...['--data', path.join(root, 'data'), '--remote', remote, '--key', key],
    ],
  };
}
