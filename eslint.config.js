// Lint: the import boundaries of ARCHITECTURE.md (import-x/no-restricted-paths, checked on every
// TypeScript file), and a small type-aware rule set from typescript-eslint. `npm run lint`.
import './scripts/lint/typescript6.js'; // first: typescript-eslint must see TypeScript 6's API
import tseslint from 'typescript-eslint';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';

const ours = (from, allowed, message) => ({
  target: `./src/${from}`,
  from: './src',
  except: allowed.map((dir) => `./${dir}`),
  message,
});

/** Who may import whom (ARCHITECTURE.md "Boundaries"). Paths are resolved, so `../../core/x` counts. */
export const boundaryZones = [
  ours('shared', ['shared'], 'shared/ imports nothing of ours.'),
  ours(
    'infra',
    ['infra'],
    'infra/ holds Node building blocks with no domain: it imports nothing of ours.',
  ),
  ours(
    'core',
    ['core', 'shared', 'infra'],
    'core/ imports only shared/ (and infra/): no HTTP, no Electron, no studio.',
  ),
  ours('server', ['server', 'core', 'shared', 'infra'], 'server/ imports core/ and shared/.'),
  ours(
    'client',
    ['client', 'core', 'shared', 'infra'],
    'client/ imports core/ (in-process.ts only) and shared/.',
  ),
  {
    target: './src/client/!(in-process).ts',
    from: './src/core',
    except: ['./providers/local/remove-background.ts'],
    message:
      'Only client/in-process.ts loads the core (and client/local-cut-out.ts its background removal): the remote client and the studio must not.',
  },
  ours(
    'studio',
    ['studio', 'client', 'shared', 'infra'],
    'studio/ imports client/ and shared/ only; it never touches the core.',
  ),
  {
    target: './src/studio',
    from: './src/client/in-process.ts',
    message:
      'The studio reaches the embedded core only through client/open.ts (loaded when that mode is chosen).',
  },
  ours(
    'main',
    ['main', 'studio', 'shared', 'infra'],
    'main/ is a thin shell: it imports studio/host/engine-process.ts, shared/ and infra/.',
  ),
  {
    target: './src/main',
    from: './src/studio',
    except: ['./host/engine-process.ts'],
    message:
      'The engine runs in its own process: main talks to it through studio/host/engine-process.ts only.',
  },
  ours(
    'preload',
    ['preload', 'shared'],
    'preload/ exposes the studio contract: it imports shared/ only.',
  ),
  ours('renderer', ['renderer', 'shared'], 'renderer/ imports only shared/ and UI libraries.'),
  ours(
    'cli',
    ['cli', 'core', 'server', 'client', 'studio', 'shared', 'infra'],
    'cli/ wires core, server, client and studio; never the Electron parts.',
  ),
];

export default tseslint.config(
  {
    ignores: [
      'out/**',
      'dist/**',
      'node_modules/**',
      'test-results/**',
      'playwright-report/**',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
    ],
  },
  {
    files: ['**/*.ts', '**/*.tsx'],
    extends: [tseslint.configs.base],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [
        createNodeResolver({ extensions: ['.ts', '.tsx', '.js', '.mjs', '.json'] }),
      ],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: boundaryZones }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
    },
  },
);
