/**
 * Where results are handed out and whether a download is served: plain URLs by default; with
 * options, signed URLs that expire (S3-style 403 XML after), URLs under /v1/files/ that need the
 * caller's key, paths relative to the service, and a CDN whose first downloads answer 503.
 */
import crypto from 'node:crypto';
import type { ReferenceServiceOptions } from './options';

export type FileRefusal = { status: number; contentType: string; text: string };
type Urls = { base: string; results: string };

/** The file id in any path this service serves files under, or null. */
export function fileIdOfPath(pathname: string): string | null {
  const m = /^\/(?:files|results|blob|v1\/files)\/([A-Za-z0-9-]+)(?:\.[a-z0-9]+)?$/.exec(pathname);
  return m ? m[1]! : null;
}

export const s3Error = (code: string, message: string): FileRefusal => ({
  status: 403,
  contentType: 'application/xml',
  text: `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`,
});

export class ResultLinks {
  private readonly secret: Buffer;
  private refusedFirst = 0;

  constructor(
    private readonly current: () => { options: ReferenceServiceOptions; urls: Urls },
    seed: number,
  ) {
    // From the seed, so signatures survive a restart of the process.
    this.secret = crypto.createHash('sha256').update(`reference-service-${seed}`).digest();
  }

  url(fileId: string, ext: string): string {
    const { options: o, urls } = this.current();
    const path = o.resultUrlsNeedKey
      ? `/v1/files/${fileId}.${ext}`
      : o.resultsOnOtherHost && !o.relativeResultUrls
        ? `/blob/${fileId}`
        : `/results/${fileId}.${ext}`;
    const origin = o.relativeResultUrls
      ? ''
      : o.resultsOnOtherHost && !o.resultUrlsNeedKey
        ? urls.results
        : urls.base;
    if (!o.resultUrlTtlMs) return `${origin}${path}`;
    const exp = Date.now() + o.resultUrlTtlMs;
    return `${origin}${path}?exp=${exp}&sig=${this.sign(fileId, exp)}`;
  }

  /** Before serving a result download: why it is refused, or null to serve it. */
  refusal(fileId: string, query: URLSearchParams): FileRefusal | null {
    const { options: o } = this.current();
    if (this.refusedFirst < (o.resultFailFirst ?? 0)) {
      this.refusedFirst++;
      return { status: 503, contentType: 'text/plain', text: 'Service Unavailable' };
    }
    if (!o.resultUrlTtlMs) return null;
    const exp = Number(query.get('exp'));
    const sig = query.get('sig') ?? '';
    if (!Number.isFinite(exp) || !sig)
      return s3Error('AccessDenied', 'Query-string authentication requires exp and sig');
    if (sig !== this.sign(fileId, exp))
      return s3Error('SignatureDoesNotMatch', 'The request signature does not match');
    if (exp < Date.now()) return s3Error('AccessDenied', 'Request has expired');
    return null;
  }

  private sign(fileId: string, exp: number): string {
    return crypto.createHmac('sha256', this.secret).update(`${fileId}.${exp}`).digest('hex');
  }
}
