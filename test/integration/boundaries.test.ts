/**
 * The import boundaries are checked, not only written: `npm run lint`'s ESLint, run on temporary
 * files placed in the tree, refuses each wrong-way import of ARCHITECTURE.md and accepts the
 * allowed ones.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const repo = path.resolve(import.meta.dirname, '../..');
const eslintBin = path.join(repo, 'node_modules/eslint/bin/eslint.js');
const probeName = `zz-boundary-probe-${process.pid}.ts`;

/** [layer folder under src/, import specifier from a file directly in it, refused?] */
const CASES: [string, string, boolean][] = [
  ['studio', '../core/clock', true],
  ['studio', '../client/in-process', true],
  ['studio', '../server', true],
  ['studio', '../client', false],
  ['studio', '../shared/studio', false],
  ['studio', '../infra/statement-cache', false],
  ['main', '../core/catalog', true],
  ['main', '../client/in-process', true],
  ['main', '../studio/engine', true],
  ['main', '../studio/host/engine-process', false],
  ['preload', '../main/own-frame', true],
  ['preload', '../shared/ipc-channels', false],
  ['renderer', '../studio/engine', true],
  ['renderer', '../shared/studio', false],
  ['shared', '../core/tools', true],
  ['core', '../server', true],
  ['core', '../studio/engine', true],
  ['core', '../infra/statement-cache', false],
  ['client', '../core/catalog', true],
  ['client', '../studio/engine', true],
  ['server', '../studio/engine', true],
  ['server', '../core/errors', false],
  ['infra', '../shared/api', true],
  ['cli', '../main/own-frame', true],
  ['cli', '../core/errors', false],
];

const written: string[] = [];
afterAll(() => {
  for (const file of written) fs.rmSync(file, { force: true });
});

type LintResult = { filePath: string; messages: { ruleId: string | null; message: string }[] };

/** Lints one probe file per case in a single ESLint run; the files are removed afterwards. */
async function lintImports(
  cases: [string, string][],
): Promise<Map<string, LintResult['messages']>> {
  const files = cases.map(([layer, specifier], n) => {
    const file = path.join(repo, 'src', layer, probeName.replace('.ts', `-${n}.ts`));
    fs.writeFileSync(file, `import * as probe from '${specifier}';\nexport const used = probe;\n`);
    written.push(file);
    return file;
  });
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [eslintBin, '--format', 'json', ...files],
      { cwd: repo, maxBuffer: 16 * 1024 * 1024 },
    ).catch(
      // exit code 1 means problems were found: the JSON report is still on stdout
      (err: { code?: number; stdout?: string }) => {
        if (err.code === 1 && err.stdout) return { stdout: err.stdout };
        throw err;
      },
    );
    const results = JSON.parse(stdout) as LintResult[];
    return new Map(results.map((r) => [path.relative(repo, r.filePath), r.messages]));
  } finally {
    for (const file of files) fs.rmSync(file, { force: true });
  }
}

/** An import that resolves to nothing is skipped by the rule: every probe must name a real module. */
function resolves(layer: string, specifier: string): boolean {
  const base = path.resolve(repo, 'src', layer, specifier);
  return ['.ts', '.tsx', '/index.ts'].some((ending) => fs.existsSync(base + ending));
}

describe('import boundaries (npm run lint)', () => {
  it('probes only modules that exist', () => {
    expect(CASES.filter(([layer, specifier]) => !resolves(layer, specifier))).toEqual([]);
  });

  it(
    'refuses every wrong-way import and accepts the allowed ones',
    { timeout: 240_000 },
    async () => {
      const messages = await lintImports(CASES.map(([layer, specifier]) => [layer, specifier]));
      const verdicts = CASES.map(([layer, specifier, refused], n) => {
        const file = path.join('src', layer, probeName.replace('.ts', `-${n}.ts`));
        const found = messages.get(file);
        if (!found) throw new Error(`ESLint did not lint ${file}`);
        const boundary = found.filter((m) => m.ruleId === 'import-x/no-restricted-paths');
        // Anything else on a probe (an unresolvable path, a parse error) would make the verdict meaningless.
        expect(
          found.filter((m) => m.ruleId !== 'import-x/no-restricted-paths'),
          `${file}: ${specifier}`,
        ).toEqual([]);
        return { from: layer, specifier, refused: boundary.length > 0, expected: refused };
      });
      expect(verdicts.filter((v) => v.refused !== v.expected)).toEqual([]);
    },
  );
});
