/**
 * Structured JSON logs (pino) for `serve`: one line per request with its request id, plus the
 * core's own messages. Secrets never reach the output: no request headers are logged, and the
 * values of secret-looking environment variables are masked in every line as a last guard.
 */
import { randomUUID } from 'node:crypto';
import pino, { type DestinationStream, type Logger } from 'pino';

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

/** A destination that masks `secrets` in each line before writing it. */
export function maskingStream(
  target: { write(chunk: string): unknown },
  secrets: readonly string[],
): DestinationStream {
  if (secrets.length === 0) return target as DestinationStream;
  return {
    write(line: string) {
      let out = line;
      for (const secret of secrets)
        if (out.includes(secret)) out = out.split(secret).join('[redacted]');
      target.write(out);
    },
  };
}

/** The `serve` logger: JSON lines to `target` (stderr by default; stdout carries the CLI's answers). */
export function createLogger(
  opts: {
    level?: string;
    target?: { write(chunk: string): unknown };
    env?: NodeJS.ProcessEnv;
  } = {},
): Logger {
  const target = opts.target ?? pino.destination({ dest: 2, sync: false });
  return pino(
    {
      level: opts.level ?? 'info',
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
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
