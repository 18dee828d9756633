/** Reads a photo and makes it acceptable to the service (format, 8 MiB limit, sRGB). */
import { prepareUpload } from './watch/prepare-upload';

export async function prepareForUpload(source: Buffer): Promise<Buffer> {
  return (await prepareUpload(source)).data;
}
