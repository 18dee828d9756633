/**
 * photo_edit offline: a visible edit steered by words in the instruction (warmer, cooler,
 * brighter, darker, black and white, vivid, muted, sharper, "background <colour>"); anything
 * else gets a general enhancement.
 */
import sharp from 'sharp';
import { decodeMeta, open } from './image-io';
import { computeMatte, matteAt } from './remove-background';

const COLOURS: Record<string, string> = {
  white: '#ffffff', black: '#111111', grey: '#9a9a9a', gray: '#9a9a9a', blue: '#3f6fb5', red: '#c0392b',
  green: '#4e8f4a', pink: '#f2b8c6', beige: '#e8dcc4', yellow: '#f1d36b', cream: '#f5efe0', navy: '#1f2d4d',
};

export async function editPhoto(input: Buffer, instruction: string): Promise<Buffer> {
  await decodeMeta(input);
  const text = instruction.toLowerCase();
  let img = open(input).removeAlpha();
  let matched = false;
  const bg = /background\s+(?:to\s+|in\s+)?(?:pure\s+)?([a-z]+)/.exec(text) ?? /([a-z]+)\s+background/.exec(text);
  const colour = bg?.[1] ? COLOURS[bg[1]] : undefined;
  if (colour) {
    const { data, info } = await img.raw().toBuffer({ resolveWithObject: true });
    const alpha = await matteAt(await computeMatte(input), info.width, info.height);
    const subject = await sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } })
      .joinChannel(alpha, { raw: { width: info.width, height: info.height, channels: 1 } })
      .png()
      .toBuffer();
    img = sharp({ create: { width: info.width, height: info.height, channels: 3, background: colour } }).composite([{ input: subject }]);
    img = sharp(await img.png().toBuffer());
    matched = true;
  }
  if (/black\s*(and|&)\s*white|monochrome|gr[ae]yscale|b\s*&\s*w/.test(text)) {
    img = img.grayscale();
    matched = true;
  }
  if (/warm/.test(text)) {
    img = img.tint({ r: 255, g: 232, b: 205 });
    matched = true;
  }
  if (/cool|cold/.test(text)) {
    img = img.tint({ r: 215, g: 232, b: 255 });
    matched = true;
  }
  if (/bright|lighter|lift/.test(text)) {
    img = img.modulate({ brightness: 1.18 });
    matched = true;
  }
  if (/dark|moody/.test(text)) {
    img = img.modulate({ brightness: 0.8 });
    matched = true;
  }
  if (/vivid|saturat|vibrant|pop/.test(text)) {
    img = img.modulate({ saturation: 1.45 });
    matched = true;
  }
  if (/muted|desaturat|faded|matte look/.test(text)) {
    img = img.modulate({ saturation: 0.6 });
    matched = true;
  }
  if (/sharp|crisp|detail/.test(text)) {
    img = img.sharpen({ sigma: 1.4 });
    matched = true;
  }
  if (!matched) img = img.normalise({ lower: 1, upper: 99 }).modulate({ saturation: 1.08 }).sharpen({ sigma: 0.8 });
  return img.jpeg({ quality: 92 }).toBuffer();
}
