/**
 * The spec as a TypeScript interface. The studio talks to the service only through this type:
 * InProcessClient (embedded core, the default) and HttpClient (a remote /v1 service) implement it.
 */
import type {
  AccountBody,
  CatalogJobBody,
  CatalogJobRequest,
  FashionModelEntry,
  GenerationBody,
  GenerationRequest,
  PoseEntry,
  ReadyTemplateSetEntry,
  TemplateSetCreate,
  TemplateSetEntry,
  ToolEntry,
  UploadBody,
  VenueEntry,
} from '../shared/api';
import type { ConvertibleMedia, MediaType } from './media-type';

type Strip<T> = Omit<T, 'success'>;
export type WriteOptions = { idempotencyKey?: string };
/**
 * The id Dropshoot gives a job whose create was answered done with its results and no job id (a
 * synchronous service): the service knows it by no id, so it is never polled; its results are
 * the create's answer (review rev27 D1).
 */
export const UNNAMED_JOB_PREFIX = 'answered-without-id:';
export const isUnnamedJob = (id: string | null | undefined): boolean =>
  typeof id === 'string' && id.startsWith(UNNAMED_JOB_PREFIX);
/**
 * Whether the service acknowledged the Idempotency-Key (ours echoes it). Reported only: an echo
 * does not show the service keeps one answer per key, so nothing is learnt from it.
 */
export type Acknowledged = { idempotencyHonoured: boolean };
/**
 * A downloaded file, typed by its bytes (never by the Content-Type it was served with):
 * `servedAs` keeps that header for diagnostics only.
 */
export type Download = { data: Buffer; servedAs: string | null } & (MediaType | ConvertibleMedia);

export type ServiceClient = {
  /** Where results come from, for provenance ("embedded" or the remote base URL). */
  readonly origin: string;
  /**
   * A one-way fingerprint of the credentials (never the key itself): caches and request counts
   * are kept per origin and key with it.
   */
  readonly keyFingerprint: string;
  listModels(): Promise<ToolEntry[]>;
  listFashionModels(query?: {
    gender?: 'male' | 'female';
    limit?: number;
  }): Promise<FashionModelEntry[]>;
  listVenues(query?: { limit?: number }): Promise<VenueEntry[]>;
  listPoses(query?: {
    type?: 'ring' | 'necklace' | 'earring' | 'bracelet';
    limit?: number;
  }): Promise<PoseEntry[]>;
  upload(data: Buffer, options?: WriteOptions): Promise<Strip<UploadBody> & Acknowledged>;
  createGeneration(
    request: GenerationRequest,
    options?: WriteOptions,
  ): Promise<{ id: string; status: 'processing' } & Acknowledged>;
  getGeneration(id: string): Promise<Strip<GenerationBody>>;
  createTemplateSet(request: TemplateSetCreate): Promise<{ id: string }>;
  listTemplateSets(): Promise<TemplateSetEntry[]>;
  deleteTemplateSet(id: string): Promise<void>;
  getAccount(): Promise<Strip<AccountBody>>;
  listReadySets(query?: { category?: string; limit?: number; cursor?: string }): Promise<{
    templateSets: ReadyTemplateSetEntry[];
    nextCursor: string | null;
  }>;
  getReadySet(id: string): Promise<ReadyTemplateSetEntry>;
  createCatalogJob(
    request: CatalogJobRequest,
    options?: WriteOptions,
  ): Promise<Strip<CatalogJobBody> & Acknowledged>;
  /**
   * Fetches a result or catalog file URL handed out by this service (a relative one is read
   * against the service); throws UnrecognizedMediaError when the bytes are no image or video we
   * know (TIFF and HEIC stills pass, for the studio's library to convert).
   */
  download(url: string): Promise<Download>;
  close(): Promise<void>;
  /**
   * Optional: a hook run before every request actually sent (a call may send more than one),
   * for request budgets; throwing from it keeps the request unsent. Returns its removal.
   */
  guardRequests?(guard: () => void): () => void;
};

/** What a client knows about a failure beyond its status and words. */
export type ApiErrorDetails = {
  /**
   * How long the service asked to wait (`Retry-After`, in seconds or as an HTTP date), in ms
   * from when the answer arrived; null when it said nothing.
   */
  retryAfterMs?: number | null;
  /**
   * The request certainly never left: the connection was refused, the name did not resolve, or
   * TLS failed before anything was written. A write that was not sent can simply be sent again;
   * one whose answer was lost (timeout, reset after the request went out) may have been done.
   */
  notSent?: boolean;
  cause?: unknown;
};

/**
 * Every failure a client reports. `status` is the HTTP status (0 when no answer came);
 * `retryable` tells the scheduler whether waiting and trying again can help, `retryAfterMs` how
 * long the service asked it to wait, `notSent` whether the request certainly never went out.
 */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly retryAfterMs: number | null;
  readonly notSent: boolean;
  constructor(
    readonly status: number,
    message: string,
    details: ApiErrorDetails = {},
  ) {
    super(message, details.cause !== undefined ? { cause: details.cause } : undefined);
    this.retryAfterMs = details.retryAfterMs ?? null;
    this.notSent = details.notSent ?? false;
  }
  get retryable(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }
}
