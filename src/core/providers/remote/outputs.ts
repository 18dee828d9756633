/** Turns provider bytes into outputs the core stores: the signature decides, not the provider's word. */
import { sniffImage } from '../../media/sniff';
import { ProviderError, type ProviderOutput } from '../types';

export function toOutput(data: Buffer, provider: string, costUsd: number | undefined): ProviderOutput {
  if (data.length >= 12 && data.subarray(4, 8).toString('latin1') === 'ftyp') return { data, mime: 'video/mp4', ...(costUsd !== undefined ? { costUsd } : {}) };
  const mime = sniffImage(data);
  if (!mime) throw new ProviderError(`${provider} returned a file that is not a JPEG, PNG, WebP or MP4`);
  return { data, mime, ...(costUsd !== undefined ? { costUsd } : {}) };
}
