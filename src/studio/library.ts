/**
 * The studio library: every downloaded result stored once by content hash, with a thumbnail
 * derived from the same decode and a provenance sidecar saying where it came from.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';

sharp.cache({ files: 0 });

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

const EXT: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'video/mp4': 'mp4' };

export class Library {
  constructor(readonly root: string) {
    fs.mkdirSync(root, { recursive: true });
  }

  absolute(relative: string): string {
    return path.join(this.root, relative);
  }

  /** Stores the bytes (once per content), a thumbnail and the sidecar; returns relative paths. */
  async store(data: Buffer, mime: string, provenance: Provenance): Promise<{ sha256: string; file: string; thumb: string | null }> {
    const sha256 = createHash('sha256').update(data).digest('hex');
    const dir = sha256.slice(0, 2);
    const file = path.join(dir, `${sha256}.${EXT[mime] ?? 'bin'}`);
    await writeAtomic(this.absolute(file), data);
    let thumb: string | null = null;
    if (mime.startsWith('image/')) {
      thumb = path.join(dir, `${sha256}.thumb.webp`);
      if (!fs.existsSync(this.absolute(thumb))) {
        const small = await sharp(data).rotate().resize(384, 384, { fit: 'inside', withoutEnlargement: true }).webp({ quality: 80 }).toBuffer();
        await writeAtomic(this.absolute(thumb), small);
      }
    }
    // One sidecar per job result: the same bytes can come from two jobs with different stories.
    const sidecar = path.join(dir, `${sha256}.${provenance.jobId}.json`);
    await writeAtomic(this.absolute(sidecar), Buffer.from(JSON.stringify(provenance, null, 2)));
    return { sha256, file, thumb };
  }
}

export async function writeAtomic(file: string, data: Buffer): Promise<void> {
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  const handle = await fs.promises.open(tmp, 'w');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fs.promises.rename(tmp, file);
}
