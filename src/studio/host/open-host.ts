/**
 * Everything one engine process holds on a data folder, opened in the one safe order and closed
 * in reverse: the folder's lock, the service client, the studio (engine, hot folders, commands).
 * The CLI's `studio` command and the engine child process (the desktop app's) both start here.
 */
import { openServiceClient } from '../../client/open';
import type { ServiceClient } from '../../client';
import { EngineStartSchema, type EngineStart } from '../../shared/engine-process';
import { openStudio, type Studio } from '..';
import { lockDataFolder } from '../lock';

export type StudioHost = { studio: Studio; client: ServiceClient; close(): Promise<void> };

/**
 * `config` is validated here whoever built it (the CLI's flags, or the engine child's start
 * message, already checked): a malformed storage URL is refused before the folder is locked.
 */
export async function openStudioHost(
  input: EngineStart,
  log: (message: string) => void,
): Promise<StudioHost> {
  const config = EngineStartSchema.parse(input);
  // Locked before anything opens: the embedded core resumes its unfinished jobs as it opens.
  const unlock = lockDataFolder(config.dataDir);
  let client: ServiceClient | null = null;
  try {
    client = await openServiceClient(config.dataDir, config.service);
    const studio = await openStudio({
      dataDir: config.dataDir,
      client,
      log,
      ...(config.settleMs !== undefined ? { settleMs: config.settleMs } : {}),
      ...(config.dailyCap !== undefined ? { dailyCap: config.dailyCap } : {}),
      // Requests are counted per key (a hash is stored, never the key).
      ...(config.service.mode === 'remote' ? { apiKey: config.service.apiKey } : {}),
    });
    const opened = client;
    let closing: Promise<void> | null = null;
    return {
      studio,
      client: opened,
      close() {
        closing ??= studio
          .close()
          .then(() => opened.close())
          .finally(unlock);
        return closing;
      },
    };
  } catch (err) {
    await client?.close();
    unlock();
    throw err;
  }
}
