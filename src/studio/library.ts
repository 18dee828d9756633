/**
 * The studio library: every downloaded result stored once by content hash, with a thumbnail
 * derived from the same decode and a provenance sidecar saying where it came from.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { judgeMedia, sniffConvertible, type ConvertibleMedia, type MediaType } from '../client';
import { sweepStaleTemps, writeFileAtomic } from '../infra/atomic-write';
import { sharp } from '../infra/sharp';
import { heicToPng } from './watch/heic';

export type Provenance = {
  sourceSha256: string;
  sourceName: string;
  recipe: unknown;
  jobId: string;
  shotId: string | null;
  service: string;
  diamonds: number;
  submittedAt: string | null;
  completedAt: string;
  downloadedAt: string;
};

export type StoredResult = {
  sha256: string;
  file: string;
  thumb: string | null;
  mime: MediaType['mime'];
  kind: MediaType['kind'];
};

/** Temp names of the library's writes before they shared the export's helper (`<file>.<pid>.<random>.tmp`). */
const OLD_TEMP_NAME = /\.\d+\.[0-9a-z]+\.tmp$/;

export class Library {
  /** Settles once the temps a crashed run left in the library are removed (started by the constructor). */
  readonly swept: Promise<void>;

  constructor(readonly root: string) {
    fs.mkdirSync(root, { recursive: true });
    this.swept = sweepLibrary(root).catch((err: unknown) => {
      // A leftover temp costs only disk space: say so and go on.
      console.warn(
        `library: could not remove leftover temp files: ${err instanceof Error ? err.message : String(err)}`,
      );
    });
  }

  absolute(relative: string): string {
    return path.join(this.root, relative);
  }

  /**
   * Stores the bytes (once per content), a thumbnail and the sidecar; returns relative paths and
   * the type. The type is judged from the bytes alone: `servedAs` (what the download claimed, often
   * `application/octet-stream`) is not consulted. A TIFF or HEIC is stored as a PNG (the bytes as
   * sent kept beside it, named in the sidecar). Bytes that are no known image or video throw
   * UnrecognizedMediaError, and an image that does not decode throws, before the result is written.
   */
  async store(served: Buffer, _servedAs: string, provenance: Provenance): Promise<StoredResult> {
    // A TIFF or HEIC result (paid for like any other) is kept as sent and stored as a lossless PNG
    // that browsers show and the export reads.
    const still = sniffConvertible(served);
    const data = still ? await this.stillToPng(served, still, provenance.jobId) : served;
    const media = judgeMedia(data, {
      what: `the result of job ${provenance.jobId || '(unknown)'}`,
      servedAs: null,
    });
    const sha256 = createHash('sha256').update(data).digest('hex');
    const dir = sha256.slice(0, 2);
    const file = path.join(dir, `${sha256}.${media.ext}`);
    let thumb: string | null = null;
    if (media.kind === 'image') {
      thumb = path.join(dir, `${sha256}.thumb.webp`);
      if (!fs.existsSync(this.absolute(thumb))) {
        let small: Buffer;
        try {
          small = await sharp(data)
            .rotate()
            .resize(384, 384, { fit: 'inside', withoutEnlargement: true })
            .webp({ quality: 80 })
            .toBuffer();
        } catch (err) {
          throw new Error(
            `the result of job ${provenance.jobId} is a ${media.ext.toUpperCase()} that cannot be decoded: ${err instanceof Error ? err.message : String(err)}`,
          );
        }
        await writeAtomic(this.absolute(thumb), small);
      }
    }
    await writeAtomic(this.absolute(file), data);
    let convertedFrom: { file: string; mime: string; sha256: string } | undefined;
    if (still) {
      const sentSha = createHash('sha256').update(served).digest('hex');
      const sent = path.join(sentSha.slice(0, 2), `${sentSha}.${still.ext}`);
      await writeAtomic(this.absolute(sent), served);
      convertedFrom = { file: sent, mime: still.mime, sha256: sentSha };
    }
    // One sidecar per job result: the same bytes can come from two jobs with different stories.
    const sidecar = path.join(dir, `${sha256}.${jobFilePart(provenance.jobId)}.json`);
    await writeAtomic(
      this.absolute(sidecar),
      Buffer.from(
        JSON.stringify(convertedFrom ? { ...provenance, convertedFrom } : provenance, null, 2),
      ),
    );
    return { sha256, file, thumb, mime: media.mime, kind: media.kind };
  }

  /**
   * A TIFF (libvips) or HEIC (libheif: the prebuilt libvips has no HEVC decoder) as a PNG, turned
   * upright. Bytes that do not decode are kept as sent, and the error says where.
   */
  private async stillToPng(data: Buffer, still: ConvertibleMedia, jobId: string): Promise<Buffer> {
    try {
      return still.mime === 'image/heic'
        ? await heicToPng(data)
        : await sharp(data).rotate().png().toBuffer();
    } catch (err) {
      const sha = createHash('sha256').update(data).digest('hex');
      const kept = this.absolute(path.join(sha.slice(0, 2), `${sha}.${still.ext}`));
      await writeAtomic(kept, data);
      throw new Error(
        `the result of job ${jobId} is a ${still.ext.toUpperCase()} that cannot be decoded (${err instanceof Error ? err.message : String(err)}); the file as sent is kept at ${kept}`,
      );
    }
  }
}

/** Job ids that can stand in a file name as they are (every file system, no path). */
const PLAIN_JOB_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The job id's part of a sidecar's name: the id itself when short and plain (as before), else a
 * readable start and a hash of the whole id. The spec puts no bound on an id's length or alphabet,
 * and a name over 255 bytes (or with a `/`) cannot be written.
 */
export function jobFilePart(jobId: string): string {
  if (PLAIN_JOB_ID.test(jobId)) return jobId;
  const readable = jobId.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 32);
  const hash = createHash('sha256').update(jobId).digest('hex').slice(0, 16);
  return `${readable}~${hash}`;
}

/** Content-addressed: a file under its final name is complete, and a rewrite puts the same bytes. */
async function writeAtomic(file: string, data: Buffer): Promise<void> {
  await writeFileAtomic(file, data, 'overwrite');
}

/** Every shard folder (`ab/`) of the library, swept of stale temps at start. */
async function sweepLibrary(root: string): Promise<void> {
  const entries = await fs.promises.readdir(root, { withFileTypes: true });
  for (const entry of entries) {
    if (entry.isDirectory()) await sweepStaleTemps(path.join(root, entry.name), OLD_TEMP_NAME);
  }
}
