/**
 * HEIC (HEVC-coded HEIF, what iPhones write) decoded with libheif compiled to WebAssembly
 * (libheif-js, LGPL-3.0, loaded as its own module so it can be replaced): the prebuilt libvips
 * reads AVIF but has no HEVC decoder. The picture comes back as a lossless PNG that carries the
 * photo's colour space (its ICC profile, or Display P3 when the nclx box says so), so the usual
 * upload path converts it to sRGB like any other photo.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import zlib from 'node:zlib';
import { sharp } from '../../infra/sharp';

/** What the worker sends back: the primary picture as RGBA, and how to read its colours. */
type Decoded =
  | {
      ok: true;
      width: number;
      height: number;
      hasAlpha: boolean;
      rgba: Uint8Array;
      icc: Uint8Array | null;
      primaries: number | null;
    }
  | { ok: false; message: string };

/**
 * The decode runs in a worker thread (a 12 MP photo takes about 1.7 s of WebAssembly), so the
 * engine, its HTTP server and the desktop window never wait on it. Plain CommonJS, so it runs the
 * same under the CLI, the tests and the packaged app.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const lib = require(workerData.libheif);
// C functions returning struct heif_error take a pointer to it first (wasm32 sret).
function colour(handle) {
  const error = lib._malloc(16);
  try {
    const size = lib._heif_image_handle_get_raw_color_profile_size(handle);
    if (size > 0) {
      const data = lib._malloc(size);
      try {
        lib._heif_image_handle_get_raw_color_profile(error, handle, data);
        const ok = new DataView(lib.HEAPU8.buffer).getInt32(error, true) === 0;
        return { icc: ok ? lib.HEAPU8.slice(data, data + size) : null, primaries: null };
      } finally { lib._free(data); }
    }
    const out = lib._malloc(4);
    try {
      lib._heif_image_handle_get_nclx_color_profile(error, handle, out);
      const view = new DataView(lib.HEAPU8.buffer);
      const nclx = view.getUint32(out, true);
      if (view.getInt32(error, true) !== 0 || nclx === 0) return { icc: null, primaries: null };
      // struct heif_color_profile_nclx: uint8 version, then enum color_primaries at offset 4.
      const primaries = view.getInt32(nclx + 4, true);
      lib._heif_nclx_color_profile_free(nclx);
      return { icc: null, primaries };
    } finally { lib._free(out); }
  } finally { lib._free(error); }
}
parentPort.on('message', async (data) => {
  await lib.ready;
  const decoder = new lib.HeifDecoder();
  const images = decoder.decode(data);
  try {
    const image = images.find((i) => i.is_primary()) || images[0];
    if (!image) return parentPort.postMessage({ ok: false, message: 'the HEIC file holds no picture (damaged or incomplete)' });
    const width = image.get_width();
    const height = image.get_height();
    const shown = await new Promise((resolve) => image.display({ data: new Uint8ClampedArray(width * height * 4), width, height }, resolve));
    if (!shown) return parentPort.postMessage({ ok: false, message: 'the HEIC picture could not be decoded (damaged or incomplete)' });
    const rgba = new Uint8Array(shown.data.buffer, shown.data.byteOffset, shown.data.byteLength);
    const found = colour(image.handle.$$.ptr);
    parentPort.postMessage({ ok: true, width, height, hasAlpha: image.has_alpha_channel(), rgba, ...found }, [rgba.buffer]);
  } catch (error) {
    parentPort.postMessage({ ok: false, message: String(error && error.message || error) });
  } finally {
    for (const image of images) image.free();
    if (decoder.decoder) decoder.decoder.delete();
  }
});
`;

/**
 * The bundle carries its .wasm inline. In the packaged app it is unpacked from the asar archive
 * (electron-builder.yml), so the worker reads it from plain disk.
 */
const LIBHEIF = ((resolved: string) => {
  const unpacked = resolved.replace(/app\.asar([\\/])/, 'app.asar.unpacked$1');
  return unpacked !== resolved && fs.existsSync(unpacked) ? unpacked : resolved;
})(createRequire(import.meta.url).resolve('libheif-js/wasm-bundle'));
let worker: Worker | null = null;
let queue: Promise<unknown> = Promise.resolve();

/** One decode at a time through one worker, started on first use and let go when idle. */
function decodeInWorker(data: Buffer): Promise<Decoded> {
  const task = queue.then(
    () =>
      new Promise<Decoded>((resolve, reject) => {
        worker ??= new Worker(WORKER_SOURCE, { eval: true, workerData: { libheif: LIBHEIF } });
        const current = worker;
        current.ref();
        const done = () => {
          current.off('message', onMessage);
          current.off('error', onError);
          current.off('exit', onExit);
          current.unref(); // an idle decoder must not keep the process alive
        };
        const onMessage = (message: Decoded) => {
          done();
          resolve(message);
        };
        const onError = (error: Error) => {
          done();
          worker = null; // a crashed worker is replaced on the next photo
          reject(error);
        };
        // Out of memory, say: the worker is gone without a word.
        const onExit = (code: number) =>
          onError(new Error(`the HEIC decoder stopped (exit code ${code})`));
        current.on('message', onMessage);
        current.on('error', onError);
        current.on('exit', onExit);
        current.postMessage(data);
      }),
  );
  queue = task.catch(() => undefined);
  return task;
}

/** nclx colour primaries of ITU-T H.273 that mean Display P3 (SMPTE EG 432-1). */
const NCLX_P3 = 12;
let p3Profile: Promise<Buffer> | null = null;
const displayP3Icc = () =>
  (p3Profile ??= sharp({ create: { width: 1, height: 1, channels: 3, background: '#000' } })
    .withIccProfile('p3')
    .png()
    .toBuffer()
    .then(async (png) => (await sharp(png).metadata()).icc!));

/** Inserts an iCCP chunk after IHDR (the PNG way to say which colour space the pixels are in). */
function withIccChunk(png: Buffer, icc: Buffer): Buffer {
  const body = Buffer.concat([
    Buffer.from('icc\0', 'latin1'),
    Buffer.from([0]),
    zlib.deflateSync(icc),
  ]);
  const type = Buffer.from('iCCP', 'latin1');
  const chunk = Buffer.alloc(12 + body.length);
  chunk.writeUInt32BE(body.length, 0);
  type.copy(chunk, 4);
  body.copy(chunk, 8);
  chunk.writeUInt32BE(zlib.crc32(Buffer.concat([type, body])), 8 + body.length);
  const afterIhdr = 8 + 8 + png.readUInt32BE(8) + 4;
  return Buffer.concat([png.subarray(0, afterIhdr), chunk, png.subarray(afterIhdr)]);
}

export class HeicDecodeError extends Error {}

/** Decodes the primary picture of a HEIC file (rotation and mirroring applied) to a PNG. */
export async function heicToPng(data: Buffer): Promise<Buffer> {
  const decoded = await decodeInWorker(data);
  if (!decoded.ok) throw new HeicDecodeError(decoded.message);
  const { width, height } = decoded;
  let pipeline = sharp(
    Buffer.from(decoded.rgba.buffer, decoded.rgba.byteOffset, decoded.rgba.byteLength),
    { raw: { width, height, channels: 4 } },
  );
  if (!decoded.hasAlpha) pipeline = pipeline.removeAlpha();
  const png = await pipeline.png({ compressionLevel: 1 }).toBuffer();
  if (decoded.icc) return withIccChunk(png, Buffer.from(decoded.icc));
  return decoded.primaries === NCLX_P3 ? withIccChunk(png, await displayP3Icc()) : png;
}
