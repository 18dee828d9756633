/**
 * Chooses the blob store from configuration: `--blobs URL` / DROPSHOOT_BLOBS_URL
 * (`s3://bucket[/prefix]?endpoint=…&region=…&forcePathStyle=true`), or files under the data
 * folder when absent. Errors never echo the URL: a pasted one may carry credentials.
 */
import path from 'node:path';
import { z } from 'zod';
import { LocalBlobContent, type BlobContentStore } from './blob-content';
import { S3BlobContent, s3CredentialsFromEnv } from './blob-content-s3';

const S3LocationSchema = z.object({
  // S3's bucket naming rules (3-63 characters, lower case, digits, dots, hyphens).
  bucket: z
    .string()
    .regex(
      /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
      'the bucket name must be 3-63 lower-case letters, digits, dots or hyphens',
    ),
  /** Key prefix ('' or ending in '/'). */
  prefix: z.string(),
  endpoint: z.url({ protocol: /^https?$/, error: 'endpoint must be an http(s) URL' }).optional(),
  region: z.string().min(1).default('us-east-1'),
  forcePathStyle: z.boolean(),
});
export type S3Location = z.infer<typeof S3LocationSchema>;

export class BlobsUrlError extends Error {}

export function parseBlobsUrl(raw: string): S3Location {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BlobsUrlError(
      'the blobs URL is not a URL; expected s3://bucket?endpoint=…&region=…&forcePathStyle=true',
    );
  }
  if (url.protocol !== 's3:')
    throw new BlobsUrlError(`the blobs URL must start with s3:// (got ${url.protocol}//)`);
  if (url.username || url.password) {
    throw new BlobsUrlError(
      'the blobs URL must not hold credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY instead',
    );
  }
  const known = new Set(['endpoint', 'region', 'forcePathStyle']);
  for (const name of url.searchParams.keys()) {
    if (!known.has(name))
      throw new BlobsUrlError(
        `unknown blobs URL parameter '${name.slice(0, 40)}' (known: endpoint, region, forcePathStyle)`,
      );
  }
  const forcePathStyle = url.searchParams.get('forcePathStyle');
  if (forcePathStyle !== null && forcePathStyle !== 'true' && forcePathStyle !== 'false') {
    throw new BlobsUrlError('forcePathStyle must be true or false');
  }
  const prefix = decodeURIComponent(url.pathname).replace(/^\/+/, '').replace(/\/*$/, '');
  const parsed = S3LocationSchema.safeParse({
    bucket: url.hostname,
    prefix: prefix ? `${prefix}/` : '',
    endpoint: url.searchParams.get('endpoint') ?? undefined,
    region: url.searchParams.get('region') ?? undefined,
    forcePathStyle: forcePathStyle === 'true',
  });
  if (!parsed.success)
    throw new BlobsUrlError(
      `the blobs URL is invalid: ${parsed.error.issues.map((i) => i.message).join('; ')}`,
    );
  return parsed.data;
}

/**
 * The configured store. `dataDir` holds the files in embedded mode and only scratch copies (for
 * the providers, which read files) when the bytes live in a bucket.
 */
export function openBlobContent(opts: {
  blobsUrl?: string | undefined;
  dataDir: string;
  /** Bucket only: most bytes of scratch copies this process keeps (default 2 GiB). */
  scratchLimitBytes?: number | undefined;
  /** Bucket only: where scratch upkeep failures are reported (the process's log; default stderr). */
  log?: ((message: string) => void) | undefined;
  env?: NodeJS.ProcessEnv;
}): BlobContentStore {
  if (!opts.blobsUrl) return new LocalBlobContent(path.join(opts.dataDir, 'blobs'));
  const location = parseBlobsUrl(opts.blobsUrl);
  return new S3BlobContent(location, s3CredentialsFromEnv(opts.env ?? process.env), {
    dir: path.join(opts.dataDir, 'blob-scratch'),
    ...(opts.scratchLimitBytes !== undefined ? { limitBytes: opts.scratchLimitBytes } : {}),
    ...(opts.log ? { log: opts.log } : {}),
  });
}
