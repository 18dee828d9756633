/**
 * The engine process in plain Node: `child_process.fork` of the same entry the desktop app runs
 * in a utility process, with structured-clone messages (bytes pass as they are).
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { EngineStart } from '../../shared/engine-process';
import { EngineProcess, type EnginePort } from './engine-process';

/** The entry's source file; run through tsx's loader, as `bin/dropshoot.mjs` runs the CLI. */
export const CHILD_ENTRY = path.join(import.meta.dirname, 'child-entry.ts');

export function forkPort(child: ChildProcess): EnginePort {
  return {
    send: (message) => {
      if (child.connected) child.send(message);
    },
    onMessage: (listener) => child.on('message', listener),
    onExit: (listener) => child.once('exit', (code) => listener(code)),
    kill: () => child.kill('SIGKILL'),
  };
}

export type ForkedEngine = { engine: EngineProcess; child: ChildProcess };

export async function forkEngine(
  config: EngineStart,
  options: { stdio?: 'inherit' | 'pipe' } = {},
): Promise<ForkedEngine> {
  const child = fork(CHILD_ENTRY, [], {
    execArgv: ['--import', 'tsx'],
    serialization: 'advanced',
    stdio: options.stdio === 'pipe' ? ['ignore', 'pipe', 'pipe', 'ipc'] : 'inherit',
  });
  const engine = await EngineProcess.start(forkPort(child), config);
  return { engine, child };
}
