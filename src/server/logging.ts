/**
 * Structured JSON logs (pino) for `serve`: one line per request with its request id, plus the
 * core's own messages. Secrets never reach the output: no request headers are logged, and the
 * values of secret-looking environment variables are masked in every line as a last guard.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import pino, {
  type Bindings,
  type ChildLoggerOptions,
  type DestinationStream,
  type Logger,
} from 'pino';

export type { Logger } from 'pino';

/** What a client may send as `x-request-id`; anything else is replaced (no log injection). */
const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && REQUEST_ID.test(value) ? value : randomUUID();
}

/** Values of variables named like credentials (AWS secrets, provider keys, passwords). */
export function secretValues(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env)
    .filter(
      ([name, value]) =>
        /(SECRET|KEY|TOKEN|PASSWORD|CREDENTIALS)/i.test(name) &&
        value !== undefined &&
        value.length >= 8,
    )
    .filter(([name]) => name !== 'AWS_ACCESS_KEY_ID') // an identifier, useful when reading logs
    .map(([, value]) => value!);
}

type Target = { write(chunk: string): unknown; flush?(cb?: (err?: Error) => void): void };

/** A destination that masks `secrets` in each line before writing it. */
export function maskingStream(target: Target, secrets: readonly string[]): DestinationStream {
  if (secrets.length === 0) return target as DestinationStream;
  return {
    write(line: string) {
      let out = line;
      for (const secret of secrets)
        if (out.includes(secret)) out = out.split(secret).join('[redacted]');
      target.write(out);
    },
    // logger.flush(cb) reaches the target (pino calls the destination's flush when it has one).
    ...(target.flush ? { flush: (cb?: (err?: Error) => void) => target.flush!(cb) } : {}),
  } as DestinationStream;
}

/**
 * stderr, written in batches: a write per line (a system call per request) cost about a tenth
 * of a poll's time. Lines are written once 32 KiB wait or within 100 ms, and at exit.
 */
export function batchedStderr(): Target {
  // minLength 1: sonic-boom writes each batch it is given at once, and its flush(cb) still
  // waits for the writes under way (with 0 it would call back at once).
  const stderr = pino.destination({ dest: 2, sync: false, minLength: 1, maxWrite: 64 * 1024 });
  return new LineBatch(stderr, 32 * 1024, 100);
}

type Destination = Target & { flush(cb?: (err?: Error) => void): void; flushSync(): void };

/**
 * Gathers lines and hands them to `destination` in one string once `minChars` wait, every
 * `everyMs`, on flush and at exit. The batching is done here, not by sonic-boom's minLength:
 * that one measures its whole pending buffer (Buffer.byteLength of up to 64 KiB) on every line,
 * about a tenth of a poll's CPU time.
 */
export class LineBatch implements Target {
  private lines: string[] = [];
  private chars = 0;

  constructor(
    private readonly destination: Destination,
    private readonly minChars: number,
    everyMs: number,
  ) {
    setInterval(() => this.release(), everyMs).unref();
    process.once('exit', () => {
      if (this.release()) this.destination.flushSync();
    });
  }

  write(line: string): boolean {
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= this.minChars) this.release();
    return true;
  }

  flush(cb?: (err?: Error) => void): void {
    this.release();
    this.destination.flush(cb);
  }

  /** Hands the waiting lines on; false when there were none. */
  private release(): boolean {
    if (this.lines.length === 0) return false;
    const batch = this.lines.join('');
    this.lines = [];
    this.chars = 0;
    this.destination.write(batch);
    return true;
  }
}

let formattedMs = NaN;
let formatted = '';
/** pino's isoTime, formatted once per millisecond: at load, many lines share one. */
export function isoTimeEachMs(): string {
  const ms = Date.now();
  if (ms !== formattedMs) {
    formattedMs = ms;
    formatted = `,"time":"${new Date(ms).toISOString()}"`;
  }
  return formatted;
}

/** The `serve` logger: JSON lines to `target` (stderr by default; stdout carries the CLI's answers). */
export function createLogger(
  opts: {
    level?: string;
    target?: Target;
    env?: NodeJS.ProcessEnv;
  } = {},
): Logger {
  const target = opts.target ?? batchedStderr();
  const logger = pino(
    {
      level: opts.level ?? 'info',
      base: { pid: process.pid },
      timestamp: isoTimeEachMs,
      // Belt and braces: request objects are not logged, but if one ever is, these stay out.
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'headers.authorization',
          '*.apiKey',
          '*.secretAccessKey',
        ],
        censor: '[redacted]',
      },
    },
    maskingStream(target, secretValues(opts.env ?? process.env)),
  );
  madeHere.add(logger);
  return logger;
}

/** Loggers createLogger made: their line format is known (requestLineWriter writes it itself). */
const madeHere = new WeakSet<Logger>();

/**
 * The logger of the one line written per request: its fields are ours (method, path, status,
 * time, a checked request id), never a header or a body, so it skips the redaction every line of
 * `logger` pays for (a pass over each field); the masking stream still applies.
 */
export function requestLineLogger(logger: Logger): Logger {
  return logger.child({}, { redact: [] });
}

/** Writes the line of one answered request (its id is the x-request-id the server set). */
export type RequestLine = (req: IncomingMessage, status: number, ms: number) => void;

export function requestLineWriter(logger: Logger): RequestLine {
  const lines = requestLineLogger(logger);
  const url = (req: IncomingMessage) => {
    const u = req.url ?? '';
    return u.length > 256 ? `${u.slice(0, 256)}…` : u;
  };
  if (!madeHere.has(logger)) {
    return (req, status, ms) =>
      lines.info(
        {
          requestId: req.headers['x-request-id'],
          method: req.method,
          url: url(req),
          status,
          ms: Math.round(ms),
        },
        'request',
      );
  }
  // The line pino writes for lines.info({...}, 'request') from createLogger's options (level
  // number, isoTimeEachMs, the bindings, then the fields in order), built here: pino's general
  // path (a pass over an object, each string escaped a character at a time) was about a tenth of
  // a plain poll's CPU time. Same stream, so the secret mask still applies.
  const level = lines.levels.values.info!;
  const head = `{"level":${level}`;
  const stream = (lines as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym]!;
  const bindings = lines as unknown as Record<symbol, string>;
  return (req, status, ms) => {
    if (lines.levelVal > level) return;
    const id = req.headers['x-request-id'];
    const rounded = Math.round(ms);
    stream.write(
      `${head}${isoTimeEachMs()}${bindings[pino.symbols.chindingsSym]}` +
        `${id === undefined ? '' : `,"requestId":${JSON.stringify(id)}`}` +
        `${req.method === undefined ? '' : `,"method":${JSON.stringify(req.method)}`}` +
        `,"url":${JSON.stringify(url(req))},"status":${status},` +
        `"ms":${Number.isFinite(rounded) ? rounded : null},"msg":"request"}\n`,
    );
  };
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * Fastify's per-request logger (`request.log`): the child bound to the request id is made when
 * Fastify first writes a line for the request (an error, rarely), not for every request.
 */
class LazyRequestLogger {
  private made: Logger | undefined;
  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
  ) {}

  get level(): string {
    return (this.made ?? this.parent).level;
  }
  set level(level: string) {
    this.bound().level = level;
  }
  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(): void {}
  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.bound().child(bindings, options);
  }

  private bound(): Logger {
    return (this.made ??= this.parent.child(this.bindings));
  }
  private write(level: Level, args: unknown[]): void {
    // Below the level, no child is made for nothing.
    if (!(this.made ?? this.parent).isLevelEnabled(level)) return;
    // pino's LogFn is overloaded; the arguments go through unchanged.
    (this.bound()[level] as (...a: unknown[]) => void)(...args);
  }
}

/** See LazyRequestLogger. */
export function lazyRequestLogger(parent: Logger, bindings: Bindings): FastifyBaseLogger {
  return new LazyRequestLogger(parent, bindings);
}
