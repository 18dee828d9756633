/** What goes to and comes back from a remote model, the same for every adapter. */
import { sniffImage } from '../../media/sniff';
import { ProviderError, type InputImage, type ProviderJob, type ProviderOutput } from '../types';

/** The images a model gets, in order: the product photos, then the fashion model, venue and pose references. */
export function inputImages(job: ProviderJob): { product: InputImage[]; references: InputImage[] } {
  const product = Object.entries(job.images)
    .filter(([key]) => !['fashion_model', 'venue'].includes(key))
    .flatMap(([, images]) => images);
  const references = [job.fashionModel?.image, job.venue?.image, job.pose?.image].filter(
    (i): i is InputImage => i !== undefined,
  );
  return { product, references };
}

/** Turns provider bytes into outputs the core stores: the signature decides, not the provider's word. */
export function toOutput(
  data: Buffer,
  provider: string,
  costUsd: number | undefined,
): ProviderOutput {
  if (data.length >= 12 && data.subarray(4, 8).toString('latin1') === 'ftyp')
    return { data, mime: 'video/mp4', ...(costUsd !== undefined ? { costUsd } : {}) };
  const mime = sniffImage(data);
  if (!mime)
    throw new ProviderError(`${provider} returned a file that is not a JPEG, PNG, WebP or MP4`);
  return { data, mime, ...(costUsd !== undefined ? { costUsd } : {}) };
}
