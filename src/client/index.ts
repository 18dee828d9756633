export { ApiError, type ServiceClient, type Download, type WriteOptions } from './service-client';
export { InProcessClient, LOCAL_ACCOUNT_EMAIL } from './in-process';
export { HttpClient, type HttpClientOptions, CURSOR_PARAMS, fingerprintKey } from './http';
export { sniffMedia, sniffUploadMime, judgeMedia, UnrecognizedMediaError, KNOWN_MEDIA, type MediaType, type MediaMime, type UploadMime } from './media-type';
export { readAllReadySets, MAX_READY_SET_PAGES, type ReadySetsRead, type ReadySetsStop } from './ready-sets';
export { withCatalogMemo, withoutCatalogMemo, CATALOG_MEMO_MS } from './catalog-memo';
