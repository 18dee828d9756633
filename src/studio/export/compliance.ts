import sharp from 'sharp';
import { z } from 'zod';
import { isSrgbProfile, iccDescription } from './icc';
import { effectiveFormat, PresetIdSchema, PRESETS, type ExportSettings } from './presets';
import {
  estimateBackground,
  fillRatio,
  forEachBorderPixel,
  productBox,
  type RawImage,
} from './product-bbox';

export const CHECK_IDS = [
  'format',
  'size',
  'colour-space',
  'icc-profile',
  'background',
  'fill',
] as const;

export const ComplianceCheckSchema = z.object({
  id: z.enum(CHECK_IDS),
  ok: z.boolean(),
  value: z.string(),
  expected: z.string(),
  message: z.string(),
});
export type ComplianceCheck = z.infer<typeof ComplianceCheckSchema>;

/** Assignable to the studio contract's `ComplianceReport`; adds the preset and notes. */
export const ComplianceReportSchema = z.object({
  preset: PresetIdSchema,
  ok: z.boolean(),
  checks: z.array(ComplianceCheckSchema),
  /** Things the user should know that are not failures (forced JPEG, upscaling...). */
  notes: z.array(z.string()),
});
export type ComplianceReport = z.infer<typeof ComplianceReportSchema>;

/** A border pixel counts as pure white when every channel is within this of 255. */
export const WHITE_TOLERANCE = 2;
/** Share of border pixels that must be pure white for a white-background preset. */
export const MIN_WHITE_BORDER = 0.99;

export type ComplianceInput = {
  /** The exported file or its bytes, read back as a marketplace would read it. */
  image: string | Buffer;
  settings: Pick<ExportSettings, 'preset' | 'format'>;
  /** Source size, for the `original` preset (which keeps it). */
  sourceSize?: { width: number; height: number };
  notes?: string[];
};

/** Checks an exported image against its preset's requirements, from the written bytes. */
export async function checkCompliance(input: ComplianceInput): Promise<ComplianceReport> {
  const preset = PRESETS[input.settings.preset];
  const meta = await sharp(input.image).metadata();
  const checks: ComplianceCheck[] = [];
  const { format: expectedFormat, note } = effectiveFormat(input.settings);
  const notes = [...(input.notes ?? [])];
  if (note && !notes.includes(note)) notes.push(note);

  checks.push({
    id: 'format',
    ok: meta.format === expectedFormat,
    value: String(meta.format),
    expected: expectedFormat,
    message:
      meta.format === expectedFormat
        ? `${expectedFormat.toUpperCase()}${note ? ' (forced by the preset)' : ''}`
        : `Written as ${meta.format}, expected ${expectedFormat}`,
  });

  const { width, height } = meta;
  const framing = preset.framing;
  const size = `${width}x${height}`;
  switch (framing.kind) {
    case 'keep': {
      const expected = input.sourceSize
        ? `${input.sourceSize.width}x${input.sourceSize.height}`
        : size;
      checks.push({
        id: 'size',
        ok: expected === size,
        value: size,
        expected,
        message: expected === size ? 'Original size kept' : `Size changed from ${expected}`,
      });
      break;
    }
    case 'fill': {
      const ok = Math.max(width, height) === framing.longestSide;
      checks.push({
        id: 'size',
        ok,
        value: size,
        expected: `longest side ${framing.longestSide} px`,
        message: ok
          ? `Longest side is ${framing.longestSide} px`
          : `Longest side is ${Math.max(width, height)} px, not ${framing.longestSide}`,
      });
      break;
    }
    case 'canvas': {
      const expected = `${framing.width}x${framing.height}`;
      checks.push({
        id: 'size',
        ok: size === expected,
        value: size,
        expected,
        message: size === expected ? `Exactly ${expected}` : `${size} instead of ${expected}`,
      });
      break;
    }
  }

  checks.push({
    id: 'colour-space',
    ok: meta.space === 'srgb',
    value: String(meta.space),
    expected: 'srgb',
    message: meta.space === 'srgb' ? 'sRGB' : `Colour space is ${meta.space}, not sRGB`,
  });
  const description = meta.icc ? iccDescription(meta.icc) : null;
  const iccOk = meta.hasProfile && meta.icc !== undefined && isSrgbProfile(meta.icc);
  checks.push({
    id: 'icc-profile',
    ok: iccOk,
    value: description ?? (meta.hasProfile ? 'unnamed profile' : 'none'),
    expected: 'embedded sRGB profile',
    message: iccOk
      ? `Embedded profile "${description}"`
      : meta.hasProfile
        ? `Embedded profile "${description}" is not sRGB`
        : 'No embedded ICC profile',
  });

  if (preset.whiteBackground || preset.minFill !== null) {
    const raw = await readRgb(input.image);
    if (preset.whiteBackground) {
      const purity = borderWhiteShare(raw);
      const ok = purity >= MIN_WHITE_BORDER;
      checks.push({
        id: 'background',
        ok,
        value: round(purity),
        expected: `≥ ${MIN_WHITE_BORDER} of border pixels pure white (255 ± ${WHITE_TOLERANCE})`,
        message: ok
          ? 'Pure white background'
          : `Only ${(purity * 100).toFixed(1)}% of the border is pure white`,
      });
    }
    if (preset.minFill !== null) {
      // Measured against the image's own background, so an off-white sweep is not "product".
      const fill = fillRatio(productBox(raw, estimateBackground(raw), 12), raw.width, raw.height);
      const ok = fill >= preset.minFill;
      checks.push({
        id: 'fill',
        ok,
        value: round(fill),
        expected: `≥ ${preset.minFill}`,
        message: ok
          ? `Product fills ${(fill * 100).toFixed(1)}% of the frame`
          : `Product fills only ${(fill * 100).toFixed(1)}% of the frame (needs ${preset.minFill * 100}%)`,
      });
    }
  }

  return { preset: preset.id, ok: checks.every((c) => c.ok), checks, notes };
}

/** Share of the outermost ring of pixels that is 255,255,255 within WHITE_TOLERANCE. */
export function borderWhiteShare(img: RawImage): number {
  let white = 0;
  let total = 0;
  forEachBorderPixel(img, (i) => {
    total++;
    const d = img.data;
    if (
      (d[i] ?? 0) >= 255 - WHITE_TOLERANCE &&
      (d[i + 1] ?? 0) >= 255 - WHITE_TOLERANCE &&
      (d[i + 2] ?? 0) >= 255 - WHITE_TOLERANCE
    ) {
      white++;
    }
  });
  return total === 0 ? 0 : white / total;
}

async function readRgb(image: string | Buffer): Promise<RawImage> {
  const { data, info } = await sharp(image)
    .flatten({ background: '#ffffff' })
    .toColourspace('srgb')
    .raw({ depth: 'uchar' })
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: 3 };
}

const round = (n: number): string => String(Math.round(n * 10_000) / 10_000);
