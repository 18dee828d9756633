/** Reads a photo and makes it acceptable to the service (format, 8 MiB limit, sRGB). */
import { prepareUpload } from './watch/prepare-upload';

export async function prepareForUpload(file: string): Promise<Buffer> {
  return (await prepareUpload(file)).data;
}
