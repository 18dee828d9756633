/**
 * The offline preview dresses the caller's own model photo (a real person of ../shared/eval, read
 * in place) where the body is, never over the face (issue 11 item 4). Before, the garment went at
 * fixed fractions of the frame: on every people photo the tee covered the face. The garment is
 * drawn here in a green no person wears, on a magenta backdrop, so the render can be read: the
 * person is what is neither magenta, and the face is found in the render itself.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/core/catalog';
import { Compositor } from '../../src/core/providers/local/compose';
import { personParts } from '../../src/core/providers/local/person-parts';
import type { ProviderJob } from '../../src/core/providers/types';
import { sharp } from '../../src/infra/sharp';
import { EVAL_DIR } from './preview-tools-eval';

const compose = new Compositor(loadCatalog());
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-own-model-'));
const tee = path.join(dir, 'tee.png');
const MAGENTA = { r: 255, g: 0, b: 255 };

beforeAll(async () => {
  // A short-sleeved tee, flat on a light backdrop.
  const shape =
    'M200 60 L260 40 Q300 80 340 40 L400 60 L520 140 L470 220 L420 190 L420 520 L180 520 L180 190 L130 220 L80 140 Z';
  await sharp(
    Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="560"><rect width="100%" height="100%" fill="#f4f4f2"/><path d="${shape}" fill="#10c040"/></svg>`,
    ),
  )
    .png()
    .toFile(tee);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const peopleDir = path.join(EVAL_DIR, 'people');
const photo = (name: string) => path.join(peopleDir, name);
const present = fs.existsSync(peopleDir);
if (!present) console.log('garments on real people skipped: ../shared/eval/people is missing');

const dress = (person: string) => {
  const job: ProviderJob = {
    jobId: 'j',
    toolId: 'virtual_model',
    images: { garment_photo: [{ path: tee, mime: 'image/png' }] },
    fashionModel: { id: null, image: { path: photo(person), mime: 'image/jpeg' } },
    venue: null,
    pose: null,
    params: { backgroundColor: '#ff00ff' },
    outputs: 1,
  };
  return compose.onModel(job, ['garment_photo'], { frame: 'full' });
};

const isGreen = (r: number, g: number, b: number) => g > 150 && g - r > 80 && g - b > 60;

/** The render read back: the garment's box, and the face found on the person (not magenta). */
async function readRender(image: Buffer) {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
  const { width, height } = info;
  const rgba = Buffer.alloc(width * height * 4);
  const box = { left: width, top: height, right: -1, bottom: -1, count: 0 };
  for (let i = 0; i < width * height; i++) {
    const [r, g, b] = [data[i * 3]!, data[i * 3 + 1]!, data[i * 3 + 2]!];
    const backdrop =
      Math.abs(r - MAGENTA.r) + Math.abs(g - MAGENTA.g) + Math.abs(b - MAGENTA.b) < 90;
    rgba.set([r, g, b, backdrop ? 0 : 255], i * 4);
    if (!isGreen(r, g, b)) continue;
    const x = i % width;
    const y = (i / width) | 0;
    box.left = Math.min(box.left, x);
    box.right = Math.max(box.right, x);
    box.top = Math.min(box.top, y);
    box.bottom = Math.max(box.bottom, y);
    box.count++;
  }
  const person = await sharp(rgba, { raw: { width, height, channels: 4 } })
    .png()
    .toBuffer();
  return { width, height, garment: box, face: (await personParts(person)).face };
}

describe.skipIf(!present)("garments on the caller's own model photo", () => {
  // Photos whose face is found: the tee goes on the torso, under the chin, centred on the face.
  for (const person of ['01861_00.jpg', '09597_00.jpg', '07966_00.jpg', 'model_3.png'])
    it(`${person}: the tee under the face, on the torso`, { timeout: 90_000 }, async () => {
      const render = await readRender(await dress(person));
      const { garment, face } = render;
      console.log(
        `${person}: face ${face ? `y ${Math.round(face.y)}-${Math.round(face.y + face.height)} x ${Math.round(face.x + face.width / 2)}` : 'not found'}, tee y ${garment.top}-${garment.bottom} x ${Math.round((garment.left + garment.right) / 2)}`,
      );
      expect(garment.count).toBeGreaterThan(5000);
      // The face is still there to be found, and the garment starts under its chin.
      expect(face).toBeDefined();
      const chin = face!.y + face!.height;
      expect(garment.top).toBeGreaterThan(chin - face!.height * 0.1);
      // On the torso: from near the chin, as wide as a body, centred under the face.
      expect(garment.top).toBeLessThan(chin + face!.height * 1.2);
      expect(garment.right - garment.left).toBeGreaterThan(face!.width * 2);
      expect(
        Math.abs((garment.left + garment.right) / 2 - (face!.x + face!.width / 2)),
      ).toBeLessThan(face!.width);
    });

  // No face found on this photo (its head is cut at the top of the frame): the garment is not
  // guessed onto the body; the photo and the garment are laid side by side under a label.
  it('049447_0: the garment beside the photo, not over it', { timeout: 90_000 }, async () => {
    const render = await readRender(await dress('049447_0.jpg'));
    expect(render.garment.count).toBeGreaterThan(5000);
    expect(render.garment.left).toBeGreaterThan(render.width / 2);
  });
});
