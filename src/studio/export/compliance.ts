import { sharp } from '../../infra/sharp';
import {
  StoredComplianceReportSchema,
  type ComplianceCheck,
  type ComplianceReport,
  type ComplianceVerdict,
} from '../../shared/studio';
import { isSrgbProfile, iccDescription } from './icc';
import { effectiveFormat, PRESETS, type ExportSettings } from './presets';
import { backgroundPurity, MAX_IMPURE_SHARE, WHITE_FLOOR } from './background-purity';
import { MAX_SMEAR_PX, SIDES, smearBands } from './edge-band';
import { estimateBackground, fillRatio, productBox, type RawImage } from './product-bbox';

/** The report's schemas live in the studio contract (src/shared/studio.ts), the one source. */
export type { ComplianceCheck, ComplianceReport };

/** A pixel counts as pure white when every channel is within this of 255. */
export const WHITE_TOLERANCE = 255 - WHITE_FLOOR;
/** Enlarging more than this softens detail visibly: a warning. */
export const UPSCALE_WARN = 1.5;
/** Enlarging more than this is not ready to upload. */
export const UPSCALE_FAIL = 3;

export type ComplianceInput = {
  /** The exported file or its bytes, read back as a marketplace would read it. */
  image: string | Buffer;
  settings: Pick<ExportSettings, 'preset' | 'format'>;
  /** Source size, for the `original` preset (which keeps it). */
  sourceSize?: { width: number; height: number };
  /** How much the export enlarged the photo, when known (from the render). */
  upscale?: number;
  /** Whether the source was an offline preview, when known (from the render). */
  preview?: boolean;
  notes?: string[];
};

type CheckInput = Omit<ComplianceCheck, 'severity'> & { severity?: ComplianceCheck['severity'] };

/** Checks an exported image against its preset's requirements, from the written bytes. */
export async function checkCompliance(input: ComplianceInput): Promise<ComplianceReport> {
  const preset = PRESETS[input.settings.preset];
  const meta = await sharp(input.image).metadata();
  const checks: ComplianceCheck[] = [];
  const add = (check: CheckInput) => checks.push({ ...check, severity: check.severity ?? 'error' });
  const { format: expectedFormat, note } = effectiveFormat(input.settings);
  const notes = [...(input.notes ?? [])];
  if (note && !notes.includes(note)) notes.push(note);

  add({
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
      add({
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
      add({
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
      add({
        id: 'size',
        ok: size === expected,
        value: size,
        expected,
        message: size === expected ? `Exactly ${expected}` : `${size} instead of ${expected}`,
      });
      break;
    }
  }

  add({
    id: 'colour-space',
    ok: meta.space === 'srgb',
    value: String(meta.space),
    expected: 'srgb',
    message: meta.space === 'srgb' ? 'sRGB' : `Colour space is ${meta.space}, not sRGB`,
  });
  const description = meta.icc ? iccDescription(meta.icc) : null;
  const iccOk = meta.hasProfile && meta.icc !== undefined && isSrgbProfile(meta.icc);
  add({
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

  const marketplace = preset.id !== 'original';
  if (input.preview !== undefined) {
    add({
      id: 'preview',
      ok: !input.preview,
      severity: marketplace ? 'error' : 'warning',
      value: input.preview ? 'offline preview' : 'finished photo',
      expected: 'a finished photo',
      message: input.preview
        ? `An offline PREVIEW (watermarked, made without an AI provider): not for ${marketplace ? preset.label : 'publication'}`
        : 'Not a preview',
    });
  }
  if (input.upscale !== undefined) {
    const factor = input.upscale;
    add({
      id: 'upscale',
      ok: factor <= UPSCALE_WARN,
      severity: factor > UPSCALE_FAIL ? 'error' : 'warning',
      value: `${factor.toFixed(2)}×`,
      expected: `≤ ${UPSCALE_WARN}× enlargement`,
      message:
        factor <= UPSCALE_WARN
          ? factor > 1
            ? `Enlarged ${factor.toFixed(2)}×`
            : 'Not enlarged'
          : `Enlarged ${factor.toFixed(2)}× to fit the preset: detail will look soft; use a larger photo`,
    });
  }

  const needsPixels =
    preset.whiteBackground || preset.minFill !== null || framing.kind === 'canvas';
  const raw = needsPixels ? await readRgb(input.image) : null;
  if (raw && preset.whiteBackground) {
    const purity = backgroundPurity(raw);
    const ok = purity.share <= MAX_IMPURE_SHARE;
    const where = purity.largest
      ? `; the largest patch is ${purity.largest.width}×${purity.largest.height} px at (${purity.largest.left}, ${purity.largest.top})`
      : '';
    add({
      id: 'background',
      ok,
      value: `${(purity.share * 100).toFixed(3)}% impure`,
      expected: `≤ ${MAX_IMPURE_SHARE * 100}% of the background (every pixel outside the product) off pure white (255 ± ${WHITE_TOLERANCE})`,
      message: ok
        ? `Pure white background (${purity.background} background pixels checked${purity.neutralProduct ? '; the product is white or grey, so a shadow on it cannot be told apart' : ''})`
        : `${purity.impure} background pixels (${(purity.share * 100).toFixed(2)}%) are not pure white: shadow, backdrop or specks left around the product${where}`,
    });
  }
  if (raw && preset.minFill !== null) {
    // Measured against the image's own background, so an off-white sweep is not "product".
    const fill = fillRatio(productBox(raw, estimateBackground(raw), 12), raw.width, raw.height);
    const ok = fill >= preset.minFill;
    add({
      id: 'fill',
      ok,
      value: round(fill),
      expected: `≥ ${preset.minFill}`,
      message: ok
        ? `Product fills ${(fill * 100).toFixed(1)}% of the frame`
        : `Product fills only ${(fill * 100).toFixed(1)}% of the frame (needs ${preset.minFill * 100}%)`,
    });
  }
  if (raw && framing.kind === 'canvas') {
    const bands = smearBands(raw);
    const smeared = SIDES.filter((side) => bands[side] >= MAX_SMEAR_PX);
    add({
      id: 'padding',
      ok: smeared.length === 0,
      value: SIDES.map((side) => `${side} ${bands[side]} px`).join(', '),
      expected: `no smeared band (edge pixels repeated ${MAX_SMEAR_PX} px or more)`,
      message:
        smeared.length === 0
          ? 'No smeared padding at the edges'
          : `Smeared padding band: ${smeared.map((side) => `${bands[side]} px at the ${side}`).join(', ')} (edge pixels repeated outwards)`,
    });
  }

  const ok = checks.every((c) => c.ok || c.severity === 'warning');
  const verdict: ComplianceVerdict = !ok ? 'fail' : checks.some((c) => !c.ok) ? 'warn' : 'pass';
  return { preset: preset.id, ok, verdict, checks, notes };
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

/** One exported file's verdict for `run`'s summary: the checks that failed or warned, in words. */
export type FileVerdict = {
  path: string;
  verdict: ComplianceVerdict | 'unchecked';
  checks: string[];
};

/** Reads a stored report (JSON, possibly written before verdicts existed) into a file's verdict. */
export function fileVerdict(path: string, stored: string | null): FileVerdict {
  if (stored === null) return { path, verdict: 'unchecked', checks: [] };
  const parsed = StoredComplianceReportSchema.safeParse(JSON.parse(stored));
  if (!parsed.success)
    return { path, verdict: 'unchecked', checks: ['the stored compliance report is unreadable'] };
  const { ok, checks, verdict } = parsed.data;
  const flagged = checks.filter((c) => !c.ok);
  return {
    path,
    verdict: verdict ?? (!ok ? 'fail' : flagged.length > 0 ? 'warn' : 'pass'),
    checks: flagged.map(
      (c) => `${c.severity === 'warning' ? 'warning' : 'error'}: ${c.id}: ${c.message}`,
    ),
  };
}
