/**
 * Real HEIC files for tests, made here: no HEIC encoder ships with sharp, so the picture is coded
 * as HEVC by the bundled ffmpeg (libx265) into an MP4, and its decoder configuration (`hvcC`)
 * and coded sample are moved into a HEIF still-image container (ISO/IEC 23008-12), as a camera
 * writes it: ftyp, meta (hdlr, pitm, iinf, iloc, iprp with hvcC, ispe and an optional colr),
 * mdat.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import ffmpeg from '@ffmpeg-installer/ffmpeg';
import sharp from 'sharp';

const run = promisify(execFile);

type Box = { type: string; start: number; payload: number; end: number };

function boxes(data: Buffer, from: number, to: number): Box[] {
  const found: Box[] = [];
  for (let at = from; at + 8 <= to;) {
    let size = data.readUInt32BE(at);
    let header = 8;
    if (size === 1) {
      size = Number(data.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) size = to - at;
    found.push({
      type: data.toString('latin1', at + 4, at + 8),
      start: at,
      payload: at + header,
      end: at + size,
    });
    at += size;
  }
  return found;
}

function child(data: Buffer, parent: Box, type: string, skip = 0): Box {
  const box = boxes(data, parent.payload + skip, parent.end).find((b) => b.type === type);
  if (!box) throw new Error(`no ${type} in ${parent.type}`);
  return box;
}

const box = (type: string, ...parts: Buffer[]) => {
  const body = Buffer.concat(parts);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
};
const fullBox = (type: string, version: number, flags: number, ...parts: Buffer[]) => {
  const vf = Buffer.alloc(4);
  vf.writeUInt32BE(((version & 0xff) << 24) | (flags & 0xffffff));
  return box(type, vf, ...parts);
};
const u16 = (n: number) => Buffer.from([n >> 8, n & 0xff]);
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

/** The HEVC decoder configuration and the one coded picture of a single-frame MP4. */
function hevcFromMp4(mp4: Buffer): { hvcC: Buffer; sample: Buffer } {
  const top = boxes(mp4, 0, mp4.length);
  const moov = top.find((b) => b.type === 'moov');
  if (!moov) throw new Error('no moov');
  const stbl = child(mp4, child(mp4, child(mp4, child(mp4, moov, 'trak'), 'mdia'), 'minf'), 'stbl');
  const stsd = child(mp4, stbl, 'stsd');
  // stsd: version/flags + entry count, then the hvc1 sample entry, whose boxes follow 8 + 70 bytes
  // of sample-entry and visual-sample-entry fields.
  const hvc1 = child(mp4, stsd, 'hvc1', 8);
  const hvcC = child(mp4, { ...hvc1, payload: hvc1.payload + 78 }, 'hvcC');
  const stsz = child(mp4, stbl, 'stsz');
  const fixedSize = mp4.readUInt32BE(stsz.payload + 4);
  const size = fixedSize || mp4.readUInt32BE(stsz.payload + 12);
  const stco = child(mp4, stbl, 'stco');
  const offset = mp4.readUInt32BE(stco.payload + 8);
  return { hvcC: mp4.subarray(hvcC.start, hvcC.end), sample: mp4.subarray(offset, offset + size) };
}

/** nclx colour primaries (1 sRGB/BT.709, 12 Display P3) and, optionally, an ICC profile. */
export type HeicColour = { primaries: number; icc?: Buffer };

/** Wraps one HEVC picture as the primary item of a HEIC file. */
function heifContainer(
  hvcC: Buffer,
  sample: Buffer,
  width: number,
  height: number,
  colour: HeicColour,
): Buffer {
  const ftyp = box(
    'ftyp',
    Buffer.from('heic', 'latin1'),
    u32(0),
    Buffer.from('mif1heic', 'latin1'),
  );
  const hdlr = fullBox(
    'hdlr',
    0,
    0,
    u32(0),
    Buffer.from('pict', 'latin1'),
    Buffer.alloc(12),
    Buffer.from([0]),
  );
  const pitm = fullBox('pitm', 0, 0, u16(1));
  const infe = fullBox(
    'infe',
    2,
    0,
    u16(1),
    u16(0),
    Buffer.from('hvc1', 'latin1'),
    Buffer.from([0]),
  );
  const iinf = fullBox('iinf', 0, 0, u16(1), infe);
  const ispe = fullBox('ispe', 0, 0, u32(width), u32(height));
  // nclx: primaries, transfer (the sRGB curve), matrix (BT.601, as ffmpeg converts), full range.
  const properties = [
    hvcC,
    ispe,
    box(
      'colr',
      Buffer.from('nclx', 'latin1'),
      u16(colour.primaries),
      u16(13),
      u16(6),
      Buffer.from([0x80]),
    ),
  ];
  if (colour.icc) properties.push(box('colr', Buffer.from('prof', 'latin1'), colour.icc));
  const ipco = box('ipco', ...properties);
  const associations = properties.map((_, i) => (i === 1 ? 0 : 0x80) | (i + 1)); // all but ispe essential
  const ipma = fullBox(
    'ipma',
    0,
    0,
    u32(1),
    u16(1),
    Buffer.from([associations.length, ...associations]),
  );
  const iprp = box('iprp', ipco, ipma);
  // iloc needs the absolute offset of the picture, which follows everything before mdat's payload.
  const ilocFor = (offset: number) =>
    fullBox(
      'iloc',
      0,
      0,
      Buffer.from([0x44, 0x00]),
      u16(1),
      u16(1),
      u16(0),
      u16(1),
      u32(offset),
      u32(sample.length),
    );
  const metaFor = (offset: number) =>
    fullBox('meta', 0, 0, hdlr, pitm, iinf, ilocFor(offset), iprp);
  const offset = ftyp.length + metaFor(0).length + 8;
  return Buffer.concat([ftyp, metaFor(offset), box('mdat', sample)]);
}

/** Encodes `image` (any format sharp reads) as a HEIC file; width and height must be even. */
export async function makeHeic(
  image: Buffer,
  colour: HeicColour = { primaries: 1 },
): Promise<Buffer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-heic-'));
  try {
    const { width, height } = await sharp(image).metadata();
    const input = path.join(dir, 'in.png');
    const output = path.join(dir, 'out.mp4');
    await sharp(image).png().toFile(input);
    await run(ffmpeg.path, [
      '-v',
      'error',
      '-y',
      '-i',
      input,
      '-frames:v',
      '1',
      '-vf',
      'scale=out_range=full:out_color_matrix=bt601',
      '-c:v',
      'libx265',
      '-x265-params',
      'log-level=error:keyint=1',
      '-pix_fmt',
      'yuv420p',
      '-color_range',
      'pc',
      '-tag:v',
      'hvc1',
      output,
    ]);
    const { hvcC, sample } = hevcFromMp4(fs.readFileSync(output));
    return heifContainer(hvcC, sample, width, height, colour);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
