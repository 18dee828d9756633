/**
 * Which file a URL the service handed out names, whatever signs it. The same upload or result
 * file handed again under another signature or expiry is one file; two files told apart only by
 * their query (`/files/get?id=up_1`, `?id=up_2`: spec 4.5 shows no URL form) are two. Origin and
 * path alone merged them: paid photos held as sharing an upload URL, and a ready shoot's shots
 * listed one at a time kept as one (review rev33 D1, D3).
 */

/** Query parameters by which object stores and CDNs sign or date a link (compared lower-case). */
const SIGNING_PREFIXES = ['x-amz-', 'x-goog-', 'x-oss-', 'x-cos-', 'x-tos-'];
const SIGNING_PARAMS = new Set([
  // S3 v2, CloudFront, Google and Alibaba legacy forms
  'signature',
  'expires',
  'awsaccesskeyid',
  'googleaccessid',
  'ossaccesskeyid',
  'policy',
  'key-pair-id',
  'x-id',
  // Azure SAS
  'sv',
  'ss',
  'srt',
  'sp',
  'se',
  'st',
  'spr',
  'sip',
  'si',
  'sr',
  'sig',
  'skoid',
  'sktid',
  'skt',
  'ske',
  'sks',
  'skv',
  'sdd',
  'saoid',
  'suoid',
  'scid',
  // CDN tokens and common hand-rolled signers
  'token',
  '__token__',
  'hdnts',
  'verify',
  'exp',
  'expiry',
  'expiration',
  'hmac',
]);

const isSigning = (name: string): boolean => {
  const lower = name.toLowerCase();
  return SIGNING_PARAMS.has(lower) || SIGNING_PREFIXES.some((p) => lower.startsWith(p));
};

/** The file a URL names: origin, path and the query's own parameters (sorted), signing left out. */
export function fileAddressOf(url: string): string {
  try {
    const parsed = new URL(url, 'http://relative.invalid');
    const own = [...parsed.searchParams]
      .filter(([name]) => !isSigning(name))
      .sort(([a, x], [b, y]) => (a === b ? x.localeCompare(y) : a.localeCompare(b)));
    const query = new URLSearchParams(own).toString();
    return `${parsed.origin}${parsed.pathname}${query ? `?${query}` : ''}`;
  } catch {
    return url;
  }
}

/** The part of `fileAddressOf` every URL of that file starts with: its origin and path. */
export function filePathOf(url: string): string {
  try {
    const parsed = new URL(url, 'http://relative.invalid');
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return url;
  }
}
