/**
 * ai_videos offline: an H.264 MP4 of the photo with camera motion steered by the words of the
 * motion prompt (zoom in/out, pan left/right, tilt up/down, orbit), rendered by the ffmpeg binary
 * that ships inside @ffmpeg-installer/ffmpeg.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ffmpeg from '@ffmpeg-installer/ffmpeg';
import { ProviderError } from '../types';
import { canvasFor, decodeMeta, open, ratioOf } from './image-io';
import { sharp } from '../../../infra/sharp';
import { computeMatte, matteBox, type Matte } from './remove-background';

const FPS = 25;

export type Motion =
  'zoom_in' | 'zoom_out' | 'pan_left' | 'pan_right' | 'tilt_up' | 'tilt_down' | 'orbit';

/** The first motion named in the prompt; a slow zoom in by default. */
export function motionFrom(prompt: string): Motion {
  const text = prompt.toLowerCase();
  const rules: [RegExp, Motion][] = [
    [/zoom(ing)?\s*out|pull(s|ing)?\s*back|dolly\s*out/, 'zoom_out'],
    [/zoom|push(es|ing)?\s*in|dolly\s*in|close[- ]?up/, 'zoom_in'],
    [/pan(s|ning)?\s*(to\s*the\s*)?left/, 'pan_left'],
    [/pan(s|ning)?\s*(to\s*the\s*)?right|pan/, 'pan_right'],
    [/tilt(s|ing)?\s*up|crane\s*up|rise/, 'tilt_up'],
    [/tilt(s|ing)?\s*down|crane\s*down/, 'tilt_down'],
    [/orbit|rotat|spin|turn(s|ing)?\s*around|360/, 'orbit'],
  ];
  return rules.find(([re]) => re.test(text))?.[1] ?? 'zoom_in';
}

/** The subject's box in the still, in pixels, with the margin it keeps from the frame. */
type Keep = { x0: number; y0: number; x1: number; y1: number };

/**
 * The camera path as a zoompan filter. Every window holds `keep` (the product with a margin), so
 * no frame cuts a sleeve: the zoom stops where the window meets the product, and pans and tilts
 * travel only as far as the window still holds it. Motion is eased (no jolt at start and end).
 */
export function zoompan(
  motion: Motion,
  frames: number,
  w: number,
  h: number,
  keep: Keep = { x0: 0, y0: 0, x1: w, y1: h },
): string {
  const t = `(0.5-0.5*cos(PI*on/${Math.max(1, frames - 1)}))`;
  const zmax = Math.max(
    1,
    Math.min(1.3, w / Math.max(1, keep.x1 - keep.x0), h / Math.max(1, keep.y1 - keep.y0)),
  );
  const f = (v: number) => v.toFixed(4);
  // Allowed window corners at the current zoom.
  const xLo = `max(0,${f(keep.x1)}-iw/zoom)`;
  const xHi = `min(iw-iw/zoom,${f(keep.x0)})`;
  const yLo = `max(0,${f(keep.y1)}-ih/zoom)`;
  const yHi = `min(ih-ih/zoom,${f(keep.y0)})`;
  const clampX = (e: string) => `max(${xLo},min(${xHi},${e}))`;
  const clampY = (e: string) => `max(${yLo},min(${yHi},${e}))`;
  const cx = (keep.x0 + keep.x1) / 2;
  const cy = (keep.y0 + keep.y1) / 2;
  const centre = `x='${clampX(`${f(cx)}-iw/zoom/2`)}':y='${clampY(`${f(cy)}-ih/zoom/2`)}'`;
  const zp = f(Math.min(1.25, zmax));
  switch (motion) {
    case 'zoom_in':
      return `zoompan=z='1+${f(zmax - 1)}*${t}':${centre}`;
    case 'zoom_out':
      return `zoompan=z='${f(zmax)}-${f(zmax - 1)}*${t}':${centre}`;
    case 'pan_left':
      return `zoompan=z='${zp}':x='${xHi}+(${xLo}-${xHi})*${t}':y='${clampY(`${f(cy)}-ih/zoom/2`)}'`;
    case 'pan_right':
      return `zoompan=z='${zp}':x='${xLo}+(${xHi}-${xLo})*${t}':y='${clampY(`${f(cy)}-ih/zoom/2`)}'`;
    case 'tilt_up':
      return `zoompan=z='${zp}':x='${clampX(`${f(cx)}-iw/zoom/2`)}':y='${yHi}+(${yLo}-${yHi})*${t}'`;
    case 'tilt_down':
      return `zoompan=z='${zp}':x='${clampX(`${f(cx)}-iw/zoom/2`)}':y='${yLo}+(${yHi}-${yLo})*${t}'`;
    case 'orbit': {
      const a = `(2*PI*on/${Math.max(1, frames - 1)})`;
      return `zoompan=z='${f(Math.min(1.2, zmax))}':x='${xLo}+(${xHi}-${xLo})*(0.5+0.5*sin(${a}))':y='${yLo}+(${yHi}-${yLo})*(0.5+0.5*cos(${a}))'`;
    }
  }
}

export async function renderVideo(
  input: Buffer,
  opts: { motionPrompt: string; duration?: number; ratio?: string },
  signal?: AbortSignal,
): Promise<Buffer> {
  const meta = await decodeMeta(input);
  const duration = Math.max(1, Math.min(15, opts.duration ?? 5));
  const frames = Math.round(duration * FPS);
  const { width, height } = canvasFor(ratioOf(opts.ratio, meta.width! / meta.height!), 1080);
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'dropshoot-video-'));
  try {
    // The whole photo goes in the frame (no cover crop: that cut sleeves before any motion),
    // padded with its own backdrop colour, oversampled so zooming stays sharp.
    const still = path.join(dir, 'still.png');
    const sw = width * 2;
    const sh = height * 2;
    const matte = await computeMatte(input);
    const backdrop = await edgeColour(input, matte);
    // A 3% border of backdrop, so a product touching the photo's edge is not cut by the frame's.
    const iw = Math.round(sw * 0.94);
    const ih = Math.round(sh * 0.94);
    await open(input)
      .resize(iw, ih, { fit: 'contain', background: backdrop })
      .flatten({ background: backdrop })
      .extend({
        left: (sw - iw) >> 1,
        right: sw - iw - ((sw - iw) >> 1),
        top: (sh - ih) >> 1,
        bottom: sh - ih - ((sh - ih) >> 1),
        background: backdrop,
      })
      .png({ compressionLevel: 1 })
      .toFile(still);
    const upright = (meta.orientation ?? 1) >= 5;
    const keep = productBox(
      matte,
      upright ? meta.height! : meta.width!,
      upright ? meta.width! : meta.height!,
      sw,
      sh,
    );
    const out = path.join(dir, 'out.mp4');
    const filter = `${zoompan(motionFrom(opts.motionPrompt), frames, sw, sh, keep)}:d=${frames}:s=${width}x${height}:fps=${FPS},format=yuv420p`;
    const args = [
      '-hide_banner',
      '-loglevel',
      'error',
      '-y',
      '-i',
      still,
      '-vf',
      filter,
      '-frames:v',
      String(frames),
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-crf',
      '22',
      '-movflags',
      '+faststart',
      '-pix_fmt',
      'yuv420p',
      out,
    ];
    await new Promise<void>((resolve, reject) => {
      const child = spawn(ffmpeg.path, args, { stdio: ['ignore', 'ignore', 'pipe'], signal });
      let stderr = '';
      let spawnError: Error | undefined;
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('error', (err) => (spawnError = err));
      // Settled on 'close', never on 'error': a cancel kills ffmpeg, which still opens and
      // finishes its output for a moment; removing the folder before it ends left the MP4 behind.
      child.on('close', (code) => {
        if (code === 0 && !spawnError) resolve();
        else if (signal?.aborted) reject(new ProviderError('the generation was cancelled'));
        else if (spawnError)
          reject(new ProviderError(`ffmpeg could not run: ${spawnError.message}`));
        else reject(new ProviderError(`ffmpeg failed (${code}): ${stderr.trim().slice(0, 300)}`));
      });
    });
    return await fs.promises.readFile(out);
  } finally {
    await fs.promises.rm(dir, { recursive: true, force: true });
  }
}

/** Matte alpha below which a pixel of the ring is backdrop. */
const BACKDROP_ALPHA = 64;
/** Fewer backdrop pixels than this in a sample and it does not tell the backdrop's colour. */
const FEW = 8;

/**
 * The backdrop's colour, to pad with: the median of the photo's outer ring where the matte says
 * backdrop (else of all its backdrop). The whole ring's median was the garment's colour when the
 * product covered most of the ring (a top cropped at its sleeves and hem: a lilac frame around it).
 */
async function edgeColour(
  input: Buffer,
  matte: Matte,
): Promise<{ r: number; g: number; b: number }> {
  const size = 64;
  const { data } = await open(input)
    .resize(size, size, { fit: 'fill' })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const alpha = await sharp(Buffer.from(matte.alpha), {
    raw: { width: matte.width, height: matte.height, channels: 1 },
  })
    .resize(size, size, { fit: 'fill' })
    .raw()
    .toBuffer();
  const pick = (keep: (x: number, y: number, i: number) => boolean): number[][] => {
    const out: number[][] = [[], [], []];
    for (let y = 0; y < size; y++)
      for (let x = 0; x < size; x++) {
        const i = y * size + x;
        if (keep(x, y, i)) for (let c = 0; c < 3; c++) out[c]!.push(data[i * 3 + c]!);
      }
    return out;
  };
  const onRing = (x: number, y: number) => x <= 1 || y <= 1 || x >= size - 2 || y >= size - 2;
  let sample = pick((x, y, i) => onRing(x, y) && alpha[i]! < BACKDROP_ALPHA);
  if (sample[0]!.length < FEW) sample = pick((_x, _y, i) => alpha[i]! < BACKDROP_ALPHA);
  if (sample[0]!.length < FEW) sample = pick(onRing);
  const [r, g, b] = sample.map((v) => v.sort((p, q) => p - q)[v.length >> 1]!);
  return { r: r!, g: g!, b: b! };
}

/** The product's box in the still (the photo contained in 94% of sw x sh, centred), with a 3% margin. */
function productBox(matte: Matte, w: number, h: number, sw: number, sh: number): Keep {
  const scale = Math.min(Math.round(sw * 0.94) / w, Math.round(sh * 0.94) / h);
  const ox = (sw - w * scale) / 2;
  const oy = (sh - h * scale) / 2;
  const box = matteBox(matte) ?? { left: 0, top: 0, width: matte.width, height: matte.height };
  const k = (w / matte.width) * scale;
  const m = 0.03 * Math.max(sw, sh);
  return {
    x0: Math.max(0, ox + box.left * k - m),
    y0: Math.max(0, oy + box.top * k - m),
    x1: Math.min(sw, ox + (box.left + box.width) * k + m),
    y1: Math.min(sh, oy + (box.top + box.height) * k + m),
  };
}
