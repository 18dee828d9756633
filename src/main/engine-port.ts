/**
 * The studio engine in an Electron utility process: the same entry as `child_process.fork` runs in
 * plain Node (src/studio/host/child-entry.ts, built next to this file as engine.js). The engine's
 * SQLite and image work never runs on the window's process.
 */
import path from 'node:path';
import { utilityProcess } from 'electron';
import type { EngineStart } from '../shared/engine-process';
import { EngineProcess, type EnginePort } from '../studio/host/engine-process';

export function startEngineProcess(config: EngineStart): Promise<EngineProcess> {
  const child = utilityProcess.fork(path.join(import.meta.dirname, 'engine.js'), [], {
    serviceName: 'Dropshoot engine',
    stdio: 'inherit',
  });
  const port: EnginePort = {
    send: (message) => child.postMessage(message),
    onMessage: (listener) => child.on('message', listener),
    onExit: (listener) => child.once('exit', (code) => listener(code)),
    kill: () => void child.kill(),
  };
  // Secrets go over the message channel in `start`, never in argv or the environment.
  return EngineProcess.start(port, config);
}
