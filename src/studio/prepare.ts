/** Reads a photo and makes it acceptable to the service (format, 8 MB limit, sRGB). */
import { crc32 } from 'node:zlib';
import { prepareUpload, UPLOAD_LIMIT_BYTES } from './watch/prepare-upload';

export async function prepareForUpload(source: Buffer, maxBytes?: number): Promise<Buffer> {
  return (await prepareUpload(source, maxBytes === undefined ? {} : { maxBytes })).data;
}

/**
 * The same picture in other bytes: `note` is written into a comment (JPEG COM segment, PNG tEXt
 * chunk, WebP unknown chunk), which every decoder skips. A service that stores uploads by content
 * (S3 keys by hash) answers the same bytes with the same URL, even one that expired long ago (an
 * earlier run's, another workstation's); other bytes get a new object and a URL that works.
 * Bytes of another format, or that would pass the upload limit, are returned as they are.
 */
export function withUploadNote(data: Buffer, note: string): Buffer {
  const text = Buffer.from(`dropshoot upload ${note}`.slice(0, 200), 'latin1');
  let out: Buffer = data;
  if (data[0] === 0xff && data[1] === 0xd8) {
    // COM right after SOI: its length counts itself (2 bytes) and the text.
    const segment = Buffer.alloc(4 + text.length);
    segment.writeUInt16BE(0xfffe, 0);
    segment.writeUInt16BE(2 + text.length, 2);
    text.copy(segment, 4);
    out = Buffer.concat([data.subarray(0, 2), segment, data.subarray(2)]);
  } else if (data.subarray(0, 8).equals(PNG_SIGNATURE) && data.length > 33) {
    // tEXt right after IHDR (signature 8 + IHDR chunk 25 bytes).
    const body = Buffer.concat([Buffer.from('tEXt'), Buffer.from('Comment\0'), text]);
    const chunk = Buffer.alloc(body.length + 8);
    chunk.writeUInt32BE(body.length - 4, 0);
    body.copy(chunk, 4);
    chunk.writeUInt32BE(crc32(body), body.length + 4);
    out = Buffer.concat([data.subarray(0, 33), chunk, data.subarray(33)]);
  } else if (
    data.toString('latin1', 0, 4) === 'RIFF' &&
    data.toString('latin1', 8, 12) === 'WEBP'
  ) {
    // An unknown chunk at the end (padded to even), counted in the RIFF size.
    const padded = text.length + (text.length % 2);
    const chunk = Buffer.alloc(8 + padded);
    chunk.write('DSUP', 0, 'latin1');
    chunk.writeUInt32LE(text.length, 4);
    text.copy(chunk, 8);
    out = Buffer.concat([data, chunk]);
    out.writeUInt32LE(out.length - 8, 4);
  }
  return out.length <= UPLOAD_LIMIT_BYTES ? out : data;
}

const PNG_SIGNATURE = Buffer.from('\x89PNG\r\n\x1a\n', 'latin1');
