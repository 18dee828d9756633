/**
 * Opens the studio on a data folder: the engine, its hot folders and the contract's command
 * handlers, over the given service client. Used by the CLI (`studio`, `run`) and the desktop app.
 */
import type { ServiceClient } from '../client';
import { createCommands } from './commands';
import { StudioEngine, type EngineOptions } from './engine';
import { HotFolders } from './folders';
import { prepareForUpload } from './prepare';

export type Studio = {
  engine: StudioEngine;
  folders: HotFolders;
  commands: ReturnType<typeof createCommands>;
  close(): Promise<void>;
};

export async function openStudio(
  opts: Omit<EngineOptions, 'client'> & { client: ServiceClient; settleMs?: number },
): Promise<Studio> {
  const engine = new StudioEngine({ prepareUpload: prepareForUpload, ...opts });
  const folders = new HotFolders(engine, {
    ...(opts.settleMs !== undefined ? { settleMs: opts.settleMs } : {}),
    ...(opts.log ? { log: opts.log } : {}),
  });
  const commands = createCommands(engine, folders);
  engine.start();
  await folders.start();
  return {
    engine,
    folders,
    commands,
    async close() {
      await folders.stop();
      await engine.close();
    },
  };
}

export { StudioEngine } from './engine';
export { runCommand } from './commands';
