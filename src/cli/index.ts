#!/usr/bin/env node
/**
 * `dropshoot` command line: wires the core, the server and (later) the studio together for the
 * terminal. No business rules live here: parse flags, call a library function, print JSON.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import path from 'node:path';
import { AdminError } from '../core/errors';
import type { EmbeddedStorage, ServiceChoice } from '../client/open';

const USAGE = `Usage: dropshoot <command> [flags]

  serve --port P --data DIR [--host 127.0.0.1] [--allow-private-urls] [--concurrency N] [--public-url URL]
        [--database postgres://…] [--database-listen-url postgres://…] [--blobs s3://BUCKET?endpoint=…]
        [--workers N] [--lease-seconds S] [--drain-seconds S]
      Run the /v1 HTTP service on DIR. Prints {"listening": URL} when ready; JSON logs on stderr.
      On SIGTERM/SIGINT/SIGHUP it stops taking jobs and connections, answers requests under way, lets
      jobs under way finish for up to --drain-seconds (default 25 with --database, else 0: cut at
      once and resumed at next start), then exits. Asked again while it drains, it stops at once
      (jobs under way cut, their leases returned best-effort) with exit code 143 (SIGTERM) / 130
      (SIGINT) / 129 (SIGHUP).
      --blobs (or DROPSHOOT_BLOBS_URL): files in an S3-compatible bucket, e.g.
      s3://BUCKET?endpoint=http://127.0.0.1:9000&region=us-east-1&forcePathStyle=true, with
      AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set; DIR then keeps the database and scratch copies
      (the providers' inputs), at most --blob-scratch-mb (or DROPSHOOT_BLOB_SCRATCH_MB; default 2048)
      per process, least recently used removed first, never one being read.
      --database (or DROPSHOOT_DATABASE_URL): team mode, any number of serve processes on one
      PostgreSQL (postgres://user:password@host:5432/db[?schema=NAME]) and one bucket; DIR then
      keeps scratch copies only. --workers N: jobs this process runs at once (default 4; 0 = API
      only); a killed process's jobs are taken by another after --lease-seconds (default 30).
      --database-listen-url (or DROPSHOOT_DATABASE_LISTEN_URL): a direct connection used only to
      LISTEN for new jobs when --database goes through PgBouncer (transaction mode loses LISTEN);
      without a working LISTEN, workers poll for jobs every 500 ms (one warning line says so).
  admin create-account --data DIR --email E --diamonds N [--daily-cap N]
  admin create-key --data DIR --email E [--daily-cap N]
  admin revoke-key --data DIR --key-id ID
  admin grant --data DIR --email E --diamonds N
      admin commands take --database URL (or DROPSHOOT_DATABASE_URL) instead of --data in team mode.
  run --in DIR --recipe FILE.json --out DIR [--data DIR] [--remote URL --key KEY] [--concurrency N] [--max-diamonds N]
      [--daily-cap N] [--wait] [--uncertain resubmit|fail] [--give-up-after MIN]
      One batch over every image under --in (recursively), approved automatically and exported
      to --out. Prints a summary; exits 0 when every photo was exported or skipped, 1 otherwise.
      --max-diamonds: start no photo that could take the batch's spend over N (run again to go on).
      --daily-cap: the key's daily request cap (the API does not report it; default 500 remote).
        A lower cap named by the service's 429 is remembered for the days after, the day's last
        request kept for the closing balance read.
      --wait: wait out a short balance (402) or a reached daily cap instead of ending the run.
      --uncertain: a submission whose answer was lost: send it again (may cost twice) or fail it.
      --give-up-after: minutes this run waits on a job the service still reports processing
        (default 30; most jobs take 10-60 s). It then ends (exit 1) listing the job as paid and
        still processing; the next run collects it at no new charge. While jobs process, a line
        each minute says how many and for how long.
      [--database URL] [--blobs URL]: see below.
  studio --data DIR [--port 5170] [--remote URL --key KEY] [--daily-cap N] [--database URL] [--blobs URL]
      Run the studio engine (hot folders, queue, review, export) and serve the studio contract
      over HTTP + server-sent events, with the UI when built. Prints {"studio": URL} when ready.
  generate --tool TOOL --image PHOTO [--request FILE.json] [--out DIR] [--data DIR] [--database URL] [--blobs URL]
      One photo through one tool on the embedded core; the results are written next to PHOTO, or
      into --out. --request is a POST /v1/generations body whose "{photo}" image values are
      replaced by PHOTO (default: {"images":{"user_photo":"{photo}"}}).

  --data DIR defaults to ~/.dropshoot: studio.db, library/ and, in embedded mode, the core in core/.
  run, studio and generate embed the core; --database URL (or DROPSHOOT_DATABASE_URL) and --blobs
  URL (or DROPSHOOT_BLOBS_URL) put its rows in PostgreSQL and its files in a bucket, as for serve
  (the studio's own studio.db and library/ stay under --data); not with --remote.
  Every error names the problem in one line; \`dropshoot --help\` (or COMMAND --help) prints this.
`;

class UsageError extends Error {}

/** What each required flag is, so that a missing one is named with what to give. */
const FLAG_HINTS: Record<string, string> = {
  in: 'the folder of photos',
  out: 'the folder to export to',
  recipe: 'the recipe file, e.g. resources/samples/recipes/cutout-amazon.json',
  data: 'the data folder',
  email: "the account's e-mail",
  diamonds: 'a whole number of diamonds',
  port: 'a port, 0 for any free one',
  'key-id': 'the id create-key printed',
  image: 'the photo to process',
};

type Options = NonNullable<ParseArgsConfig['options']>;
function flags<O extends Options>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const option = /Option '([^']+)'/.exec(message)?.[1];
    if ((err as { code?: string }).code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option) {
      throw new UsageError(
        `${option} needs a value (one that starts with a dash goes as ${option}=VALUE)`,
      );
    }
    // node's own message, to its first sentence ("Unknown option '--x'.")
    throw new UsageError(message.split(/(?<=\.)\s/)[0]!.replace(/\.$/, ''));
  }
}
function required(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== 'string' || value === '')
    throw new UsageError(`missing --${flag}${FLAG_HINTS[flag] ? ` (${FLAG_HINTS[flag]})` : ''}`);
  return value;
}
function integer(value: string | boolean | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d+$/.test(value))
    throw new UsageError(`--${flag} must be a whole number`);
  return Number(value);
}
const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`);
};

/**
 * The database URL of `--database`, else DROPSHOOT_DATABASE_URL; undefined for SQLite under
 * --data. A malformed one is a usage error naming where it came from, never its password.
 */
async function databaseUrlOf(flag: string | boolean | undefined): Promise<string | undefined> {
  const { databaseUrlFrom, DatabaseUrlInvalid } = await import('../core/store/open-store');
  try {
    return databaseUrlFrom(typeof flag === 'string' ? flag : undefined, process.env);
  } catch (err) {
    if (err instanceof DatabaseUrlInvalid) throw new UsageError(err.message);
    throw err;
  }
}

/** `--database-listen-url`, else DROPSHOOT_DATABASE_LISTEN_URL (a direct connection for LISTEN). */
async function databaseListenUrlOf(
  flag: string | boolean | undefined,
): Promise<string | undefined> {
  const { databaseListenUrlFrom, DatabaseUrlInvalid } = await import('../core/store/open-store');
  try {
    return databaseListenUrlFrom(typeof flag === 'string' ? flag : undefined, process.env);
  } catch (err) {
    if (err instanceof DatabaseUrlInvalid) throw new UsageError(err.message);
    throw err;
  }
}

/**
 * The bucket URL of `--blobs`, else DROPSHOOT_BLOBS_URL; undefined for files under the data
 * folder. Checked before anything opens: a malformed one is a usage error naming where it came
 * from (the message never echoes the URL).
 */
async function blobsUrlOf(flag: string | boolean | undefined): Promise<string | undefined> {
  const fromEnv = process.env.DROPSHOOT_BLOBS_URL;
  const [value, source] =
    typeof flag === 'string'
      ? [flag, '--blobs']
      : fromEnv !== undefined && fromEnv.trim() !== ''
        ? [fromEnv.trim(), 'DROPSHOOT_BLOBS_URL']
        : [undefined, ''];
  if (value === undefined) return undefined;
  const { parseBlobsUrl, BlobsUrlError } = await import('../core/media/blobs-url');
  try {
    parseBlobsUrl(value);
  } catch (err) {
    if (err instanceof BlobsUrlError) throw new UsageError(`${source}: ${err.message}`);
    throw err;
  }
  return value;
}

/**
 * Where the embedded core of `run`, `studio` and `generate` keeps rows and files: `--database` /
 * DROPSHOOT_DATABASE_URL and `--blobs` / DROPSHOOT_BLOBS_URL as for `serve`; neither: SQLite and
 * files under `<data>/core/`, as always.
 */
async function embeddedStorageOf(f: {
  database?: string | boolean;
  blobs?: string | boolean;
  remote?: string | boolean;
}): Promise<EmbeddedStorage> {
  if (typeof f.remote === 'string') {
    if (typeof f.database === 'string' || typeof f.blobs === 'string')
      throw new UsageError(
        "--database and --blobs choose the embedded core's storage; with --remote the service keeps its own",
      );
    return {};
  }
  const databaseUrl = await databaseUrlOf(f.database);
  const blobsUrl = await blobsUrlOf(f.blobs);
  return {
    ...(databaseUrl !== undefined ? { databaseUrl } : {}),
    ...(blobsUrl !== undefined ? { blobsUrl } : {}),
  };
}

async function admin(sub: string | undefined, args: string[]): Promise<void> {
  const { openStore } = await import('../core/store/open-store');
  const { adminFor } = await import('../core');
  const { systemClock } = await import('../core/clock');
  const common = {
    data: { type: 'string' },
    database: { type: 'string' },
    email: { type: 'string' },
  } as const;
  const withDb = async <T>(
    f: { data?: string | boolean; database?: string | boolean },
    fn: (a: ReturnType<typeof adminFor>) => Promise<T>,
  ): Promise<T> => {
    const databaseUrl = await databaseUrlOf(f.database);
    // --data names the SQLite file's folder; with a database URL it is not needed.
    const dataDir = databaseUrl === undefined ? path.resolve(required(f.data, 'data')) : '.';
    const store = await openStore({ databaseUrl, dataDir, maxConnections: 2 });
    try {
      return await fn(adminFor(store, systemClock));
    } finally {
      await store.close();
    }
  };
  switch (sub) {
    case 'create-account': {
      const f = flags(args, {
        ...common,
        diamonds: { type: 'string' },
        'daily-cap': { type: 'string' },
      });
      const input = {
        email: required(f.email, 'email'),
        diamonds: integer(required(f.diamonds, 'diamonds'), 'diamonds')!,
        dailyCap: integer(f['daily-cap'], 'daily-cap'),
      };
      return print(await withDb(f, (a) => a.createAccount(input)));
    }
    case 'create-key': {
      const f = flags(args, { ...common, 'daily-cap': { type: 'string' } });
      const input = {
        email: required(f.email, 'email'),
        dailyCap: integer(f['daily-cap'], 'daily-cap'),
      };
      return print(await withDb(f, (a) => a.createKey(input)));
    }
    case 'revoke-key': {
      const f = flags(args, {
        data: { type: 'string' },
        database: { type: 'string' },
        'key-id': { type: 'string' },
      });
      const keyId = required(f['key-id'], 'key-id');
      return print(await withDb(f, (a) => a.revokeKey(keyId)));
    }
    case 'grant': {
      const f = flags(args, { ...common, diamonds: { type: 'string' } });
      const input = {
        email: required(f.email, 'email'),
        diamonds: integer(required(f.diamonds, 'diamonds'), 'diamonds')!,
      };
      return print(await withDb(f, (a) => a.grant(input)));
    }
    default:
      throw new UsageError(sub ? `unknown admin command '${sub}'` : 'missing admin command');
  }
}

/** How the core's log lines ask to be logged at warn level. */
const WARNING = 'warning: ';

async function serve(args: string[]): Promise<void> {
  const f = flags(args, {
    port: { type: 'string' },
    data: { type: 'string' },
    host: { type: 'string' },
    'allow-private-urls': { type: 'boolean' },
    concurrency: { type: 'string' },
    'public-url': { type: 'string' },
    blobs: { type: 'string' },
    'blob-scratch-mb': { type: 'string' },
    database: { type: 'string' },
    'database-listen-url': { type: 'string' },
    workers: { type: 'string' },
    'lease-seconds': { type: 'string' },
    'drain-seconds': { type: 'string' },
  });
  const port = integer(required(f.port, 'port'), 'port')!;
  const databaseUrl = await databaseUrlOf(f.database);
  const databaseListenUrl = await databaseListenUrlOf(f['database-listen-url']);
  if (databaseUrl === undefined && databaseListenUrl !== undefined)
    throw new UsageError(
      '--database-listen-url (or DROPSHOOT_DATABASE_LISTEN_URL) needs --database',
    );
  const workers = integer(f.workers, 'workers');
  const leaseSeconds = integer(f['lease-seconds'], 'lease-seconds');
  if (databaseUrl === undefined && (workers === 0 || leaseSeconds !== undefined))
    throw new UsageError(
      `${workers === 0 ? '--workers 0' : '--lease-seconds'} needs --database (with SQLite under --data, this process runs every job of its file)`,
    );
  if (leaseSeconds !== undefined && (leaseSeconds < 1 || leaseSeconds > 86_400))
    throw new UsageError('--lease-seconds must be 1-86400');
  const drainSeconds = integer(f['drain-seconds'], 'drain-seconds');
  if (drainSeconds !== undefined && drainSeconds > 3_600)
    throw new UsageError('--drain-seconds must be 0-3600');
  // Files in an S3-compatible bucket (credentials from AWS_*), else under --data.
  const blobsUrl = await blobsUrlOf(f.blobs);
  const scratchMb = integer(f['blob-scratch-mb'], 'blob-scratch-mb');
  if (scratchMb !== undefined && (scratchMb < 1 || blobsUrl === undefined))
    throw new UsageError(
      scratchMb < 1
        ? '--blob-scratch-mb must be 1 or more'
        : '--blob-scratch-mb bounds the copies of a bucket: it needs --blobs (or DROPSHOOT_BLOBS_URL)',
    );
  if (port > 65535) throw new UsageError('--port must be 0-65535');
  // SQLite: --workers is how many units run at once (every job runs here), as --concurrency.
  const concurrency =
    integer(f.concurrency, 'concurrency') ?? (databaseUrl === undefined ? workers : undefined);
  const { startServer, DEFAULT_TEAM_DRAIN_SECONDS } = await import('../server');
  const { createLogger } = await import('../server/logging');
  const logger = createLogger();
  // Listening for signals before the server starts: a stop asked for while it starts (jobs are
  // resumed before it listens) is a clean stop once it is up, never the default kill.
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  let signalled: NodeJS.Signals | undefined;
  let closing = false;
  let halting = false;
  const stop = (signal: NodeJS.Signals) => {
    signalled ??= signal;
    if (!server) return;
    if (closing) {
      haltNow(server, signal);
      return;
    }
    closing = true;
    logger.info(`${signalled}: stopping`);
    // Drains requests and jobs under way (up to --drain-seconds), then flushes the log. Halted
    // meanwhile (`haltNow` cuts the jobs, which ends the drain too), the halt's exit code stands:
    // this one raced it to exit 0 under load.
    void server.close().then(() => {
      if (!halting) logger.flush(() => process.exit(0));
    });
  };
  // Asked again while draining: the operator does not want to wait. Leases are returned
  // (best-effort, briefly) so other processes take the jobs at once; exit 143 / 130.
  const haltNow = (running: NonNullable<typeof server>, signal: NodeJS.Signals) => {
    if (halting) return;
    halting = true;
    logger.warn(`${signal} again while draining: stopping at once, cutting the jobs under way`);
    void running
      .halt()
      .catch(() => null)
      .then((released) => {
        logger.warn(
          released === null
            ? 'job leases not confirmed released: other processes take those jobs once the leases run out'
            : `released ${released} job leases for other processes`,
        );
        logger.flush(() => process.exit(exitCodeOf(signal)));
        // A log flush that never calls back must not keep the process up.
        setTimeout(() => process.exit(exitCodeOf(signal)), 1_000).unref();
      });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // A closed terminal or a supervisor's hang-up: the same clean stop (its default kills the
  // process before the log's batched lines are written).
  process.on('SIGHUP', stop);
  server = await startServer({
    dataDir: path.resolve(required(f.data, 'data')),
    ...(databaseUrl !== undefined ? { databaseUrl } : {}),
    ...(databaseListenUrl !== undefined ? { databaseListenUrl } : {}),
    ...(databaseUrl !== undefined && workers !== undefined ? { workers } : {}),
    ...(leaseSeconds !== undefined ? { leaseMs: leaseSeconds * 1000 } : {}),
    drainMs: (drainSeconds ?? (databaseUrl !== undefined ? DEFAULT_TEAM_DRAIN_SECONDS : 0)) * 1000,
    ...(blobsUrl ? { blobsUrl } : {}),
    ...(scratchMb !== undefined ? { blobScratchLimitBytes: scratchMb * 1024 * 1024 } : {}),
    logger,
    host: typeof f.host === 'string' ? f.host : '127.0.0.1',
    port,
    allowPrivateUrls: f['allow-private-urls'] === true,
    ...(concurrency ? { concurrency } : {}),
    ...(typeof f['public-url'] === 'string' ? { publicBaseUrl: f['public-url'] } : {}),
    // The core marks what an operator should act on (e.g. LISTEN lost: polling) as a warning.
    log: (message) =>
      message.startsWith(WARNING)
        ? logger.warn(message.slice(WARNING.length))
        : logger.info(message),
  });
  print({ listening: server.url });
  if (signalled) stop(signalled);
}

const DEFAULT_DATA_DIR = path.join(process.env.HOME ?? '.', '.dropshoot');

async function generate(args: string[]): Promise<void> {
  const f = flags(args, {
    tool: { type: 'string' },
    image: { type: 'string' },
    request: { type: 'string' },
    out: { type: 'string' },
    data: { type: 'string' },
    database: { type: 'string' },
    blobs: { type: 'string' },
  });
  const photo = path.resolve(required(f.image, 'image'));
  const storage = await embeddedStorageOf(f);
  const { GenerationRequestSchema } = await import('../shared/api');
  const { PHOTO_PLACEHOLDER } = await import('../shared/studio');
  const fs = await import('node:fs');
  if (!fs.existsSync(photo) || !fs.statSync(photo).isFile())
    throw new UsageError(`--image ${photo} is not a file; give the photo to process`);
  let template: unknown = { images: { user_photo: PHOTO_PLACEHOLDER } };
  if (typeof f.request === 'string') {
    try {
      template = JSON.parse(fs.readFileSync(f.request, 'utf8'));
    } catch (err) {
      throw new UsageError(`--request: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const parsed = GenerationRequestSchema.safeParse({
    ...(template as object),
    ...(typeof f.tool === 'string' ? { toolId: f.tool } : {}),
  });
  if (!parsed.success)
    throw new UsageError(`--request: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  const { generateOne } = await import('../studio/one-shot');
  // The same data folder and core as `run` and `studio` (one ledger), locked like theirs.
  const dataDir = dataDirOf(f);
  const unlock = await lockFirst(dataDir);
  try {
    const client = await openClient({}, dataDir, storage);
    try {
      // Next to the photo unless a folder is named: never into the working directory's out/ (the build output).
      const outDir = typeof f.out === 'string' ? path.resolve(f.out) : path.dirname(photo);
      const result = await generateOne(client, { photo, request: parsed.data, outDir });
      const account = await client.getAccount();
      print({ ...result, diamondBalance: account.diamondBalance });
    } finally {
      await client.close();
    }
  } finally {
    unlock();
  }
}

function dataDirOf(f: { data?: string | boolean }): string {
  return path.resolve(typeof f.data === 'string' ? f.data : DEFAULT_DATA_DIR);
}

/**
 * Locks the data folder before anything opens in it: the embedded core resumes its unfinished
 * jobs as it opens, so a second process must be refused before that, not after.
 */
async function lockFirst(dataDir: string): Promise<() => void> {
  const { lockDataFolder } = await import('../studio/lock');
  return lockDataFolder(dataDir);
}

/** The service the flags name: a remote /v1 (its key from --key or DROPSHOOT_API_KEY) or the embedded core. */
function serviceOf(
  f: { remote?: string | boolean; key?: string | boolean },
  storage: EmbeddedStorage = {},
): ServiceChoice {
  if (typeof f.remote !== 'string') return { mode: 'embedded', providerKeys: {}, storage };
  const apiKey = typeof f.key === 'string' ? f.key : process.env.DROPSHOOT_API_KEY;
  if (!apiKey)
    throw new UsageError('--remote needs --key KEY (or DROPSHOOT_API_KEY in the environment)');
  return { mode: 'remote', baseUrl: f.remote, apiKey };
}

async function openClient(
  f: { remote?: string | boolean; key?: string | boolean },
  dataDir: string,
  storage: EmbeddedStorage = {},
) {
  const service = serviceOf(f, storage);
  const { openServiceClient } = await import('../client/open');
  return openServiceClient(dataDir, service);
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
    'daily-cap': { type: 'string' },
    wait: { type: 'boolean' },
    uncertain: { type: 'string' },
    'give-up-after': { type: 'string' },
    database: { type: 'string' },
    blobs: { type: 'string' },
  });
  const giveUpAfter = f['give-up-after'];
  // Minutes, fractions allowed (0.5 = 30 s): a short bound suits a scripted check.
  if (giveUpAfter !== undefined && !/^(?:\d+\.?\d*|\.\d+)$/.test(giveUpAfter))
    throw new UsageError('--give-up-after must be a number of minutes, e.g. 30');
  const giveUpAfterMs = giveUpAfter === undefined ? undefined : Number(giveUpAfter) * 60_000;
  if (giveUpAfterMs === 0) throw new UsageError('--give-up-after must be more than 0');
  const maxDiamonds = integer(f['max-diamonds'], 'max-diamonds');
  const dailyCap = integer(f['daily-cap'], 'daily-cap');
  if (dailyCap !== undefined && dailyCap < 1)
    throw new UsageError('--daily-cap must be at least 1');
  const uncertain = f.uncertain;
  if (uncertain !== undefined && uncertain !== 'resubmit' && uncertain !== 'fail')
    throw new UsageError('--uncertain takes resubmit or fail');
  if (maxDiamonds !== undefined && maxDiamonds < 1)
    throw new UsageError('--max-diamonds must be at least 1');
  const inDir = path.resolve(required(f.in, 'in'));
  const outDir = path.resolve(required(f.out, 'out'));
  const recipeFile = required(f.recipe, 'recipe');
  const fs = await import('node:fs');
  if (!fs.existsSync(inDir) || !fs.statSync(inDir).isDirectory())
    throw new UsageError(`--in ${inDir} is not a folder; give the folder of photos`);
  const { isInside, realLocation } = await import('../studio/folder-paths');
  const realIn = realLocation(inDir);
  const realOut = realLocation(outDir);
  // Exports under --in would come back as new photos on the next run, each paid for again.
  if (realOut === realIn || isInside(realOut, realIn))
    throw new UsageError(
      `--out ${outDir} is inside --in ${inDir}: the next run would take the exported files as new photos and pay for them again. Pick an output folder outside ${inDir}`,
    );
  const { RecipeSchema } = await import('../shared/studio');
  if (!fs.existsSync(recipeFile) || !fs.statSync(recipeFile).isFile())
    throw new UsageError(
      `--recipe ${recipeFile} is not a file; give a recipe such as resources/samples/recipes/cutout-amazon.json`,
    );
  let recipeJson: unknown;
  try {
    recipeJson = JSON.parse(fs.readFileSync(recipeFile, 'utf8'));
  } catch (err) {
    throw new UsageError(
      `--recipe ${recipeFile} is not valid JSON (${err instanceof Error ? err.message : String(err)}); fix the file`,
    );
  }
  const recipe = RecipeSchema.safeParse(recipeJson);
  if (!recipe.success) {
    const issue = recipe.error.issues[0];
    throw new UsageError(
      `--recipe: ${issue ? `${issue.path.join('.') || 'recipe'}: ${issue.message}` : 'invalid'}`,
    );
  }
  const concurrency = integer(f.concurrency, 'concurrency');
  const storage = await embeddedStorageOf(f);
  const dataDir = dataDirOf(f);
  const interrupt = stopOnSignal();
  const unlock = await lockFirst(dataDir);
  try {
    const client = await openClient(f, dataDir, storage);
    try {
      const { StudioEngine } = await import('../studio/engine');
      const { runBatch, checkBeforeRun, unreachableSummary } = await import('../studio/run-batch');
      const { prepareForUpload } = await import('../studio/prepare');
      const apiKey =
        typeof f.remote === 'string'
          ? typeof f.key === 'string'
            ? f.key
            : process.env.DROPSHOOT_API_KEY
          : undefined;
      const engine = new StudioEngine({
        dataDir,
        client,
        prepareUpload: prepareForUpload,
        ...(concurrency ? { concurrency } : {}),
        ...(dailyCap ? { dailyCap } : {}),
        ...(apiKey ? { apiKey } : {}),
      });
      try {
        // Photos under an earlier run's (or a hot folder's) output are exports: paid for again.
        const { onExportsProblem } = await import('../studio/folders');
        const onExports = onExportsProblem(engine.db, realIn);
        if (onExports) throw new UsageError(`--in: ${onExports}`);
        const requestsBefore = engine.spending.requestsUsedToday();
        const onNotice = (line: string) => process.stderr.write(`dropshoot: ${line}\n`);
        // A service that does not answer the check (reset, refused, 5xx) is asked again briefly;
        // if it still does not, the run ends with its summary saying so.
        const check = await checkBeforeRun(engine, recipe.data, { signal: interrupt.signal });
        if (check.kind === 'invalid') throw new Error(`recipe: ${check.problem}`);
        const summary =
          check.kind === 'unreachable'
            ? await unreachableSummary(engine, {
                inDir,
                recipe: recipe.data,
                outDir,
                reason: check.reason,
                apiRequests: engine.spending.requestsUsedToday() - requestsBefore,
                onNotice,
              })
            : await runBatch(engine, {
                inDir,
                recipe: recipe.data,
                outDir,
                signal: interrupt.signal,
                // The recipe check's request counts too (the service counted it).
                requestsBefore,
                ...(maxDiamonds !== undefined ? { maxDiamonds } : {}),
                ...(uncertain === 'resubmit' || uncertain === 'fail' ? { uncertain } : {}),
                ...(f.wait === true ? { wait: true } : {}),
                ...(giveUpAfterMs !== undefined ? { giveUpAfterMs } : {}),
                onNotice,
              });
        print(summary);
        process.exitCode = interrupt.signal.aborted
          ? exitCodeOf(interrupt.signal.reason)
          : summary.exported + summary.skipped === summary.photos
            ? 0
            : 1;
      } finally {
        if (interrupt.signal.aborted) {
          // The unfinished batch's wait still reads the studio database on a timer: the core
          // closes first, then the engine (stopped already), and the process ends in that tick.
          await client.close();
          await engine.close();
          unlock();
          process.exit(process.exitCode ?? exitCodeOf(interrupt.signal.reason));
        }
        await engine.close();
      }
    } finally {
      await client.close();
    }
  } finally {
    unlock();
  }
}

const exitCodeOf = (signal: unknown): number =>
  signal === 'SIGTERM' ? 143 : signal === 'SIGHUP' ? 129 : 130;

/**
 * Ctrl-C or SIGTERM: the batch stops at a safe point (the next run resumes it) and prints its
 * summary; a second signal ends the process at once (the journal makes that safe too).
 */
function stopOnSignal(): AbortController {
  const interrupt = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupt.signal.aborted) {
      process.stderr.write(
        `dropshoot: ${signal} again: stopping now; run the same command again to go on.\n`,
      );
      process.exit(exitCodeOf(signal));
    }
    process.stderr.write(
      `dropshoot: ${signal}: stopping at a safe point and printing the summary (${signal} again stops at once).\n`,
    );
    interrupt.abort(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return interrupt;
}

async function studio(args: string[]): Promise<void> {
  const f = flags(args, {
    data: { type: 'string' },
    port: { type: 'string' },
    remote: { type: 'string' },
    key: { type: 'string' },
    'settle-ms': { type: 'string' },
    'daily-cap': { type: 'string' },
    database: { type: 'string' },
    blobs: { type: 'string' },
  });
  const port = integer(f.port, 'port') ?? 5170;
  const settleMs = integer(f['settle-ms'], 'settle-ms');
  const dailyCap = integer(f['daily-cap'], 'daily-cap');
  if (dailyCap !== undefined && dailyCap < 1)
    throw new UsageError('--daily-cap must be at least 1');
  const dataDir = dataDirOf(f);
  const service = serviceOf(f, await embeddedStorageOf(f));
  const log = (message: string) => process.stderr.write(`${message}\n`);
  // The same host the desktop app's engine process opens: lock, service client, studio.
  const { openStudioHost } = await import('../studio/host/open-host');
  // The cap saved from the browser's Settings screen, unless --daily-cap says otherwise.
  const { readStudioSettings, studioSettingsPort } =
    await import('../studio/host/studio-settings-file');
  const cap = dailyCap ?? readStudioSettings(dataDir).dailyCap;
  const host = await openStudioHost(
    {
      dataDir,
      service,
      ...(settleMs !== undefined ? { settleMs } : {}),
      ...(cap !== undefined ? { dailyCap: cap } : {}),
    },
    log,
  );
  const { buildStudioWeb } = await import('../studio/web');
  const uiDir = path.resolve(import.meta.dirname, '../../out/renderer');
  const settings = studioSettingsPort(dataDir, {
    dailyCapFromFlag: dailyCap ?? null,
    env: process.env,
  });
  const app = buildStudioWeb({
    engine: host.studio.engine,
    commands: host.studio.commands,
    uiDir,
    settings,
  });
  await app.listen({ host: '127.0.0.1', port });
  const address = app.server.address();
  print({
    studio: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}`,
  });
  const stop = () => {
    void app
      .close()
      .then(() => host.close())
      .then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(USAGE);
    return;
  }
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
      throw new UsageError(
        command
          ? `unknown command '${command}'; the commands are run, studio, generate, serve and admin`
          : 'missing command: give run, studio, generate, serve or admin',
      );
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) {
    process.stderr.write(`dropshoot: ${err.message}; see \`dropshoot --help\` for usage.\n`);
    process.exit(2);
  }
  const message = err instanceof AdminError || err instanceof Error ? err.message : String(err);
  process.stderr.write(`dropshoot: ${message}\n`);
  process.exit(1);
});
