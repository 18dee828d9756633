import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discardTemp, placeFile, tempPathFor, writeFileAtomic } from '../../src/infra/atomic-write';
import { checkCompliance } from '../../src/studio/export/compliance';
import { exportResult, type ExportResultInput } from '../../src/studio/export/export-result';
import { renderForPreset } from '../../src/studio/export/render';
import {
  moveNoClobber,
  moveSourceToDone,
  moveSourceToFailed,
} from '../../src/studio/export/source-files';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-export-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const OFF_WHITE = { r: 243, g: 240, b: 235 };
/** A dress silhouette with a light collar, drawn at (x, y) in a w×h frame. */
const dressSvg = (w: number, h: number, x: number, y: number, s = 1): Buffer =>
  Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">
      <g transform="translate(${x} ${y}) scale(${s})">
        <path d="M150 0 L250 0 L280 120 L400 900 L0 900 L120 120 Z" fill="#a8243c"/>
        <rect x="170" y="0" width="60" height="40" fill="#f1eee9"/>
      </g>
    </svg>`,
  );

/** Product shot: the dress on an off-white sweep (with a little sensor noise). */
async function offWhiteShot(file: string, w = 1200, h = 1600, x = 400, y = 350): Promise<string> {
  const noise = await sharp({
    create: {
      width: w,
      height: h,
      channels: 3,
      background: '#000',
      noise: { type: 'gaussian', mean: 0, sigma: 2 },
    },
  })
    .removeAlpha()
    .raw()
    .toBuffer();
  const base = await sharp({ create: { width: w, height: h, channels: 3, background: OFF_WHITE } })
    .composite([{ input: dressSvg(w, h, x, y) }])
    .removeAlpha()
    .raw()
    .toBuffer();
  for (let i = 0; i < base.length; i++)
    base[i] = Math.max(0, (base[i] ?? 0) - (noise[i] ?? 0) / 16);
  await sharp(base, { raw: { width: w, height: h, channels: 3 } })
    .jpeg({ quality: 92 })
    .toFile(file);
  return file;
}

/** Cut-out: the dress on a transparent background, with an anti-aliased alpha edge. */
async function transparentShot(file: string, w = 1000, h = 1000): Promise<string> {
  await sharp({
    create: { width: w, height: h, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } },
  })
    .composite([{ input: dressSvg(w, h, 300, 50, 1) }])
    .png()
    .toFile(file);
  return file;
}

type Pixels = { data: Buffer; width: number; height: number; channels: number };
async function pixels(file: string | Buffer): Promise<Pixels> {
  const { data, info } = await sharp(file).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/** Independent of the implementation: bbox of pixels darker than 240 on any channel. */
function measuredFill(p: Pixels): number {
  let [l, t, r, b] = [p.width, p.height, -1, -1];
  for (let y = 0; y < p.height; y++) {
    for (let x = 0; x < p.width; x++) {
      const i = (y * p.width + x) * p.channels;
      if ((p.data[i] ?? 0) < 240 || (p.data[i + 1] ?? 0) < 240 || (p.data[i + 2] ?? 0) < 240) {
        l = Math.min(l, x);
        r = Math.max(r, x);
        t = Math.min(t, y);
        b = Math.max(b, y);
      }
    }
  }
  return Math.max((r - l + 1) / p.width, (b - t + 1) / p.height);
}

function borderPixels(p: Pixels): number[][] {
  const out: number[][] = [];
  const at = (x: number, y: number): number[] => {
    const i = (y * p.width + x) * p.channels;
    return [...p.data.subarray(i, i + 3)];
  };
  for (let x = 0; x < p.width; x++) out.push(at(x, 0), at(x, p.height - 1));
  for (let y = 0; y < p.height; y++) out.push(at(0, y), at(p.width - 1, y));
  return out;
}

const base = (over: Partial<ExportResultInput> = {}): ExportResultInput => ({
  resultPath: '',
  sourceName: 'look-042.jpg',
  sourceFolder: '',
  tool: 'model-swap',
  shot: 'front',
  n: 1,
  date: '2026-11-22',
  outputDir: path.join(dir, 'out'),
  export: {},
  ...over,
});

describe('marketplace presets', () => {
  it('amazon: 2000 px long side, pure white border, product fills ≥ 85%, sRGB JPEG', async () => {
    const src = await offWhiteShot(path.join(dir, 'shot.jpg'));
    const out = await renderForPreset(src, { preset: 'amazon', format: 'webp', quality: 90 });
    const meta = await sharp(out.data).metadata();
    expect(meta.format).toBe('jpeg');
    expect(Math.max(meta.width, meta.height)).toBe(2000);
    expect(meta.space).toBe('srgb');
    expect(meta.hasProfile).toBe(true);

    const p = await pixels(out.data);
    expect(borderPixels(p).every((px) => px.every((c) => c === 255))).toBe(true);
    const fill = measuredFill(p);
    expect(fill).toBeGreaterThanOrEqual(0.85);
    expect(fill).toBeLessThan(0.95); // a white margin remains around the product

    const report = await checkCompliance({
      image: out.data,
      settings: { preset: 'amazon', format: 'webp' },
      notes: out.notes,
      upscale: out.upscale,
      preview: out.preview,
    });
    expect(report.ok).toBe(true);
    const check = (id: string) => report.checks.find((c) => c.id === id);
    expect(Number(check('fill')?.value)).toBeGreaterThanOrEqual(0.85);
    expect(Math.abs(Number(check('fill')?.value) - fill)).toBeLessThan(0.02);
    // Whole background measured: nothing but pure white outside the product (JPEG edge ring aside).
    expect(check('background')?.ok).toBe(true);
    expect(check('background')?.value).toMatch(/^0\.0\d\d% impure$/);
    // The 900 px dress is enlarged about 2× to fill 2000 px: said as a warning, not refused.
    expect(check('upscale')).toMatchObject({ ok: false, severity: 'warning' });
    expect(report.verdict).toBe('warn');
    expect(check('icc-profile')?.ok).toBe(true);
    // The user asked for WebP; amazon forces JPEG and the report says so.
    expect(report.notes.join(' ')).toMatch(/amazon requires JPEG: WEBP was requested/);
  });

  it('amazon: a transparent cut-out is flattened onto white, never black', async () => {
    const src = await transparentShot(path.join(dir, 'cutout.png'));
    const out = await renderForPreset(src, { preset: 'amazon', format: 'jpeg', quality: 90 });
    const p = await pixels(out.data);
    expect(borderPixels(p).every((px) => px.every((c) => c === 255))).toBe(true);
    expect(measuredFill(p)).toBeGreaterThanOrEqual(0.85);
    expect(p.height).toBe(2000);
  });

  it('amazon: compliance fails an off-white, small product image', async () => {
    const src = await offWhiteShot(path.join(dir, 'shot.jpg'));
    const report = await checkCompliance({
      image: src,
      settings: { preset: 'amazon', format: 'jpeg' },
    });
    expect(report.ok).toBe(false);
    const failed = report.checks.filter((c) => !c.ok).map((c) => c.id);
    expect(failed).toEqual(expect.arrayContaining(['background', 'fill', 'size', 'icc-profile']));
  });

  it.each([
    ['zalando', 1801, 2600, 'jpeg'],
    ['shopify', 2048, 2048, 'png'],
  ] as const)(
    '%s: exactly %i×%i, product centred, sRGB with profile',
    async (preset, w, h, format) => {
      // Product off-centre, to prove it gets centred.
      const src = await offWhiteShot(path.join(dir, 'shot.jpg'), 1600, 1400, 150, 250);
      const out = await renderForPreset(src, { preset, format, quality: 85 });
      const meta = await sharp(out.data).metadata();
      expect([meta.width, meta.height]).toEqual([w, h]);
      expect(meta.format).toBe(preset === 'zalando' ? 'jpeg' : format);
      expect(meta.space).toBe('srgb');
      expect(meta.hasProfile).toBe(true);
      // The product's horizontal centre is the frame's centre (within 2%).
      const p = await pixels(out.data);
      let [l, r] = [p.width, -1];
      for (let y = 0; y < p.height; y += 4) {
        for (let x = 0; x < p.width; x++) {
          const i = (y * p.width + x) * p.channels;
          if ((p.data[i] ?? 0) < 200 && (p.data[i + 1] ?? 0) < 120)
            [l, r] = [Math.min(l, x), Math.max(r, x)];
        }
      }
      expect(Math.abs((l + r) / 2 - p.width / 2) / p.width).toBeLessThan(0.02);
      const report = await checkCompliance({ image: out.data, settings: { preset, format } });
      expect(report.ok).toBe(true);
    },
  );

  it('original: keeps the size; PNG keeps transparency; sRGB profile embedded', async () => {
    const src = await transparentShot(path.join(dir, 'cutout.png'), 640, 480);
    const out = await renderForPreset(src, { preset: 'original', format: 'png', quality: 90 });
    const meta = await sharp(out.data).metadata();
    expect([meta.width, meta.height, meta.format, meta.hasAlpha, meta.hasProfile]).toEqual([
      640,
      480,
      'png',
      true,
      true,
    ]);
    const report = await checkCompliance({
      image: out.data,
      settings: { preset: 'original', format: 'png' },
      sourceSize: { width: 640, height: 480 },
    });
    expect(report.ok).toBe(true);
  });

  it('converts a Display P3 input to sRGB', async () => {
    const src = path.join(dir, 'p3.jpg');
    await sharp({
      create: { width: 300, height: 200, channels: 3, background: { r: 200, g: 40, b: 60 } },
    })
      .withIccProfile('p3')
      .jpeg()
      .toFile(src);
    const out = await renderForPreset(src, { preset: 'original', format: 'jpeg', quality: 90 });
    const report = await checkCompliance({
      image: out.data,
      settings: { preset: 'original', format: 'jpeg' },
    });
    expect(report.checks.find((c) => c.id === 'icc-profile')).toMatchObject({ ok: true });
    const p3Report = await checkCompliance({
      image: src,
      settings: { preset: 'original', format: 'jpeg' },
    });
    expect(p3Report.checks.find((c) => c.id === 'icc-profile')).toMatchObject({ ok: false });
  });
});

describe('exportResult', () => {
  it('writes under the naming pattern, suffixes conflicts, and leaves no temp files', async () => {
    const src = await offWhiteShot(path.join(dir, 'result.jpg'), 600, 800, 100, 100);
    const input = base({
      resultPath: src,
      sourceFolder: 'brand/ss27',
      export: { preset: 'shopify', format: 'webp', naming: '{folder}/{name}-{tool}-{shot}-{n}' },
    });
    const first = await exportResult(input);
    const second = await exportResult(input);
    const third = await exportResult(input);
    const outDir = path.join(dir, 'out', 'brand', 'ss27');
    expect(first.path).toBe(path.join(outDir, 'look-042-model-swap-front-1.webp'));
    expect(second.path).toBe(path.join(outDir, 'look-042-model-swap-front-1-2.webp'));
    expect(third.path).toBe(path.join(outDir, 'look-042-model-swap-front-1-3.webp'));
    expect([first.status, second.status, third.status]).toEqual(['written', 'written', 'written']);
    expect(first.report.ok).toBe(true);
    expect(fs.readdirSync(outDir).sort()).toEqual([
      'look-042-model-swap-front-1-2.webp',
      'look-042-model-swap-front-1-3.webp',
      'look-042-model-swap-front-1.webp',
    ]);
  });

  it('skip leaves the existing file alone; overwrite replaces it only when asked', async () => {
    const src = await offWhiteShot(path.join(dir, 'result.jpg'), 400, 500, 50, 50);
    const target = path.join(dir, 'out', 'look-042-model-swap-1.jpg');
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, 'not an image');
    const skipped = await exportResult(base({ resultPath: src, conflict: 'skip' }));
    expect(skipped).toMatchObject({ status: 'skipped', path: target });
    expect(skipped.report.ok).toBe(false);
    expect(fs.readFileSync(target, 'utf8')).toBe('not an image');

    const overwritten = await exportResult(base({ resultPath: src, conflict: 'overwrite' }));
    expect(overwritten).toMatchObject({ status: 'overwritten', path: target });
    expect((await sharp(target).metadata()).format).toBe('jpeg');
    expect(fs.readdirSync(path.dirname(target))).toEqual(['look-042-model-swap-1.jpg']);
  });

  it('amazon export reports forced JPEG and a passing compliance report', async () => {
    const src = await offWhiteShot(path.join(dir, 'result.png'));
    const out = await exportResult(
      base({ resultPath: src, export: { preset: 'amazon', format: 'png' } }),
    );
    expect(out.path.endsWith('.jpg')).toBe(true);
    expect(out.report.ok).toBe(true);
    expect(out.report.checks.find((c) => c.id === 'format')?.message).toContain('forced');
  });

  it('copies a video result as it is', async () => {
    const video = path.join(dir, 'clip.mp4');
    fs.writeFileSync(video, Buffer.from('fake mp4 bytes'));
    const out = await exportResult(base({ resultPath: video, resultMime: 'video/mp4' }));
    expect(path.basename(out.path)).toBe('look-042-model-swap-1.mp4');
    expect(fs.readFileSync(out.path, 'utf8')).toBe('fake mp4 bytes');
    expect(out.report.ok).toBe(true);
  });

  it('rejects a bad naming pattern before writing anything', async () => {
    const src = await offWhiteShot(path.join(dir, 'result.jpg'), 200, 200, 0, 0);
    await expect(
      exportResult(base({ resultPath: src, export: { naming: '{name}/{oops}' } })),
    ).rejects.toThrow(/Unknown token \{oops\}/);
    expect(fs.existsSync(path.join(dir, 'out'))).toBe(false);
  });
});

describe('atomic writes', () => {
  it('never exposes a partial file under the real name and cleans its temp file', async () => {
    const target = path.join(dir, 'a', 'photo.jpg');
    const data = Buffer.alloc(5 * 1024 * 1024, 7);
    const seen: number[] = [];
    const watcher = fs.watch(dir, { recursive: true }, () => {
      if (fs.existsSync(target)) seen.push(fs.statSync(target).size);
    });
    const result = await writeFileAtomic(target, data);
    watcher.close();
    expect(result).toEqual({ status: 'written', path: target });
    expect(seen.every((size) => size === data.length)).toBe(true);
    expect(fs.readdirSync(path.dirname(target))).toEqual(['photo.jpg']);
  });

  it('suffix never replaces a file created by someone else', async () => {
    const target = path.join(dir, 'x.jpg');
    fs.writeFileSync(target, 'theirs');
    const results = await Promise.all(
      [1, 2, 3, 4].map((i) => writeFileAtomic(target, Buffer.from(`mine ${i}`), 'suffix')),
    );
    expect(new Set(results.map((r) => r.path)).size).toBe(4);
    expect(fs.readFileSync(target, 'utf8')).toBe('theirs');
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('removes temp files a crash left behind, but not the ones being written', async () => {
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    const leftover = path.join(out, '.shot-03-1.jpg.04d5d01cf200.tmp');
    fs.writeFileSync(leftover, 'half a jpeg');
    fs.writeFileSync(path.join(out, '.notes.tmp'), 'not ours: no random tag');
    const inFlight = tempPathFor(path.join(out, 'busy.jpg'));
    fs.writeFileSync(inFlight, 'being written');

    await writeFileAtomic(path.join(out, 'shot-04-1.jpg'), Buffer.from('jpeg'));

    expect(fs.readdirSync(out).sort()).toEqual(
      ['.notes.tmp', path.basename(inFlight), 'shot-04-1.jpg'].sort(),
    );
    await discardTemp(inFlight);
  });

  it('placeFile with skip reports the existing file and keeps it', async () => {
    const src = path.join(dir, 'src.bin');
    const target = path.join(dir, 'dst.bin');
    fs.writeFileSync(src, 'new');
    fs.writeFileSync(target, 'old');
    expect(await placeFile(src, target, 'skip')).toEqual({ status: 'skipped', path: target });
    expect(fs.readFileSync(target, 'utf8')).toBe('old');
  });
});

describe('source files', () => {
  it('moves a source to done/ mirroring its subfolder, suffixing instead of overwriting', async () => {
    const root = path.join(dir, 'hot');
    fs.mkdirSync(path.join(root, 'brand', 'ss27'), { recursive: true });
    fs.mkdirSync(path.join(root, 'done', 'brand', 'ss27'), { recursive: true });
    fs.writeFileSync(path.join(root, 'done', 'brand', 'ss27', 'look.jpg'), 'earlier');
    const file = path.join(root, 'brand', 'ss27', 'look.jpg');
    fs.writeFileSync(file, 'photo');
    const moved = await moveSourceToDone({ root, file });
    expect(moved).toBe(path.join(root, 'done', 'brand', 'ss27', 'look-2.jpg'));
    expect(fs.readFileSync(moved, 'utf8')).toBe('photo');
    expect(fs.readFileSync(path.join(root, 'done', 'brand', 'ss27', 'look.jpg'), 'utf8')).toBe(
      'earlier',
    );
    expect(fs.existsSync(file)).toBe(false);
  });

  it('moves a failed source to failed/ with a reason file', async () => {
    const root = path.join(dir, 'hot');
    fs.mkdirSync(root, { recursive: true });
    const file = path.join(root, 'look.jpg');
    fs.writeFileSync(file, 'photo');
    const { path: moved, reasonPath } = await moveSourceToFailed({
      root,
      file,
      reason: 'The service refused the photo: no person detected',
      now: new Date('2026-11-22T10:00:00Z'),
    });
    expect(moved).toBe(path.join(root, 'failed', 'look.jpg'));
    expect(reasonPath).toBe(path.join(root, 'failed', 'look.jpg.reason.txt'));
    const reason = fs.readFileSync(reasonPath, 'utf8');
    expect(reason).toContain('no person detected');
    expect(reason).toContain('2026-11-22T10:00:00.000Z');
    expect(fs.readdirSync(path.join(root, 'failed')).sort()).toEqual([
      'look.jpg',
      'look.jpg.reason.txt',
    ]);
  });

  it('refuses to move a file from outside the hot folder', async () => {
    const file = path.join(dir, 'elsewhere.jpg');
    fs.writeFileSync(file, 'x');
    await expect(moveSourceToDone({ root: path.join(dir, 'hot'), file })).rejects.toThrow(
      /not inside/,
    );
  });

  it('moves across filesystems by copy + fsync + unlink', async (ctx) => {
    // /dev/shm is a tmpfs on Linux: a different device from the test folder, when present.
    const shm = '/dev/shm';
    if (!fs.existsSync(shm) || fs.statSync(shm).dev === fs.statSync(dir).dev) ctx.skip();
    const other = fs.mkdtempSync(path.join(shm, 'dropshoot-xdev-'));
    try {
      const src = path.join(other, 'look.jpg');
      fs.writeFileSync(src, 'photo');
      fs.writeFileSync(path.join(dir, 'look.jpg'), 'taken');
      const moved = await moveNoClobber(src, path.join(dir, 'look.jpg'));
      expect(moved).toBe(path.join(dir, 'look-2.jpg'));
      expect(fs.readFileSync(moved, 'utf8')).toBe('photo');
      expect(fs.existsSync(src)).toBe(false);
      expect(fs.readdirSync(dir).sort()).toEqual(['look-2.jpg', 'look.jpg']);
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });
});
