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

const FPS = 25;

export type Motion = 'zoom_in' | 'zoom_out' | 'pan_left' | 'pan_right' | 'tilt_up' | 'tilt_down' | 'orbit';

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

function zoompan(motion: Motion, frames: number, w: number, h: number): string {
  const t = `(on/${frames - 1})`;
  const centre = "x='iw/2-(iw/zoom/2)':y='ih/2-(ih/zoom/2)'";
  switch (motion) {
    case 'zoom_in':
      return `zoompan=z='1+0.3*${t}':${centre}`;
    case 'zoom_out':
      return `zoompan=z='1.3-0.3*${t}':${centre}`;
    case 'pan_left':
      return `zoompan=z='1.25':x='(iw-iw/zoom)*(1-${t})':y='ih/2-(ih/zoom/2)'`;
    case 'pan_right':
      return `zoompan=z='1.25':x='(iw-iw/zoom)*${t}':y='ih/2-(ih/zoom/2)'`;
    case 'tilt_up':
      return `zoompan=z='1.25':x='iw/2-(iw/zoom/2)':y='(ih-ih/zoom)*(1-${t})'`;
    case 'tilt_down':
      return `zoompan=z='1.25':x='iw/2-(iw/zoom/2)':y='(ih-ih/zoom)*${t}'`;
    case 'orbit':
      return `zoompan=z='1.2':x='(iw-iw/zoom)*(0.5+0.5*sin(2*PI*${t}))':y='(ih-ih/zoom)*(0.5+0.5*cos(2*PI*${t}))'`;
  }
}

export async function renderVideo(input: Buffer, opts: { motionPrompt: string; duration?: number; ratio?: string }, signal?: AbortSignal): Promise<Buffer> {
  const meta = await decodeMeta(input);
  const duration = Math.max(1, Math.min(15, opts.duration ?? 5));
  const frames = Math.round(duration * FPS);
  const { width, height } = canvasFor(ratioOf(opts.ratio, meta.width! / meta.height!), 1080);
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'dropshoot-video-'));
  try {
    // Oversample the still so zooming stays sharp.
    const still = path.join(dir, 'still.png');
    await open(input).resize(width * 2, height * 2, { fit: 'cover' }).removeAlpha().png({ compressionLevel: 1 }).toFile(still);
    const out = path.join(dir, 'out.mp4');
    const filter = `${zoompan(motionFrom(opts.motionPrompt), frames, width, height)}:d=${frames}:s=${width}x${height}:fps=${FPS},format=yuv420p`;
    const args = ['-hide_banner', '-loglevel', 'error', '-y', '-i', still, '-vf', filter, '-frames:v', String(frames), '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '22', '-movflags', '+faststart', '-pix_fmt', 'yuv420p', out];
    await new Promise<void>((resolve, reject) => {
      const child = spawn(ffmpeg.path, args, { stdio: ['ignore', 'ignore', 'pipe'], signal });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('error', (err) => reject(new ProviderError(`ffmpeg could not run: ${err.message}`)));
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new ProviderError(`ffmpeg failed (${code}): ${stderr.trim().slice(0, 300)}`))));
    });
    return await fs.promises.readFile(out);
  } finally {
    await fs.promises.rm(dir, { recursive: true, force: true });
  }
}
