import fs from 'node:fs/promises';
import path from 'node:path';
import {
  errorCode,
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
      (await writeExport(target, data, conflict));
    return { ...placed, report: videoReport(settings) };
  }
  const rendered = await renderForPreset(input.resultPath, settings);
  const placed =
    (input.adoptIdentical && (await findIdentical(target, rendered.data))) ||
    (await writeExport(target, rendered.data, conflict));
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

/**
 * Writes the export; a full disk (or a used-up quota) is told in words the user can act on, with
 * the folder: the item's error is what `run`'s summary and the studio show. The result stays in
 * the studio library and its job stays paid, so the next run or a Retry writes it for nothing.
 */
async function writeExport(
  target: string,
  data: Buffer,
  conflict: ConflictPolicy,
): Promise<{ path: string; status: PlaceStatus }> {
  try {
    return await writeFileAtomic(target, data, conflict);
  } catch (error) {
    const code = errorCode(error);
    if (code !== 'ENOSPC' && code !== 'EDQUOT') throw error;
    const what = code === 'ENOSPC' ? 'the disk is full' : 'the disk quota is used up';
    throw Object.assign(
      new Error(
        `cannot write the export to ${path.dirname(target)}: ${what} (${code}). The result is paid for and kept in the studio library; free some space there (or choose another output folder), then run again or Retry in the studio: it is written at no charge`,
        { cause: error },
      ),
      { code },
    );
  }
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
