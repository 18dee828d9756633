/** S3 stores with scratch copies, against s3rver on loopback, for the scratch-copy tests. */
import path from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { S3BlobContent, type ScratchOptions } from '../../../src/core/media/blob-content-s3';
import { parseBlobsUrl } from '../../../src/core/media/blobs-url';
import { makeTempDir, removeDir } from './api';
import { S3RVER_CREDENTIALS, startTestS3, type TestS3 } from './s3';

/**
 * For the calling describe block: s3rver holding `bucket` (started before its tests, stopped
 * after them), and stores on that bucket; every store still open is closed, and every scratch
 * folder made here removed, after each test.
 */
export function useScratchStores(bucket: string) {
  let s3: TestS3 | undefined;
  const open = new Set<S3BlobContent>();
  const dirs: string[] = [];

  beforeAll(async () => {
    s3 = await startTestS3([bucket]);
  }, 60_000);
  afterEach(async () => {
    await Promise.all([...open].map((c) => c.close()));
    open.clear();
    for (const d of dirs.splice(0)) removeDir(d);
  });
  afterAll(async () => {
    await s3?.close();
  });

  return {
    /** A scratch folder: `blob-scratch` in a fresh temporary data folder named `dropshoot-{tag}…`. */
    scratchDir(tag: string): string {
      const data = makeTempDir(tag);
      dirs.push(data);
      return path.join(data, 'blob-scratch');
    },
    store(scratch: ScratchOptions): S3BlobContent {
      if (!s3) throw new Error('s3rver is not started');
      const c = new S3BlobContent(parseBlobsUrl(s3.blobsUrl(bucket)), S3RVER_CREDENTIALS, scratch);
      open.add(c);
      return c;
    },
    /** Closes `c` now, for a test of what its close does; it is not closed again after the test. */
    async close(c: S3BlobContent): Promise<void> {
      await c.close();
      open.delete(c);
    },
  };
}
