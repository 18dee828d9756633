/**
 * PostgreSQL connection URLs: checked before use, and never shown with their credentials. Every
 * message that may carry the URL or its password (parse errors, driver errors) goes through
 * `scrubSecrets` before it leaves this folder.
 */
import { z } from 'zod';

export class DatabaseUrlInvalid extends Error {
  override name = 'DatabaseUrlInvalid';
}

/** Wraps a driver error with the credentials taken out of its message and stack. */
export class DatabaseUnavailable extends Error {
  override name = 'DatabaseUnavailable';
  constructor(
    message: string,
    /** The driver's SQLSTATE (e.g. `28P01` bad password, `3D000` no such database), when it gave one. */
    readonly code?: string,
    /**
     * Lost on COMMIT: the server may have committed before the connection went, so the caller
     * must look before it says the transaction's writes (a charge) did not happen.
     */
    readonly commitOutcomeUnknown = false,
  ) {
    super(message);
  }
}

const postgresUrl = z
  .string()
  .trim()
  .min(1, 'the database URL is empty')
  .transform((text, ctx) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      ctx.addIssue({
        code: 'custom',
        message: 'not a URL (expected postgres://user:password@host:port/database)',
      });
      return z.NEVER;
    }
    if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
      ctx.addIssue({
        code: 'custom',
        message: `scheme ${url.protocol} is not postgres:// or postgresql://`,
      });
      return z.NEVER;
    }
    if (url.hostname === '' && !url.searchParams.has('host')) {
      ctx.addIssue({
        code: 'custom',
        message: 'no host (expected postgres://user:password@host:port/database)',
      });
      return z.NEVER;
    }
    if (url.pathname.replace(/^\//, '') === '') {
      ctx.addIssue({
        code: 'custom',
        message: 'no database name (expected postgres://…/database)',
      });
      return z.NEVER;
    }
    return url;
  });

export type PostgresTarget = {
  /** The URL as given, for the driver only: never print it. */
  connectionString: string;
  /** The same URL with its password masked, safe for logs and messages. */
  redacted: string;
  /** The literal strings that must never appear in output (password, raw and decoded). */
  secrets: readonly string[];
};

/** Parses a `postgres://` URL; throws DatabaseUrlInvalid with a message free of credentials. */
export function parsePostgresUrl(text: string): PostgresTarget {
  const secrets = secretsOf(text);
  const parsed = postgresUrl.safeParse(text);
  if (!parsed.success) {
    const reason = parsed.error.issues.map((issue) => issue.message).join('; ');
    throw new DatabaseUrlInvalid(
      scrubSecrets(`database URL ${redactUrl(text)} is invalid: ${reason}`, secrets),
    );
  }
  return { connectionString: text.trim(), redacted: redactUrl(text), secrets };
}

/** The URL with its password (and any `password=` parameter) replaced by `***`. */
export function redactUrl(text: string): string {
  try {
    const url = new URL(text.trim());
    if (url.password !== '') url.password = '***';
    if (url.searchParams.has('password')) url.searchParams.set('password', '***');
    return url.toString();
  } catch {
    // Unparsable: keep only what cannot be a credential.
    const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(text.trim())?.[0] ?? '';
    return `${scheme}//(unparsable)`;
  }
}

function secretsOf(text: string): string[] {
  const found = new Set<string>();
  const add = (value: string | null | undefined) => {
    if (value && value.length >= 1) found.add(value);
  };
  try {
    const url = new URL(text.trim());
    add(url.password);
    add(safeDecode(url.password));
    add(url.searchParams.get('password'));
  } catch {
    // `user:password@` in something URL-like that did not parse.
    const userinfo = /^[a-z][a-z0-9+.-]*:\/\/[^/@:]*:([^/@]*)@/i.exec(text.trim());
    add(userinfo?.[1]);
    add(safeDecode(userinfo?.[1] ?? ''));
  }
  return [...found].sort((a, b) => b.length - a.length);
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** Replaces every occurrence of each secret with `***`. */
export function scrubSecrets(message: string, secrets: readonly string[]): string {
  let out = message;
  for (const secret of secrets) out = out.split(secret).join('***');
  return out;
}

/** A driver error as DatabaseUnavailable, its message and stack scrubbed of the target's secrets. */
export function scrubbedError(
  err: unknown,
  target: PostgresTarget,
  doing: string,
  commitOutcomeUnknown = false,
): DatabaseUnavailable {
  const raw = err instanceof Error ? err.message : String(err);
  const code =
    typeof (err as { code?: unknown })?.code === 'string'
      ? (err as { code: string }).code
      : undefined;
  const wrapped = new DatabaseUnavailable(
    scrubSecrets(`${doing} (${target.redacted}): ${raw || 'no reason given'}`, target.secrets),
    code,
    commitOutcomeUnknown,
  );
  return wrapped;
}
