/**
 * What the library stores of a paid result whose job id or format the spec leaves open: a job id of
 * any length or alphabet (the sidecar's name stays writable), and TIFF or HEIC stills (stored as a
 * PNG the studio shows and exports, the bytes as sent kept beside it). Real files, real decoders.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, expect, it } from 'vitest';
import { Library, type Provenance } from '../../src/studio/library';
import { makeHeic } from './helpers/heic';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const provenance = (jobId: string): Provenance => ({
  sourceSha256: 'a'.repeat(64),
  sourceName: 'look-042.jpg',
  recipe: {},
  jobId,
  shotId: null,
  service: 'test',
  diamonds: 2,
  submittedAt: null,
  completedAt: '2026-11-26T00:00:00.000Z',
  downloadedAt: '2026-11-26T00:00:01.000Z',
});

function library(): Library {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-library-formats-'));
  dirs.push(root);
  return new Library(root);
}

/** A 64x48 picture with a left/right split, so orientation and pixels can be checked. */
const picture = () =>
  sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 40, b: 30 } } })
    .composite([
      {
        input: {
          create: { width: 32, height: 48, channels: 3, background: { r: 20, g: 60, b: 220 } },
        },
        left: 32,
        top: 0,
      },
    ])
    .png()
    .toBuffer();

const sidecarsOf = (lib: Library, sha256: string) =>
  fs
    .readdirSync(lib.absolute(sha256.slice(0, 2)))
    .filter((f) => f.startsWith(sha256) && f.endsWith('.json'));

it('stores a result whose job id is longer than a file name may be, or holds a slash', async () => {
  const lib = library();
  const png = await picture();
  const longId = 'f'.repeat(320);
  const slashId = 'am9iOjE/Nzk5ZmFi==';
  const a = await lib.store(png, 'image/png', provenance(longId));
  const b = await lib.store(png, 'image/png', provenance(slashId));
  const plain = await lib.store(png, 'image/png', provenance('gen_1'));
  expect(a.sha256).toBe(b.sha256);
  const sidecars = sidecarsOf(lib, a.sha256);
  // One sidecar per job, each naming its own job; names within the usual 255-byte limit.
  expect(sidecars).toHaveLength(3);
  expect(sidecars).toContain(`${plain.sha256}.gen_1.json`);
  for (const name of sidecars) expect(Buffer.byteLength(name)).toBeLessThanOrEqual(255);
  const ids = sidecars.map(
    (name) =>
      (
        JSON.parse(
          fs.readFileSync(lib.absolute(path.join(a.sha256.slice(0, 2), name)), 'utf8'),
        ) as {
          jobId: string;
        }
      ).jobId,
  );
  expect(ids.sort()).toEqual([longId, slashId, 'gen_1'].sort());
});

it('stores a TIFF result as a PNG of the same pixels and keeps the TIFF as sent', async () => {
  const lib = library();
  const tiff = await sharp(await picture())
    .tiff()
    .toBuffer();
  const stored = await lib.store(tiff, 'application/octet-stream', provenance('gen_tiff'));
  expect(stored.mime).toBe('image/png');
  expect(stored.thumb).not.toBeNull();
  const png = fs.readFileSync(lib.absolute(stored.file));
  const [got, want] = await Promise.all(
    [png, tiff].map((b) => sharp(b).removeAlpha().raw().toBuffer()),
  );
  expect(got!.equals(want!)).toBe(true);
  const [sidecar] = sidecarsOf(lib, stored.sha256);
  const note = JSON.parse(
    fs.readFileSync(lib.absolute(path.join(stored.sha256.slice(0, 2), sidecar!)), 'utf8'),
  ) as { convertedFrom: { file: string; mime: string } };
  expect(note.convertedFrom.mime).toBe('image/tiff');
  expect(fs.readFileSync(lib.absolute(note.convertedFrom.file)).equals(tiff)).toBe(true);
});

it('stores a HEIC result (which the prebuilt libvips cannot decode) as a PNG, and keeps the HEIC', async () => {
  const lib = library();
  const heic = await makeHeic(await picture());
  await expect(sharp(heic).raw().toBuffer()).rejects.toThrow();
  const stored = await lib.store(heic, 'image/heic', provenance('gen_heic'));
  expect(stored.mime).toBe('image/png');
  const png = fs.readFileSync(lib.absolute(stored.file));
  const { width, height } = await sharp(png).metadata();
  expect([width, height]).toEqual([64, 48]);
  // Lossy HEVC: the two halves keep their colours (red left, blue right).
  const { data } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const px = (x: number, y: number) => [...data.subarray((y * 64 + x) * 3, (y * 64 + x) * 3 + 3)];
  expect(px(8, 24)[0]).toBeGreaterThan(150);
  expect(px(56, 24)[2]).toBeGreaterThan(150);
  const [sidecar] = sidecarsOf(lib, stored.sha256);
  const note = JSON.parse(
    fs.readFileSync(lib.absolute(path.join(stored.sha256.slice(0, 2), sidecar!)), 'utf8'),
  ) as { convertedFrom: { file: string; mime: string } };
  expect(note.convertedFrom.mime).toBe('image/heic');
  expect(fs.readFileSync(lib.absolute(note.convertedFrom.file)).equals(heic)).toBe(true);
});
