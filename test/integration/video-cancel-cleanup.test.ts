/**
 * A video job cancelled while ffmpeg encodes leaves nothing in the temp folder: the job settles
 * only once the encoder has ended, so its working folder is removed after ffmpeg's last write
 * (before, a cancel could leave a `dropshoot-video-*` folder holding a half-made MP4).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sharp } from '../../src/infra/sharp';
import { renderVideo } from '../../src/core/providers/local/video';

const savedTmp = process.env.TMPDIR;
let tmp = '';

afterEach(() => {
  process.env.TMPDIR = savedTmp;
  if (savedTmp === undefined) delete process.env.TMPDIR;
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function photo(): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="1200"><rect width="100%" height="100%" fill="#f2f2f0"/><rect x="270" y="300" width="360" height="600" rx="40" fill="#7a2f3b"/></svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 90 }).toBuffer();
}

const leftovers = () => fs.readdirSync(tmp).filter((name) => name.startsWith('dropshoot-video-'));

/** Whether an ffmpeg runs on a working folder of ours (Linux: its command line in /proc). */
function encoderRunning(folders: string[]): boolean {
  return fs.readdirSync('/proc').some((pid) => {
    if (!/^\d+$/.test(pid)) return false;
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1');
      return folders.some((folder) => cmdline.includes(folder));
    } catch {
      return false; // ended meanwhile
    }
  });
}

/** Resolves with the working folders once ffmpeg runs on one. */
async function encoderStarted(): Promise<string[]> {
  for (;;) {
    const folders = leftovers().map((dir) => path.join(tmp, dir));
    if (encoderRunning(folders)) return folders;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

describe('ai_videos cancelled mid-encode', () => {
  it.skipIf(process.platform !== 'linux')(
    'rejects as cancelled and leaves no working folder behind, at any moment of the encode',
    async () => {
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-video-cancel-test-'));
      process.env.TMPDIR = tmp; // os.tmpdir() reads it at each call
      const input = await photo();
      // Killed, ffmpeg still finishes its output for a moment: a folder removed meanwhile could
      // get the MP4 written back into it (ENOTEMPTY, folder left). Cancel at several moments.
      for (const afterStartMs of [0, 10, 30, 80, 200]) {
        const cancel = new AbortController();
        const rendering = renderVideo(
          input,
          { motionPrompt: 'slow zoom in', duration: 15, ratio: '9:16' },
          cancel.signal,
        );
        const folders = await encoderStarted();
        await new Promise((resolve) => setTimeout(resolve, afterStartMs));
        cancel.abort();
        const outcome = await rendering.then(
          () => 'finished',
          (err: Error) => err.message,
        );
        const when = `cancelled ${afterStartMs} ms after the encoder started`;
        expect(outcome, when).toMatch(/cancel/i);
        // Settled only once the encoder has ended: it writes into the folder until then.
        expect(encoderRunning(folders), when).toBe(false);
        // Anything ffmpeg would still write lands within moments of its end.
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(leftovers(), when).toEqual([]);
      }
    },
    120_000,
  );
});
