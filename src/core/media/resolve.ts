/**
 * Turns the strings in a request's `images` into stored images: the service's own file URLs and
 * catalog asset URLs resolve locally, catalog ids resolve for fashion_model and venue, and any
 * other http(s) URL is fetched once and staged in the blob store, kept only if the request is
 * accepted. Unresolvable, or over the pixel limit, means 400, before anything is charged.
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Catalog } from '../catalog';
import { BadRequest } from '../errors';
import type { InputImage } from '../providers/types';
import type { BlobStore } from './blob-store';
import { fetchRemote, RemoteFetchError } from './remote-fetch';
import { sniffImage, type ImageMime } from './sniff';
import { assertPixelLimit, imageDimensions } from './image-header';
import type { StagedImages } from './staged-images';
import { LIMITS } from '../../shared/api';
import { isUploadMime, mimeOfPath } from '../../shared/media-types';

/** What a job records: content hash or catalog file, never an absolute path. */
export type StoredImage =
  | { source: 'blob'; sha256: string; mime: ImageMime }
  | { source: 'catalog'; file: string; mime: ImageMime };

export type ResolverOptions = {
  blobs: BlobStore;
  catalog: Catalog;
  publicBaseUrl: string;
  allowPrivateUrls: boolean;
  fetchTimeoutMs: number;
};

/** Origin of file URLs when no HTTP server fronts the core (embedded mode). */
export const EMBEDDED_ORIGIN = 'http://embedded.dropshoot.invalid';

export function catalogImage(file: string): StoredImage {
  const mime = mimeOfPath(file);
  if (!mime || !isUploadMime(mime))
    throw new Error(`catalog asset ${file} is not a JPEG, PNG or WebP file`);
  return { source: 'catalog', file, mime };
}

const HEADER_BYTES = 64 * 1024;

/** The start of a blob, enough for its dimensions; the whole blob when a JPEG's frame header comes late. */
async function headerBytes(blobs: BlobStore, sha256: string, size: number): Promise<Buffer> {
  const start = await collect(
    await blobs.open(sha256, { start: 0, end: Math.max(0, Math.min(size, HEADER_BYTES) - 1) }),
  );
  return size <= HEADER_BYTES || imageDimensions(start) ? start : collect(await blobs.open(sha256));
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export class ImageResolver {
  private base: URL;
  private readonly catalogFiles: ReadonlySet<string>;
  constructor(private readonly opts: ResolverOptions) {
    this.base = new URL(opts.publicBaseUrl);
    const { fashionModels, venues, poses, readySets } = opts.catalog;
    this.catalogFiles = new Set([
      ...[...fashionModels, ...venues, ...poses].map((entry) => entry.file),
      ...readySets.map((set) => set.cover),
    ]);
  }

  /** Set once the HTTP server knows its address; URLs handed out from then on use it. */
  setPublicBaseUrl(url: string): void {
    this.base = new URL(url);
  }

  /** Our own URLs: the current base, and the embedded origin (data moved from embedded mode). */
  private isOwnOrigin(url: URL): boolean {
    return url.origin === this.base.origin || url.origin === EMBEDDED_ORIGIN;
  }

  /** The local file behind one of our own file or catalog URLs (any media type), if it is one. */
  async localFile(rawUrl: string): Promise<{ path: string; mime: string } | undefined> {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      return undefined;
    }
    if (!this.isOwnOrigin(url)) return undefined;
    const fileMatch = /^\/files\/([A-Za-z0-9_-]{1,64})$/.exec(url.pathname);
    if (fileMatch?.[1]) {
      const blob = await this.opts.blobs.get(fileMatch[1]);
      return blob && { path: this.opts.blobs.pathOf(blob.sha256), mime: blob.mime };
    }
    const file = this.catalogFile(url.pathname);
    return file === undefined ? undefined : this.toInput(catalogImage(file));
  }

  /** The catalog file a `/catalog/...` path names, if it is one we ship. */
  catalogFile(pathname: string): string | undefined {
    const file = pathname.replace(/^\/catalog\//, '');
    return this.catalogFiles.has(file) ? file : undefined;
  }

  /** The origin URLs are handed out under; changes once, when the server knows its address. */
  get publicOrigin(): string {
    return this.base.origin;
  }

  /** Public URL of a blob id or catalog file, as handed to callers. */
  fileUrl(blobId: string): string {
    // Blob ids are [A-Za-z0-9_-]: plain concatenation is safe, and polls call this per result.
    return `${this.base.origin}/files/${blobId}`;
  }
  catalogUrl(file: string): string {
    return new URL(`/catalog/${file}`, this.base).toString();
  }

  toInput(image: StoredImage): InputImage {
    const file =
      image.source === 'blob'
        ? this.opts.blobs.pathOf(image.sha256)
        : this.opts.catalog.filePath(image.file);
    return { path: file, mime: image.mime };
  }

  /**
   * Resolves one image reference. Fetched images are staged in `staging` (recorded only if the
   * request is accepted); with `staging` null they are checked and dropped (validation only).
   */
  async resolve(
    ref: string,
    field: string,
    toolId: string,
    staging: StagedImages | null,
  ): Promise<StoredImage> {
    const fail = (why: string) =>
      new BadRequest(`${toolId}: required image '${field}' could not be resolved: ${why}`);
    const catalogEntry =
      field === 'fashion_model'
        ? this.opts.catalog.fashionModels.find((m) => m.id === ref)
        : field === 'venue'
          ? this.opts.catalog.venues.find((v) => v.id === ref)
          : undefined;
    if (catalogEntry) return catalogImage(catalogEntry.file);

    let url: URL;
    try {
      url = new URL(ref);
    } catch {
      throw fail(
        field === 'fashion_model' || field === 'venue'
          ? `'${ref}' is neither a catalog id nor a URL`
          : `'${ref}' is not a URL`,
      );
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw fail('only http(s) URLs are accepted');

    if (this.isOwnOrigin(url))
      return await this.resolveOwn(url, `${toolId}: image '${field}'`, fail);

    let data: Buffer;
    try {
      data = await fetchRemote(url.toString(), {
        allowPrivate: this.opts.allowPrivateUrls,
        timeoutMs: this.opts.fetchTimeoutMs,
        maxBytes: LIMITS.remoteImageBytes,
      });
    } catch (err) {
      throw fail(err instanceof RemoteFetchError ? err.message : 'the URL could not be fetched');
    }
    const mime = sniffImage(data);
    if (!mime) throw fail('the URL does not serve a JPEG, PNG or WebP image');
    assertPixelLimit(data, `${toolId}: image '${field}'`);
    const sha256 = staging
      ? await staging.add(data, mime)
      : createHash('sha256').update(data).digest('hex');
    return { source: 'blob', sha256, mime };
  }

  private async resolveOwn(
    url: URL,
    what: string,
    fail: (why: string) => BadRequest,
  ): Promise<StoredImage> {
    const fileMatch = /^\/files\/([A-Za-z0-9_-]{1,64})$/.exec(url.pathname);
    if (fileMatch?.[1]) {
      const blob = await this.opts.blobs.get(fileMatch[1]);
      if (!blob || !blob.mime.startsWith('image/')) throw fail('no such uploaded image');
      // Files stored before the pixel limit existed, and results fed back in, are checked here too.
      assertPixelLimit(await headerBytes(this.opts.blobs, blob.sha256, blob.size), what);
      return { source: 'blob', sha256: blob.sha256, mime: blob.mime as ImageMime };
    }
    const file = this.catalogFile(url.pathname);
    if (file) return catalogImage(file);
    throw fail('no such file on this service');
  }
}
