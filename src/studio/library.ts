/**
 * The studio library: every downloaded result stored once by content hash, with a thumbnail
 * derived from the same decode and a provenance sidecar saying where it came from.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { judgeMedia, type MediaType } from '../client';
import { sweepStaleTemps, writeFileAtomic } from '../infra/atomic-write';
import { sharp } from '../infra/sharp';

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
   * `application/octet-stream`) is not consulted. Bytes that are no known image or video throw
   * UnrecognizedMediaError, and an image that does not decode throws, before anything is written.
   */
  async store(data: Buffer, _servedAs: string, provenance: Provenance): Promise<StoredResult> {
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
    // One sidecar per job result: the same bytes can come from two jobs with different stories.
    const sidecar = path.join(dir, `${sha256}.${provenance.jobId}.json`);
    await writeAtomic(this.absolute(sidecar), Buffer.from(JSON.stringify(provenance, null, 2)));
    return { sha256, file, thumb, mime: media.mime, kind: media.kind };
  }
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
