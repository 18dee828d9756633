/**
 * The client as the studio and a remote caller see it: nothing here loads the core. The embedded
 * core's client is imported from `./in-process` by whoever chooses to run the core in-process.
 */
export {
  ApiError,
  isUnnamedJob,
  UNNAMED_JOB_PREFIX,
  type ServiceClient,
  type Download,
  type WriteOptions,
} from './service-client';
export { HttpClient, type HttpClientOptions, CURSOR_PARAMS, fingerprintKey } from './http';
export { fetchDownload } from './download';
export {
  sniffMedia,
  sniffUploadMime,
  judgeMedia,
  sniffConvertible,
  type ConvertibleMedia,
  UnrecognizedMediaError,
  KNOWN_MEDIA,
  type MediaType,
  type MediaMime,
  type UploadMime,
} from './media-type';
export {
  readAllReadySets,
  MAX_READY_SET_PAGES,
  type ReadySetsRead,
  type ReadySetsStop,
} from './ready-sets';
export { withCatalogMemo, withoutCatalogMemo, CATALOG_MEMO_MS } from './catalog-memo';
