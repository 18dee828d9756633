import fs from 'node:fs/promises';
import path from 'node:path';
import {
  exists,
  suffixedPath,
  writeFileAtomic,
  type ConflictPolicy,
  type PlaceStatus,
} from '../../infra/atomic-write';
import { checkCompliance, type ComplianceReport } from './compliance';
import { renderName } from './naming';
import {
  effectiveFormat,
  CheckedExportSettingsSchema,
  extensionFor,
  type ExportSettings,
  type ExportSettingsInput,
} from './presets';
import { renderForPreset } from './render';

export type ExportResultInput = {
  /** The approved result in the studio library. */
  resultPath: string;
  /** The result's MIME type; anything but `image/*` (videos) is copied as it is. */
  resultMime?: string;
  /** Source photo file name, e.g. `look-042.jpg`. */
  sourceName: string;
  /** Source subfolder relative to the hot folder, `''` at top level. */
  sourceFolder: string;
  tool: string;
  shot: string | number;
  /** 1-based result number. */
  n: number;
  date: Date | string;
  outputDir: string;
  export: ExportSettingsInput;
  conflict?: ConflictPolicy;
  /**
   * When the target (or one of its suffixed names) already holds exactly these bytes, take that
   * file as this export instead of writing a copy: a repeated export after a crash writes nothing.
   */
  adoptIdentical?: boolean;
};

export type ExportResultOutput = {
  /** Where the export is; when skipped, the existing file that took its name. */
  path: string;
  status: PlaceStatus;
  /** For a skipped export, the report of the file already there. */
  report: ComplianceReport;
};

/**
 * Renders one approved result with the folder's export settings, writes it atomically under the
 * naming pattern and conflict policy, and checks the written bytes against the preset.
 */
export async function exportResult(input: ExportResultInput): Promise<ExportResultOutput> {
  const settings = CheckedExportSettingsSchema.parse(input.export);
  const conflict = input.conflict ?? 'suffix';
  const isImage = input.resultMime === undefined || input.resultMime.startsWith('image/');
  const ext = isImage
    ? extensionFor(effectiveFormat(settings).format)
    : path.extname(input.resultPath).slice(1).toLowerCase() ||
      (input.resultMime?.split('/')[1] ?? 'bin');
  const outputDir = path.resolve(input.outputDir);
  const relative = renderName(settings.naming, {
    name: input.sourceName,
    folder: input.sourceFolder,
    tool: input.tool,
    shot: input.shot,
    n: input.n,
    date: input.date,
    ext,
  });
  const target = path.join(outputDir, ...relative.split('/'));
  // renderName already makes traversal impossible; this guards against a future change to it.
  if (!target.startsWith(outputDir + path.sep)) {
    throw new Error(`Export path escapes the output folder: ${relative}`);
  }
  // Skip before rendering: no point spending seconds on an image that will not be written.
  if (conflict === 'skip' && (await exists(target))) {
    return {
      path: target,
      status: 'skipped',
      report: await reportExisting(target, settings, isImage),
    };
  }
  if (!isImage) {
    const data = await fs.readFile(input.resultPath);
    const placed =
      (input.adoptIdentical && (await findIdentical(target, data))) ||
      (await writeFileAtomic(target, data, conflict));
    return { ...placed, report: videoReport(settings) };
  }
  const rendered = await renderForPreset(input.resultPath, settings);
  const placed =
    (input.adoptIdentical && (await findIdentical(target, rendered.data))) ||
    (await writeFileAtomic(target, rendered.data, conflict));
  if (placed.status === 'skipped') {
    return { ...placed, report: await reportExisting(placed.path, settings, true) };
  }
  const report = await checkCompliance({
    image: rendered.data,
    settings,
    sourceSize: { width: rendered.sourceWidth, height: rendered.sourceHeight },
    notes: rendered.notes,
    upscale: rendered.upscale,
    preview: rendered.preview,
  });
  return { path: placed.path, status: placed.status, report };
}

/** The first of `target`, `target-2`, … that holds exactly `data`, up to the first free name. */
async function findIdentical(
  target: string,
  data: Buffer,
): Promise<{ path: string; status: PlaceStatus } | null> {
  for (let n = 1; ; n++) {
    const candidate = suffixedPath(target, n);
    let existing: Buffer;
    try {
      existing = await fs.readFile(candidate);
    } catch {
      return null;
    }
    if (existing.equals(data)) return { path: candidate, status: 'written' };
  }
}

async function reportExisting(
  file: string,
  settings: ExportSettings,
  isImage: boolean,
): Promise<ComplianceReport> {
  if (!isImage) return videoReport(settings);
  const note = 'Skipped: a file with this name already exists; this report describes that file';
  try {
    return await checkCompliance({ image: file, settings, notes: [note] });
  } catch (error) {
    return {
      preset: settings.preset,
      ok: false,
      verdict: 'fail',
      checks: [
        {
          id: 'format',
          ok: false,
          severity: 'error',
          value: 'unreadable',
          expected: effectiveFormat(settings).format,
          message: `The existing file cannot be read: ${(error as Error).message}`,
        },
      ],
      notes: [note],
    };
  }
}

const videoReport = (settings: ExportSettings): ComplianceReport => ({
  preset: settings.preset,
  ok: true,
  verdict: 'pass',
  checks: [],
  notes: ['Copied as it is: marketplace presets apply to still images'],
});
