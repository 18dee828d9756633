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

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return serve(rest);
    case 'admin':
      return admin(rest[0], rest.slice(1));
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
