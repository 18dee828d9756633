/**
 * The provider seam: the core hands a fully resolved job to an adapter and gets images (or a
 * video) back. The built-in local provider renders offline previews; HTTP adapters for real AI
 * backends implement the same type.
 */
import type { JewelryType, ToolId } from '../../shared/api';
import type { UploadMime } from '../../shared/media-types';
import type { StoredUnit } from '../jobs/job-input';

/** An input image already stored on local disk (blob store or shipped catalog asset). */
export type InputImage = { path: string; mime: UploadMime };

/** Catalog entries resolved to their assets, so adapters never read the catalog themselves. */
export type ResolvedFashionModel = { id: string | null; image: InputImage };
export type ResolvedVenue = { id: string | null; image: InputImage };
export type ResolvedPose = { id: string; type: 'default' | JewelryType; image: InputImage };

export type ProviderJob = {
  jobId: string;
  toolId: ToolId;
  /** Every image field of the request, resolved; array fields keep their order. */
  images: Record<string, InputImage[]>;
  fashionModel: ResolvedFashionModel | null;
  venue: ResolvedVenue | null;
  pose: ResolvedPose | null;
  /**
   * The request's settings as the job stored them (`ratio`: `W:H` or 'auto'; `targetRatio` for
   * photo_reframe), plus `modelId` and `variant` (the shot's index in a pack; steers variation).
   */
  params: StoredUnit['params'];
  /** Number of outputs expected (packs give several). */
  outputs: number;
};

export type ProviderOutput = {
  data: Buffer;
  mime: UploadMime | 'video/mp4';
  /** What the provider charged for this output, when known; recorded next to the diamonds. */
  costUsd?: number;
  /** Which backend and model made it (`fal:fal-ai/...`), when not the adapter itself. */
  source?: string;
};

export type ProviderRunContext = {
  signal: AbortSignal;
};

export type ProviderAdapter = {
  readonly name: string;
  /**
   * Called after the charge and before the 202: a throw here is the spec's "failure after the
   * deduction" (the job fails, the charge is refunded, the caller gets 500). Optional.
   */
  start?(job: ProviderJob): Promise<void>;
  /** Produces the outputs. Throwing fails the job (refunded) with the error's message. */
  run(job: ProviderJob, ctx: ProviderRunContext): Promise<ProviderOutput[]>;
};

/** A failure the provider explains in words fit for `errorMessage`. */
export class ProviderError extends Error {
  override name = 'ProviderError';
}
