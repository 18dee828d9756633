#!/usr/bin/env node
/**
 * `dropshoot` command line: wires the core, the server and (later) the studio together for the
 * terminal. No business rules live here: parse flags, call a library function, print JSON.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import path from 'node:path';
import { AdminError } from '../core/errors';

const USAGE = `Usage: dropshoot <command> [flags]

  serve --port P --data DIR [--host 127.0.0.1] [--allow-private-urls] [--concurrency N] [--public-url URL]
      Run the /v1 HTTP service on DIR. Prints {"listening": URL} when ready.
  admin create-account --data DIR --email E --diamonds N [--daily-cap N]
  admin create-key --data DIR --email E [--daily-cap N]
  admin revoke-key --data DIR --key-id ID
  admin grant --data DIR --email E --diamonds N
  run --in DIR --recipe FILE.json --out DIR [--data DIR] [--remote URL --key KEY] [--concurrency N] [--max-diamonds N]
      One batch over every image under --in (recursively), approved automatically and exported
      to --out. Prints a summary; exits 0 when every photo was exported or skipped, 1 otherwise.
      --max-diamonds: start no photo that could take the batch's spend over N (run again to go on).
  studio --data DIR [--port 5170] [--remote URL --key KEY]
      Run the studio engine (hot folders, queue, review, export) and serve the studio contract
      over HTTP + server-sent events, with the UI when built. Prints {"studio": URL} when ready.
  generate --tool TOOL --image PHOTO [--request FILE.json] [--out DIR] [--data DIR]
      One photo through one tool on the embedded core. --request is a POST /v1/generations body
      whose "{photo}" image values are replaced by PHOTO (default: {"images":{"user_photo":"{photo}"}}).
`;

class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;
function flags<O extends Options>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}
function required(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== 'string' || value === '') throw new UsageError(`missing --${flag}`);
  return value;
}
function integer(value: string | boolean | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d+$/.test(value)) throw new UsageError(`--${flag} must be a whole number`);
  return Number(value);
}
const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`);
};

async function admin(sub: string | undefined, args: string[]): Promise<void> {
  const { openDatabase } = await import('../core/db/open');
  const { adminFor } = await import('../core');
  const { systemClock } = await import('../core/clock');
  const common = { data: { type: 'string' }, email: { type: 'string' } } as const;
  const withDb = <T>(dataDir: string, fn: (a: ReturnType<typeof adminFor>) => T): T => {
    const db = openDatabase(path.join(path.resolve(dataDir), 'core.db'));
    try {
      return fn(adminFor(db, systemClock));
    } finally {
      db.close();
    }
  };
  switch (sub) {
    case 'create-account': {
      const f = flags(args, { ...common, diamonds: { type: 'string' }, 'daily-cap': { type: 'string' } });
      const input = {
        email: required(f.email, 'email'),
        diamonds: integer(required(f.diamonds, 'diamonds'), 'diamonds')!,
        dailyCap: integer(f['daily-cap'], 'daily-cap'),
      };
      return print(withDb(required(f.data, 'data'), (a) => a.createAccount(input)));
    }
    case 'create-key': {
      const f = flags(args, { ...common, 'daily-cap': { type: 'string' } });
      const input = { email: required(f.email, 'email'), dailyCap: integer(f['daily-cap'], 'daily-cap') };
      return print(withDb(required(f.data, 'data'), (a) => a.createKey(input)));
    }
    case 'revoke-key': {
      const f = flags(args, { data: { type: 'string' }, 'key-id': { type: 'string' } });
      const keyId = required(f['key-id'], 'key-id');
      return print(withDb(required(f.data, 'data'), (a) => a.revokeKey(keyId)));
    }
    case 'grant': {
      const f = flags(args, { ...common, diamonds: { type: 'string' } });
      const input = { email: required(f.email, 'email'), diamonds: integer(required(f.diamonds, 'diamonds'), 'diamonds')! };
      return print(withDb(required(f.data, 'data'), (a) => a.grant(input)));
    }
    default:
      throw new UsageError(sub ? `unknown admin command '${sub}'` : 'missing admin command');
  }
}

async function serve(args: string[]): Promise<void> {
  const f = flags(args, {
    port: { type: 'string' },
    data: { type: 'string' },
    host: { type: 'string' },
    'allow-private-urls': { type: 'boolean' },
    concurrency: { type: 'string' },
    'public-url': { type: 'string' },
  });
  const port = integer(required(f.port, 'port'), 'port')!;
  if (port > 65535) throw new UsageError('--port must be 0-65535');
  const concurrency = integer(f.concurrency, 'concurrency');
  const { startServer } = await import('../server');
  const server = await startServer({
    dataDir: path.resolve(required(f.data, 'data')),
    host: typeof f.host === 'string' ? f.host : '127.0.0.1',
    port,
    allowPrivateUrls: f['allow-private-urls'] === true,
    ...(concurrency ? { concurrency } : {}),
    ...(typeof f['public-url'] === 'string' ? { publicBaseUrl: f['public-url'] } : {}),
    log: (message) => process.stderr.write(`${message}\n`),
  });
  print({ listening: server.url });
  const stop = () => {
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

const DEFAULT_DATA_DIR = path.join(process.env.HOME ?? '.', '.dropshoot');

async function generate(args: string[]): Promise<void> {
  const f = flags(args, {
    tool: { type: 'string' },
    image: { type: 'string' },
    request: { type: 'string' },
    out: { type: 'string' },
    data: { type: 'string' },
  });
  const photo = path.resolve(required(f.image, 'image'));
  const { GenerationRequestSchema } = await import('../shared/api');
  const fs = await import('node:fs');
  let template: unknown = { images: { user_photo: '{photo}' } };
  if (typeof f.request === 'string') {
    try {
      template = JSON.parse(fs.readFileSync(f.request, 'utf8'));
    } catch (err) {
      throw new UsageError(`--request: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const parsed = GenerationRequestSchema.safeParse({ ...(template as object), ...(typeof f.tool === 'string' ? { toolId: f.tool } : {}) });
  if (!parsed.success) throw new UsageError(`--request: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  const { InProcessClient } = await import('../client');
  const { generateOne } = await import('../studio/one-shot');
  const client = InProcessClient.open({ dataDir: path.resolve(typeof f.data === 'string' ? f.data : DEFAULT_DATA_DIR) });
  try {
    const result = await generateOne(client, { photo, request: parsed.data, outDir: path.resolve(typeof f.out === 'string' ? f.out : 'out') });
    const account = await client.getAccount();
    print({ ...result, diamondBalance: account.diamondBalance });
  } finally {
    await client.close();
  }
}

async function openClient(f: { data?: string | boolean; remote?: string | boolean; key?: string | boolean }) {
  const dataDir = path.resolve(typeof f.data === 'string' ? f.data : DEFAULT_DATA_DIR);
  const { InProcessClient, HttpClient } = await import('../client');
  if (typeof f.remote === 'string') {
    const apiKey = typeof f.key === 'string' ? f.key : process.env.DROPSHOOT_API_KEY;
    if (!apiKey) throw new UsageError('--remote needs --key (or DROPSHOOT_API_KEY)');
    return { dataDir, client: new HttpClient({ baseUrl: f.remote, apiKey }) };
  }
  return { dataDir, client: InProcessClient.open({ dataDir: path.join(dataDir, 'core') }) };
}

async function run(args: string[]): Promise<void> {
  const f = flags(args, {
    in: { type: 'string' },
    recipe: { type: 'string' },
    out: { type: 'string' },
    data: { type: 'string' },
    remote: { type: 'string' },
    key: { type: 'string' },
    concurrency: { type: 'string' },
    'max-diamonds': { type: 'string' },
  });
  const maxDiamonds = integer(f['max-diamonds'], 'max-diamonds');
  if (maxDiamonds !== undefined && maxDiamonds < 1) throw new UsageError('--max-diamonds must be at least 1');
  const inDir = path.resolve(required(f.in, 'in'));
  const outDir = path.resolve(required(f.out, 'out'));
  const recipeFile = required(f.recipe, 'recipe');
  const fs = await import('node:fs');
  if (!fs.existsSync(inDir) || !fs.statSync(inDir).isDirectory()) throw new UsageError(`--in ${inDir} is not a folder`);
  const { RecipeSchema } = await import('../shared/studio');
  let recipeJson: unknown;
  try {
    recipeJson = JSON.parse(fs.readFileSync(recipeFile, 'utf8'));
  } catch (err) {
    throw new UsageError(`--recipe: ${err instanceof Error ? err.message : String(err)}`);
  }
  const recipe = RecipeSchema.safeParse(recipeJson);
  if (!recipe.success) {
    const issue = recipe.error.issues[0];
    throw new UsageError(`--recipe: ${issue ? `${issue.path.join('.') || 'recipe'}: ${issue.message}` : 'invalid'}`);
  }
  const { dataDir, client } = await openClient(f);
  const { StudioEngine } = await import('../studio/engine');
  const { checkRecipe } = await import('../studio/recipe-check');
  const { runBatch } = await import('../studio/run-batch');
  const { prepareForUpload } = await import('../studio/prepare');
  const concurrency = integer(f.concurrency, 'concurrency');
  const engine = new StudioEngine({ dataDir, client, prepareUpload: prepareForUpload, ...(concurrency ? { concurrency } : {}) });
  try {
    const problem = await checkRecipe(engine.client, recipe.data);
    if (problem) throw new Error(`recipe: ${problem}`);
    const summary = await runBatch(engine, { inDir, recipe: recipe.data, outDir, ...(maxDiamonds !== undefined ? { maxDiamonds } : {}) });
    print(summary);
    process.exitCode = summary.exported + summary.skipped === summary.photos ? 0 : 1;
  } finally {
    await engine.close();
    await client.close();
  }
}

async function studio(args: string[]): Promise<void> {
  const f = flags(args, {
    data: { type: 'string' },
    port: { type: 'string' },
    remote: { type: 'string' },
    key: { type: 'string' },
    'settle-ms': { type: 'string' },
  });
  const port = integer(f.port, 'port') ?? 5170;
  const settleMs = integer(f['settle-ms'], 'settle-ms');
  const { dataDir, client } = await openClient(f);
  const { openStudio } = await import('../studio');
  const { buildStudioWeb } = await import('../studio/web');
  const log = (message: string) => process.stderr.write(`${message}\n`);
  const opened = await openStudio({ dataDir, client, log, ...(settleMs !== undefined ? { settleMs } : {}) });
  const uiDir = path.resolve(import.meta.dirname, '../../out/renderer');
  const app = buildStudioWeb({ engine: opened.engine, commands: opened.commands, uiDir });
  await app.listen({ host: '127.0.0.1', port });
  const address = app.server.address();
  print({ studio: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}` });
  const stop = () => {
    void app
      .close()
      .then(() => opened.close())
      .then(() => client.close())
      .then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return serve(rest);
    case 'admin':
      return admin(rest[0], rest.slice(1));
    case 'generate':
      return generate(rest);
    case 'run':
      return run(rest);
    case 'studio':
      return studio(rest);
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return;
    default:
      throw new UsageError(command ? `unknown command '${command}'` : 'missing command');
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) {
    process.stderr.write(`dropshoot: ${err.message}\n\n${USAGE}`);
    process.exit(2);
  }
  const message = err instanceof AdminError || err instanceof Error ? err.message : String(err);
  process.stderr.write(`dropshoot: ${message}\n`);
  process.exit(1);
});
