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
  return pino.destination({
    dest: 2,
    sync: false,
    minLength: 32 * 1024,
    maxWrite: 64 * 1024,
    periodicFlush: 100,
  });
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
  return pino(
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
}

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
  return (req, status, ms) => {
    const url = req.url ?? '';
    lines.info(
      {
        requestId: req.headers['x-request-id'],
        method: req.method,
        url: url.length > 256 ? `${url.slice(0, 256)}…` : url,
        status,
        ms: Math.round(ms),
      },
      'request',
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
