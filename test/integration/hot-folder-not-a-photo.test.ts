/**
 * A file that is plainly not a photo (text under a .jpg name) is refused on the first look, while
 * one whose header is still blank (a copier that preallocates the file) is looked at again: the
 * operator learnt of notes.jpg only after the stalled-copy wait, about a minute (review uirev B7).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { inspectImage } from '../../src/studio/watch/stable-file';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-not-a-photo-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function inspect(name: string, bytes: Buffer) {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return inspectImage(file, fs.statSync(file));
}

it('refuses a text file named .jpg at once, with the reason', async () => {
  const notes = await inspect('notes.jpg', Buffer.from('Shoot notes: reshoot the blue dress.\n'));
  expect(notes).toMatchObject({ kind: 'invalid', retry: false });
  expect(notes.kind === 'invalid' && notes.reason).toMatch(/^Not a photo/);
});

it('looks again at a file whose header is still blank', async () => {
  const preallocated = await inspect('arriving.jpg', Buffer.alloc(4096));
  expect(preallocated).toMatchObject({ kind: 'invalid', retry: true });
});
