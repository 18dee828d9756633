/**
 * Regenerates docs/screens/ from the operator flows themselves (test/e2e): builds the UI, runs the
 * Playwright flows with DROPSHOOT_SCREENS_DIR pointing at docs/screens, so every picture in the
 * README is a screen a passing flow actually showed. Needs Debian's Chromium (or CHROMIUM_PATH)
 * and the real photos in ../shared/eval/garments (or DROPSHOOT_EVAL_DIR).
 *
 *   npx tsx scripts/screens.ts
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const repo = path.resolve(import.meta.dirname, '..');
const out = path.join(repo, 'docs/screens');
const FLOWS = [
  'test/e2e/hot-folders.spec.ts',
  'test/e2e/recipe-builder.spec.ts',
  'test/e2e/review.spec.ts',
  'test/e2e/batch-board.spec.ts',
  'test/e2e/remote-cap.spec.ts',
  'test/e2e/preview-mode.spec.ts',
];

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): void {
  const result = spawnSync(command, args, { cwd: repo, stdio: 'inherit', env });
  if (result.status !== 0) {
    console.error(`${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
    process.exit(1);
  }
}

// Pictures of screens that no flow shows any more must not linger.
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });
run('npx', ['electron-vite', 'build']);
run('npx', ['playwright', 'test', ...FLOWS], { ...process.env, DROPSHOOT_SCREENS_DIR: out });
console.log(
  `screens written to ${path.relative(repo, out)}: ${fs.readdirSync(out).sort().join(', ')}`,
);
