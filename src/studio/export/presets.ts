import { z } from 'zod';
import {
  EXPORT_FORMATS,
  EXPORT_PRESET_LABELS,
  EXPORT_PRESETS,
  ExportSettingsSchema,
  type ExportSettings,
} from '../../shared/studio';
import { extensionFor as mediaExtensionFor, mimeOfFormat } from '../../shared/media-types';
import { DEFAULT_NAMING_PATTERN, NamingPatternSchema } from './naming';

export const PresetIdSchema = z.enum(EXPORT_PRESETS);
export type PresetId = z.infer<typeof PresetIdSchema>;

export const OutputFormatSchema = z.enum(EXPORT_FORMATS);
export type OutputFormat = z.infer<typeof OutputFormatSchema>;

/**
 * The contract's export settings as the export checks them before writing: the naming pattern
 * fully validated (tokens, illegal characters, traversal) rather than only length-checked.
 * Same shape as the contract's `ExportSettings`. amazon and zalando write JPEG whatever
 * `format` says; the report notes it.
 */
export const CheckedExportSettingsSchema = ExportSettingsSchema.extend({
  naming: NamingPatternSchema.default(DEFAULT_NAMING_PATTERN),
});
export type { ExportSettings };
export type ExportSettingsInput = z.input<typeof CheckedExportSettingsSchema>;

/** How a preset frames the product. */
export type Framing =
  /** Keep the image as it is (size and framing). */
  | { kind: 'keep' }
  /** Crop/pad around the product so it fills `fill` of the longer side, then scale. */
  | { kind: 'fill'; fill: number; longestSide: number }
  /** Exact canvas with the product centred; the background is continued to pad. */
  | { kind: 'canvas'; width: number; height: number };

export type Preset = {
  id: PresetId;
  /** The shared label (`EXPORT_PRESET_LABELS`, which the UI shows too). */
  label: string;
  framing: Framing;
  /** Marketplaces that only take JPEG. */
  forcedFormat: OutputFormat | null;
  /** Amazon main image: border pixels must be pure white, product must fill this share. */
  whiteBackground: boolean;
  minFill: number | null;
};

export const PRESETS: Readonly<Record<PresetId, Preset>> = {
  original: {
    id: 'original',
    label: EXPORT_PRESET_LABELS.original,
    framing: { kind: 'keep' },
    forcedFormat: null,
    whiteBackground: false,
    minFill: null,
  },
  amazon: {
    id: 'amazon',
    label: EXPORT_PRESET_LABELS.amazon,
    // 0.9 rather than 0.85 so resampling and JPEG edges never push the measured fill below 0.85.
    framing: { kind: 'fill', fill: 0.9, longestSide: 2000 },
    forcedFormat: 'jpeg',
    whiteBackground: true,
    minFill: 0.85,
  },
  zalando: {
    id: 'zalando',
    label: EXPORT_PRESET_LABELS.zalando,
    framing: { kind: 'canvas', width: 1801, height: 2600 },
    forcedFormat: 'jpeg',
    whiteBackground: false,
    minFill: null,
  },
  shopify: {
    id: 'shopify',
    label: EXPORT_PRESET_LABELS.shopify,
    framing: { kind: 'canvas', width: 2048, height: 2048 },
    forcedFormat: null,
    whiteBackground: false,
    minFill: null,
  },
};

/** The format actually written, and a note when the preset overrode the chosen one. */
export function effectiveFormat(settings: Pick<ExportSettings, 'preset' | 'format'>): {
  format: OutputFormat;
  note: string | null;
} {
  const forced = PRESETS[settings.preset].forcedFormat;
  if (forced === null || forced === settings.format) return { format: settings.format, note: null };
  return {
    format: forced,
    note: `${settings.preset} requires ${forced.toUpperCase()}: ${settings.format.toUpperCase()} was requested, ${forced.toUpperCase()} was written`,
  };
}

/** The extension an export in this format is written with (`jpg` for JPEG). */
export const extensionFor = (format: OutputFormat): string =>
  mediaExtensionFor(mimeOfFormat(format));
