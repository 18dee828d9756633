import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import fs from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { sharp } from '../../infra/sharp';
import { hasCompleteTrailer, sniffFormat, untakenImageReason, type SourceFormat } from './sniff';

/** A photo that has stopped changing and decodes completely. */
export type StableFile = {
  path: string;
  size: number;
  mtimeMs: number;
  sha256: string;
  format: SourceFormat;
};

export type StableCheck =
  | { kind: 'ready'; file: StableFile }
  /** Stable but not a complete image after every retry; a later change re-checks it. */
  | { kind: 'rejected'; reason: string; size: number; mtimeMs: number }
  /** Deleted or moved away while we waited. */
  | { kind: 'gone' };

export type StableFileOptions = {
  /** How long size and mtime must stay unchanged; default 2 s. */
  settleMs?: number;
  /** Extra settle-and-decode rounds for a file that is stable but incomplete; default 2. */
  decodeRetries?: number;
  signal?: AbortSignal;
  /** Wraps the expensive read+hash+decode step, for bounded concurrency (p-limit). */
  limit?: <T>(task: () => Promise<T>) => Promise<T>;
};

export const DEFAULT_SETTLE_MS = 2_000;

/** The prebuilt libvips decodes AVIF but not HEVC-coded HEIC (patent licensing); see heic.ts. */
export const CAN_DECODE_HEIC = sharp.format.heif.input.fileSuffix?.includes('.heic') ?? false;

/**
 * Waits until a file is complete: unchanged size and mtime for `settleMs`, then a full decode
 * (a truncated JPEG or PNG fails it). A stable-but-broken file is retried a few times, since a
 * slow SMB/FTP copy can pause longer than the settle interval.
 */
export async function checkStableFile(
  file: string,
  options: StableFileOptions = {},
): Promise<StableCheck> {
  const settleMs = options.settleMs ?? DEFAULT_SETTLE_MS;
  const retries = options.decodeRetries ?? 2;
  const limit = options.limit ?? (<T>(task: () => Promise<T>) => task());
  let failures = 0;
  for (;;) {
    // Back off on retries: a stalled copy gets a little longer each round.
    const stats = await waitUntilStable(file, settleMs * (failures + 1), options.signal);
    if (!stats) return { kind: 'gone' };
    const inspected = await limit(() => inspectImage(file, stats));
    switch (inspected.kind) {
      case 'gone':
      case 'ready':
        return inspected;
      case 'changed':
        continue; // written to while we read it: wait for it to settle again
      case 'invalid':
        if (!inspected.retry || ++failures > retries) {
          return {
            kind: 'rejected',
            reason: inspected.reason,
            size: stats.size,
            mtimeMs: stats.mtimeMs,
          };
        }
    }
  }
}

/** Resolves with the file's stats once they are unchanged for `settleMs`, or null if it is gone. */
export async function waitUntilStable(
  file: string,
  settleMs: number,
  signal?: AbortSignal,
): Promise<Stats | null> {
  let previous = await statOrNull(file);
  for (;;) {
    if (!previous) return null;
    await sleep(settleMs, undefined, { signal });
    const current = await statOrNull(file);
    if (current && sameStats(previous, current)) return current;
    previous = current;
  }
}

type Inspection =
  | { kind: 'ready'; file: StableFile }
  | { kind: 'changed' }
  | { kind: 'gone' }
  | { kind: 'invalid'; reason: string; retry: boolean };

/** Reads the file once: signature, completeness, full decode and SHA-256 from the same bytes. */
export async function inspectImage(file: string, stats: Stats): Promise<Inspection> {
  // By name first: a camera raw is TIFF inside, and its small embedded preview would be sent.
  const untaken = untakenImageReason(file);
  if (untaken) return { kind: 'invalid', reason: untaken, retry: false };
  let data: Buffer;
  try {
    data = await fs.readFile(file);
  } catch (error) {
    if (isNotFound(error)) return { kind: 'gone' };
    throw error;
  }
  const after = await statOrNull(file);
  if (!after) return { kind: 'gone' };
  if (data.length !== stats.size || !sameStats(stats, after)) return { kind: 'changed' };
  // Some copiers preallocate the full size and fill it in later: a blank header may still come.
  if (data.length === 0)
    return { kind: 'invalid', reason: 'The file is empty (0 bytes).', retry: true };
  const format = sniffFormat(data.subarray(0, 64));
  if (!format)
    return {
      kind: 'invalid',
      reason:
        'Not a photo: Dropshoot takes JPEG, PNG, WebP, HEIC, AVIF and TIFF images, and this file is none of them.',
      // A header still blank may be a preallocated copy yet to be filled; a written one that is
      // no image's (a text file named .jpg) will not become one: said at once, not after a minute.
      retry: data.subarray(0, 64).every((byte) => byte === 0),
    };
  if (!hasCompleteTrailer(data, format)) {
    return {
      kind: 'invalid',
      reason: `The ${format.toUpperCase()} file is incomplete (the copy may have been cut short).`,
      retry: true,
    };
  }
  if ((format === 'heic' || format === 'avif') && !isobmffComplete(data)) {
    return {
      kind: 'invalid',
      reason: `The ${format.toUpperCase()} file is incomplete (the copy may have been cut short).`,
      retry: true,
    };
  }
  // libvips cannot decode HEIC: its box structure (every box, mdat included, complete) was
  // checked above, and the picture is decoded apart (WebAssembly libheif) once, at upload.
  if (format !== 'heic' || CAN_DECODE_HEIC) {
    try {
      // A tiny resize decodes every scanline (JPEG shrink-on-load still reads all the data).
      await sharp(data, { failOn: 'error' }).resize(32, 32, { fit: 'inside' }).raw().toBuffer();
    } catch (error) {
      return {
        kind: 'invalid',
        reason: `The ${format.toUpperCase()} file is damaged or incomplete and cannot be read (${(error as Error).message.trim()}).`,
        retry: true,
      };
    }
  }
  const sha256 = createHash('sha256').update(data).digest('hex');
  return {
    kind: 'ready',
    file: { path: file, size: stats.size, mtimeMs: stats.mtimeMs, sha256, format },
  };
}

/** HEIF/AVIF: the top-level boxes must exactly cover the file, or the copy is incomplete. */
export function isobmffComplete(data: Uint8Array): boolean {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let offset = 0;
  while (offset + 8 <= data.length) {
    let size = view.getUint32(offset);
    if (size === 1) {
      if (offset + 16 > data.length) return false;
      size = Number(view.getBigUint64(offset + 8));
    } else if (size === 0) {
      return true; // "extends to the end of the file"
    }
    if (size < 8) return false;
    offset += size;
  }
  return offset === data.length;
}

const sameStats = (a: Stats, b: Stats): boolean => a.size === b.size && a.mtimeMs === b.mtimeMs;

async function statOrNull(file: string): Promise<Stats | null> {
  try {
    const stats = await fs.stat(file);
    return stats.isFile() ? stats : null;
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

export function isNotFound(error: unknown): boolean {
  const code = error instanceof Error && 'code' in error ? error.code : undefined;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
