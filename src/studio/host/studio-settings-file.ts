/**
 * The headless studio's own settings, `<data>/studio-settings.json`: what the browser's Settings
 * screen saves (the daily request cap), read by `dropshoot studio` at start. A flag given on the
 * command line wins over the file. A damaged file never keeps the studio from starting.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../../infra/atomic-write';
import {
  aiProviderInEnvironment,
  DailyCapSchema,
  type StudioSettingsUpdate,
  type StudioSettingsView,
} from '../../shared/studio-settings';

const FileSchema = z.object({ dailyCap: DailyCapSchema.optional().catch(undefined) });
type SettingsFile = z.infer<typeof FileSchema>;

const fileOf = (dataDir: string) => path.join(dataDir, 'studio-settings.json');

export function readStudioSettings(dataDir: string): SettingsFile {
  try {
    const parsed = FileSchema.safeParse(JSON.parse(fs.readFileSync(fileOf(dataDir), 'utf8')));
    return parsed.success ? parsed.data : {};
  } catch {
    return {}; // absent or damaged: the defaults
  }
}

/** Writes the update atomically (the one atomic write), so a crash leaves the old file whole. */
export async function saveStudioSettings(
  dataDir: string,
  update: StudioSettingsUpdate,
): Promise<SettingsFile> {
  const next = { ...readStudioSettings(dataDir), ...update };
  await writeFileAtomic(fileOf(dataDir), JSON.stringify(next, null, 2), 'overwrite');
  return next;
}

export type StudioSettingsPort = {
  get(): StudioSettingsView;
  save(update: StudioSettingsUpdate): Promise<StudioSettingsView>;
};

/** The settings routes' side of the web server, for one data folder. */
export function studioSettingsPort(
  dataDir: string,
  started: { dailyCapFromFlag: number | null; env: NodeJS.ProcessEnv },
): StudioSettingsPort {
  const view = (file: SettingsFile): StudioSettingsView => ({
    dailyCap: file.dailyCap ?? null,
    dailyCapFromFlag: started.dailyCapFromFlag,
    aiProviderFromEnvironment: aiProviderInEnvironment(started.env),
  });
  return {
    get: () => view(readStudioSettings(dataDir)),
    save: async (update) => view(await saveStudioSettings(dataDir, update)),
  };
}
