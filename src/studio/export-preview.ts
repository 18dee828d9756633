/**
 * Example file names for a naming pattern, as the export would write them: from the chosen
 * items, else the folder's own first photos, else two sample names (never another folder's).
 */
import fs from 'node:fs';
import { jobGroup, type StudioCommandSchemas } from '../shared/studio';
import type { z } from 'zod';
import type { StudioDB } from './db/open';
import * as store from './db/store';
import { previewNames } from './export/naming';
import { extensionFor } from './export/presets';
import { isSourcePhotoName } from './watch/sniff';

type PreviewArgs = z.output<(typeof StudioCommandSchemas)['export.preview']>;
/** A photo to name: its `{tool}` token is its job group (`jobGroup`). */
type Photo = { name: string; relativeDir: string; tool: string };

const SAMPLE_PHOTOS: readonly Photo[] = [
  { name: 'look-042.jpg', relativeDir: 'spring', tool: 'virtual_model' },
  { name: 'look-043.jpg', relativeDir: '', tool: 'virtual_model' },
];
const SHOWN = 3;

export function previewExportNames(
  db: StudioDB,
  args: PreviewArgs,
  now: Date,
): { names: string[] } | { error: string } {
  const chosen: Photo[] = args.itemIds
    ? args.itemIds
        .map((id) => store.getItem(db, id))
        .filter((i): i is store.ItemRow => i !== undefined)
        .map((i) => ({
          name: i.name,
          relativeDir: i.relativeDir,
          tool: jobGroup(i.kind, i.toolId),
        }))
    : args.folderPath
      ? photosIn(args.folderPath).map((name) => ({
          name,
          relativeDir: '',
          tool: args.tool ?? 'virtual_model',
        }))
      : [];
  const photos = (chosen.length ? chosen : SAMPLE_PHOTOS).slice(0, SHOWN);
  // A ready shoot names one file per shot (the real shot ids); a tool makes one result per photo.
  const shots = args.shots?.length ? args.shots.slice(0, SHOWN) : [null];
  const samples = photos.flatMap((photo) =>
    shots.map((shot, i) => ({
      name: photo.name,
      folder: photo.relativeDir,
      tool: args.tool ?? photo.tool,
      shot: shot ?? '1',
      n: i + 1,
      date: now,
      ext: extensionFor(args.format),
    })),
  );
  const preview = previewNames(args.naming, samples);
  return preview.ok ? { names: preview.names } : { error: preview.error };
}

/** The first few photo files at the top of a folder (by name), for previews; none if unreadable. */
function photosIn(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile() && !e.name.startsWith('.') && isSourcePhotoName(e.name))
      .map((e) => e.name)
      .sort()
      .slice(0, SHOWN);
  } catch {
    return [];
  }
}
