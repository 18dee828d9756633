/**
 * The local tools on variations of the real photos of ../shared/eval (issue 11: results are also
 * checked on photos we have not seen). Each photo is read in place and varied in memory as a shop's
 * own shots differ: a grey digital backdrop, a darker exposure, a colour cast; nothing is copied.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ffmpeg from '@ffmpeg-installer/ffmpeg';
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/core/catalog';
import { createLocalProvider } from '../../src/core/providers/local';
import { editPhoto } from '../../src/core/providers/local/photo-edit';
import { reframePhoto } from '../../src/core/providers/local/reframe';
import { removeBackground } from '../../src/core/providers/local/remove-background';
import { retouchPhoto } from '../../src/core/providers/local/retouch';
import { renderVideo } from '../../src/core/providers/local/video';
import { sharp } from '../../src/infra/sharp';
import { checkCompliance } from '../../src/studio/export/compliance';
import { smearBands } from '../../src/studio/export/edge-band';
import { renderForPreset } from '../../src/studio/export/render';
import {
  EVAL_DIR,
  edgeDistance,
  evalPresent,
  garmentMask,
  garmentPhoto,
} from './preview-tools-eval';
import { photoPlacement, rgbRaw } from './reframe-placement';
import { detailRows } from './helpers/images';

const present = evalPresent();
if (!present) console.log('local tools on varied real photos skipped: ../shared/eval is missing');

/** The garment through its reference mask onto a flat colour, saved as a shop would (JPEG 92). */
async function onFlatBackdrop(id: string, rgb: [number, number, number]): Promise<Buffer> {
  const mask = await sharp(path.join(EVAL_DIR, 'masks', `${id}.png`))
    .extractChannel(0)
    .raw()
    .toBuffer();
  const { data, info } = await sharp(await garmentPhoto(id))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  for (let i = 0; i < mask.length; i++)
    if (mask[i]! < 128) for (let c = 0; c < 3; c++) data[i * 3 + c] = rgb[c]!;
  return sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } })
    .jpeg({ quality: 92 })
    .toBuffer();
}

const darkened = async (id: string): Promise<Buffer> =>
  sharp(await garmentPhoto(id))
    .linear(0.85, 0)
    .jpeg({ quality: 92 })
    .toBuffer();

/**
 * Share (%) of the backdrop more than 3 px from the garment (reference mask) that the retouch
 * left visibly off white (any channel below 245): a grey rim or blotches around the product.
 */
async function greyBackdropShare(id: string, retouched: Buffer): Promise<number> {
  const reference = await garmentMask(id);
  const distance = edgeDistance(reference);
  const { data } = await sharp(retouched).raw().toBuffer({ resolveWithObject: true });
  let backdrop = 0;
  let grey = 0;
  for (let i = 0; i < reference.mask.length; i++) {
    if (reference.mask[i] || distance[i]! <= 3) continue;
    backdrop++;
    if (Math.min(data[i * 3]!, data[i * 3 + 1]!, data[i * 3 + 2]!) < 245) grey++;
  }
  return (100 * grey) / backdrop;
}

describe.skipIf(!present)('amateur_to_pro on a backdrop below white, saved as JPEG', () => {
  // JPEG rings beside a strong edge; on a white backdrop half of it clips away, on a grey one it
  // stays as blotches a JPEG block wide, which were kept as fabric: a ragged grey rim.
  const ids = ['00055_00', '00126_00', '02015_00', '02305_00', '00470_00', '051991_1'];
  // Figures (share of the backdrop off white) before the fix: grey max 1.56% (02015_00), darkened
  // mean 1.9% (00470_00 3.79%); after: grey max 0.40%, darkened mean 0.68% (02015_00 1.87%).
  it.each([
    [
      'a grey (#e8e8e8) digital backdrop',
      (id: string) => onFlatBackdrop(id, [232, 232, 232]),
      { max: 0.5, mean: 0.3 },
    ],
    ['darkened 15%', darkened, { max: 2, mean: 0.8 }],
  ] as const)(
    '%s: no grey rim of backdrop around the garment',
    { timeout: 300_000 },
    async (_, vary, limit) => {
      const shares: number[] = [];
      for (const id of ids)
        shares.push(await greyBackdropShare(id, await retouchPhoto(await vary(id))));
      console.log(
        `backdrop left off white: ${ids.map((id, k) => `${id} ${shares[k]!.toFixed(2)}%`).join(', ')}`,
      );
      expect(Math.max(...shares)).toBeLessThanOrEqual(limit.max);
      expect(shares.reduce((a, b) => a + b, 0) / shares.length).toBeLessThanOrEqual(limit.mean);
    },
  );
});

describe.skipIf(!present)('Zalando padding verdict on a retouched export', () => {
  it(
    'a figure cut by the top of the frame, enlarged, is not a smeared band',
    { timeout: 120_000 },
    async () => {
      // 053228_0's head touches the top: the export crops it there (the edge is not backdrop) and
      // enlarges 2.34x, so neighbouring rows change slowly and, diluted by the white around a
      // narrow figure, read as a 221 px smear.
      const photo = await sharp(path.join(EVAL_DIR, 'people', '053228_0.jpg'))
        .jpeg({ quality: 95 })
        .toBuffer();
      const rendered = await renderForPreset(await retouchPhoto(photo), {
        preset: 'zalando',
        format: 'jpeg',
        quality: 90,
      });
      const { data, info } = await sharp(rendered.data).raw().toBuffer({ resolveWithObject: true });
      const bands = smearBands({ data, width: info.width, height: info.height, channels: 3 });
      console.log(`053228_0, Zalando: bands ${JSON.stringify(bands)}`);
      const report = await checkCompliance({
        image: rendered.data,
        settings: { preset: 'zalando', format: 'jpeg' },
      });
      expect(report.checks.find((c) => c.id === 'padding')).toMatchObject({ ok: true });
    },
  );

  it(
    'flat white padding beside a straight-sided garment is not a smeared band',
    { timeout: 120_000 },
    async () => {
      // A cool cast, retouched to white and framed for Zalando: the padding is flat white, but the
      // near-repeats ran on into the black tee's straight side and read as a 370 px smear.
      const cool = await sharp(await garmentPhoto('03032_00'))
        .recomb([
          [0.9, 0, 0],
          [0, 0.98, 0],
          [0, 0, 1.06],
        ])
        .jpeg({ quality: 92 })
        .toBuffer();
      const rendered = await renderForPreset(await retouchPhoto(cool), {
        preset: 'zalando',
        format: 'jpeg',
        quality: 90,
      });
      const { data, info } = await sharp(rendered.data).raw().toBuffer({ resolveWithObject: true });
      const bands = smearBands({ data, width: info.width, height: info.height, channels: 3 });
      console.log(`03032_00 cool, Zalando: bands ${JSON.stringify(bands)}`);
      const report = await checkCompliance({
        image: rendered.data,
        settings: { preset: 'zalando', format: 'jpeg' },
      });
      expect(report.checks.find((c) => c.id === 'padding')).toMatchObject({ ok: true });
      expect(Math.max(...Object.values(bands))).toBe(0);
    },
  );
});

/**
 * Share (%) of the canvas that photo_reframe added (outside the photo, wherever it placed it) that
 * is not backdrop: farther than 40 levels (any channel) from the added area's median colour. A
 * crop adds no canvas: 0.
 */
async function streakShare(input: Buffer, output: Buffer): Promise<number> {
  const photo = await rgbRaw(input);
  const { data, ...info } = await rgbRaw(output);
  const at = photoPlacement(photo, { data, ...info });
  if (!at) return 0;
  const { left, top } = at;
  const [w, h] = [photo.width, photo.height];
  const added: number[] = [];
  for (let y = 0; y < info.height; y++)
    for (let x = 0; x < info.width; x++)
      if (x < left || x >= left + w || y < top || y >= top + h) added.push(y * info.width + x);
  expect(added.length).toBeGreaterThan(0);
  const median = [0, 1, 2].map(
    (c) => added.map((i) => data[i * 3 + c]!).sort((a, b) => a - b)[added.length >> 1]!,
  );
  const off = added.filter((i) =>
    [0, 1, 2].some((c) => Math.abs(data[i * 3 + c]! - median[c]!) > 40),
  );
  return (100 * off.length) / added.length;
}

describe.skipIf(!present)('photo_reframe with the subject touching the frame', () => {
  const cropped = async (
    file: string,
    box: { left: number; top: number; width: number; height: number },
  ) =>
    sharp(path.join(EVAL_DIR, file))
      .flatten({ background: '#ffffff' })
      .extract(box)
      .jpeg({ quality: 92 })
      .toBuffer();
  it.each([
    // A tee cropped 15% a side: its sleeves touch the frame; a model cut at the knees, her head
    // near the top.
    ['garments/00055_00.jpg', '16:9', { left: 115, top: 123, width: 538, height: 778 }],
    ['garments/00055_00.jpg', '4:5', { left: 115, top: 123, width: 538, height: 778 }],
    ['people/053228_0.jpg', '4:5', { left: 0, top: 0, width: 768, height: 717 }],
    ['people/01008_00.jpg', '4:5', { left: 0, top: 0, width: 768, height: 717 }],
  ] as const)(
    '%s cropped, to %s: the added canvas is backdrop, not the subject smeared outwards',
    { timeout: 120_000 },
    async (file, ratio, box) => {
      const input = await cropped(file, box);
      const share = await streakShare(input, await reframePhoto(input, ratio));
      console.log(
        `${file} cropped to ${ratio}: ${share.toFixed(2)}% of the added canvas is not backdrop`,
      );
      expect(share).toBeLessThanOrEqual(0.5);
    },
  );
});

describe.skipIf(!present)('clothing_ecom_pack detail shot of a product small or off-centre', () => {
  const catalog = loadCatalog();
  const provider = createLocalProvider({ catalog });
  const model = catalog.fashionModels[0]!;
  /** The garment at `scale` of the frame, its top-left at (`x`, `y`) of it, on its own backdrop. */
  async function placed(id: string, canvasWidth: number, scale: number, x: number, y: number) {
    const photo = await garmentPhoto(id);
    const { width, height } = await sharp(photo).metadata();
    const corner = await sharp(photo)
      .extract({ left: 0, top: 0, width: 1, height: 1 })
      .raw()
      .toBuffer();
    const W = Math.round(width! * canvasWidth);
    const small = await sharp(photo)
      .resize(Math.round(width! * scale))
      .toBuffer();
    const data = await sharp({
      create: {
        width: W,
        height: height!,
        channels: 3,
        background: { r: corner[0]!, g: corner[1]!, b: corner[2]! },
      },
    })
      .composite([{ input: small, left: Math.round(W * x), top: Math.round(height! * y) }])
      .jpeg({ quality: 92 })
      .toBuffer();
    return { data, backdrop: [...corner.subarray(0, 3)] };
  }
  // The detail was the photo's centre: 34.6% / 38.4% product before, 87.7% / 87.8% after (99.4%
  // for the photo as it is, unchanged).
  it.each([
    ['the photo as it is', 1, 1, 0, 0],
    ['a small garment in a large frame', 1, 0.4, 0.45, 0.3],
    ['a landscape canvas with the garment to the right', 1.8, 1, 0.42, 0],
  ] as const)(
    '%s: the detail shot is of the product, not of the backdrop',
    { timeout: 120_000 },
    async (what, canvasWidth, scale, x, y) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-detail-'));
      try {
        const { data, backdrop } = await placed('00055_00', canvasWidth, scale, x, y);
        const file = path.join(dir, 'tee.jpg');
        fs.writeFileSync(file, data);
        const outputs = await provider.run(
          {
            jobId: 'j',
            toolId: 'clothing_ecom_pack',
            images: { user_photo: [{ path: file, mime: 'image/jpeg' }] },
            fashionModel: {
              id: model.id,
              image: { path: catalog.filePath(model.file), mime: 'image/png' },
            },
            venue: null,
            pose: null,
            params: {},
            outputs: 3,
          },
          { signal: new AbortController().signal },
        );
        const detail = await sharp(outputs[2]!.data).raw().toBuffer({ resolveWithObject: true });
        const n = detail.info.width * detail.info.height;
        let product = 0;
        for (let i = 0; i < n; i++)
          if ([0, 1, 2].some((c) => Math.abs(detail.data[i * 3 + c]! - backdrop[c]!) > 12))
            product++;
        console.log(`${what}: the detail shot is ${((100 * product) / n).toFixed(1)}% product`);
        expect(product / n).toBeGreaterThanOrEqual(0.8);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe.skipIf(!present)('ai_videos of a product cropped at its edges', () => {
  it('is padded with the backdrop, not with the garment colour', { timeout: 180_000 }, async () => {
    // A long-sleeved top cropped 15% a side: sleeves, shoulders and hem touch the frame, so the
    // photo's outer ring is mostly purple and its median padded the clip in lilac.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-video-pad-'));
    try {
      const cropped = await sharp(await garmentPhoto('049805_1'))
        .extract({ left: 115, top: 123, width: 538, height: 778 })
        .jpeg({ quality: 92 })
        .toBuffer();
      const file = path.join(dir, 'clip.mp4');
      fs.writeFileSync(
        file,
        await renderVideo(cropped, { motionPrompt: 'slow pan left', ratio: '9:16', duration: 1 }),
      );
      const r = spawnSync(ffmpeg.path, [
        ...['-hide_banner', '-loglevel', 'error', '-y', '-i', file],
        ...['-vf', 'fps=5', path.join(dir, 'f%03d.png')],
      ]);
      expect(r.status).toBe(0);
      const frames = fs.readdirSync(dir).filter((f) => f.endsWith('.png'));
      expect(frames.length).toBeGreaterThanOrEqual(4);
      let worst = 0;
      for (const f of frames) {
        const { data, info } = await sharp(path.join(dir, f))
          .removeAlpha()
          .raw()
          .toBuffer({ resolveWithObject: true });
        const { width, height } = info;
        let coloured = 0;
        let ring = 0;
        for (let y = 0; y < height; y++)
          for (let x = 0; x < width; x++) {
            if (x > 1 && y > 1 && x < width - 2 && y < height - 2) continue;
            ring++;
            const i = (y * width + x) * 3;
            if (Math.min(data[i]!, data[i + 1]!, data[i + 2]!) < 200) coloured++;
          }
        worst = Math.max(worst, coloured / ring);
      }
      console.log(
        `049805_1 cropped, 9:16: ${(100 * worst).toFixed(1)}% of a frame's edge not backdrop`,
      );
      expect(worst).toBeLessThan(0.01);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!present)('photo_edit brighter on a white garment', () => {
  it('keeps the white garment apart from the white backdrop', { timeout: 120_000 }, async () => {
    // 049940_1: a white blouse about 25 levels under a 255 backdrop.
    const id = '049940_1';
    const reference = await garmentMask(id);
    const distance = edgeDistance(reference);
    const clipped = async (image: Buffer) => {
      const { data } = await sharp(image).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      let garment = 0;
      let white = 0;
      for (let i = 0; i < reference.mask.length; i++) {
        if (!reference.mask[i] || distance[i]! <= 3) continue;
        garment++;
        if (Math.min(data[i * 3]!, data[i * 3 + 1]!, data[i * 3 + 2]!) >= 254) white++;
      }
      return (100 * white) / garment;
    };
    const photo = await garmentPhoto(id);
    const before = await clipped(photo);
    const out = await editPhoto(photo, 'make it brighter');
    const after = await clipped(out.data);
    const { data: original } = await sharp(photo).raw().toBuffer({ resolveWithObject: true });
    const { data: brighter } = await sharp(out.data).raw().toBuffer({ resolveWithObject: true });
    const mean = (b: Buffer) => b.reduce((s, v) => s + v, 0) / b.length;
    console.log(
      `${id} brighter: garment at pure white ${before.toFixed(1)}% -> ${after.toFixed(1)}%, mean ${mean(original).toFixed(1)} -> ${mean(brighter).toFixed(1)}`,
    );
    expect(after).toBeLessThanOrEqual(before + 5);
    expect(mean(brighter)).toBeGreaterThan(mean(original) + 3);
  });
});

/** Clean backdrop above and below the figure, as a share of the height (`detailRows`). */
async function figureMargins(image: Buffer): Promise<{ top: number; bottom: number }> {
  const { top, bottom, height } = await detailRows(image);
  return { top: top / height, bottom: (height - bottom) / height };
}

describe.skipIf(!present)('Zalando and Shopify exports of people photos', () => {
  // A person who does not fill the canvas ratio was cropped to it, centred: 01008_00 and 14627_00
  // lost the top of the head (Shopify), 049447_0, 049713_0 and 052472_0 their feet. The export now
  // pads by continuing the backdrop (a wall lit unevenly too) and crops only a busy scene, keeping
  // the top. 052767_0 (a blue wall meeting a grey floor) keeps its feet too: the seam is backdrop.
  const people = present
    ? fs.readdirSync(path.join(EVAL_DIR, 'people')).filter((f) => f.endsWith('.jpg'))
    : [];
  it.each(['zalando', 'shopify'] as const)(
    '%s: the figure keeps the backdrop above its head and below its feet',
    { timeout: 300_000 },
    async (preset) => {
      const lost: string[] = [];
      for (const file of people) {
        const photo = fs.readFileSync(path.join(EVAL_DIR, 'people', file));
        const source = await figureMargins(photo);
        const rendered = await renderForPreset(photo, { preset, format: 'jpeg', quality: 90 });
        const out = await figureMargins(rendered.data);
        // A margin of 0.5% or more in the photo must stay a margin: not cut through the head or
        // the feet (a figure touching the frame may stay touching it).
        if (source.top >= 0.005 && out.top === 0) lost.push(`${file} head`);
        if (source.bottom >= 0.005 && out.bottom === 0) lost.push(`${file} feet`);
      }
      console.log(`${preset}: figures cut by the export: ${lost.join(', ') || 'none'}`);
      expect(lost).toEqual([]);
    },
  );
});

/**
 * Share (%) of the garment (reference mask) that an unscaled crop or pad of the photo still shows:
 * the photo's offset in the output is found by matching a grid of its pixels around the garment.
 */
async function garmentKept(id: string, output: Buffer): Promise<number> {
  const reference = await garmentMask(id);
  const { width: w, height: h } = reference;
  const source = await sharp(await garmentPhoto(id))
    .greyscale()
    .raw()
    .toBuffer();
  const { data, info } = await sharp(output)
    .greyscale()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const points: number[] = [];
  for (let y = Math.round(h * 0.2); y < h * 0.8; y += 16)
    for (let x = Math.round(w * 0.2); x < w * 0.8; x += 16) points.push(y * w + x);
  let best = { dx: 0, dy: 0, sad: Infinity };
  for (let dy = -300; dy <= 300; dy++)
    for (let dx = -300; dx <= 300; dx++) {
      let sad = 0;
      for (const p of points) {
        const x = (p % w) + dx;
        const y = Math.floor(p / w) + dy;
        sad +=
          x < 0 || y < 0 || x >= info.width || y >= info.height
            ? 255
            : Math.abs(data[y * info.width + x]! - source[p]!);
        if (sad >= best.sad) break;
      }
      if (sad < best.sad) best = { dx, dy, sad };
    }
  let garment = 0;
  let kept = 0;
  for (let i = 0; i < reference.mask.length; i++) {
    if (!reference.mask[i]) continue;
    garment++;
    const x = (i % w) + best.dx;
    const y = Math.floor(i / w) + best.dy;
    if (x >= 0 && y >= 0 && x < info.width && y < info.height) kept++;
  }
  return (100 * kept) / garment;
}

describe.skipIf(!present)('photo_edit crop to a ratio the product does not fit', () => {
  // The largest square inside a 768x1024 photo of trousers cut their waistband and hems (88.9% to
  // 93.3% of the garment kept); the crop now pads with the backdrop to keep the whole product.
  it('crop to a square keeps the whole of tall trousers', { timeout: 300_000 }, async () => {
    const ids = ['051412_1', '051473_1', '051515_1', '051517_1'];
    const shares: number[] = [];
    for (const id of ids) {
      const out = await editPhoto(await garmentPhoto(id), 'crop to a square');
      const { width, height } = await sharp(out.data).metadata();
      expect(width).toBe(height);
      shares.push(await garmentKept(id, out.data));
    }
    console.log(
      `garment kept by 'crop to a square': ${ids.map((id, k) => `${id} ${shares[k]!.toFixed(1)}%`).join(', ')}`,
    );
    expect(Math.min(...shares)).toBeGreaterThanOrEqual(99.5);
  });
});

describe.skipIf(!present)(
  'Zalando padding verdict on a person cut by the bottom of the frame',
  () => {
    // 01008_00's legs run out of the frame; exported for Zalando the photo's own last rows are
    // enlarged about 2.4x, and the smooth skin between the legs' outlines read as a smeared band at
    // the bottom (cut-out 14 px, darkened and retouched 8 px: padding check failed). A smear repeats
    // the outlines in place; the photo's own rows move them.
    it.each([
      ['its cut-out', async (photo: Buffer) => removeBackground(photo)],
      [
        'darkened 15% and retouched',
        async (photo: Buffer) =>
          retouchPhoto(await sharp(photo).linear(0.85, 0).jpeg({ quality: 92 }).toBuffer()),
      ],
    ] as const)('%s: no smeared band', { timeout: 120_000 }, async (what, vary) => {
      const photo = fs.readFileSync(path.join(EVAL_DIR, 'people', '01008_00.jpg'));
      const rendered = await renderForPreset(await vary(photo), {
        preset: 'zalando',
        format: 'jpeg',
        quality: 90,
      });
      const { data, info } = await sharp(rendered.data).raw().toBuffer({ resolveWithObject: true });
      const bands = smearBands({ data, width: info.width, height: info.height, channels: 3 });
      console.log(`01008_00 ${what}, Zalando: bands ${JSON.stringify(bands)}`);
      const report = await checkCompliance({
        image: rendered.data,
        settings: { preset: 'zalando', format: 'jpeg' },
      });
      expect(report.checks.find((c) => c.id === 'padding')).toMatchObject({ ok: true });
    });
  },
);
