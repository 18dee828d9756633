import fs from 'node:fs';
import path from 'node:path';

const repo = path.resolve(import.meta.dirname, '..');

/** The Electron binary if one was installed, without require('electron') (which would try to download it). */
export function electronBinary(): string | null {
  const dir = path.join(repo, 'node_modules/electron');
  const pathFile = path.join(dir, 'path.txt');
  if (!fs.existsSync(pathFile)) return null;
  const binary = path.join(dir, 'dist', fs.readFileSync(pathFile, 'utf8').trim());
  return fs.existsSync(binary) ? binary : null;
}

export const NO_ELECTRON_REASON =
  'no Electron binary here (it comes from outside the npm registry and cannot be downloaded on this machine)';
