/**
 * The serve logger's cheap per-request parts (src/server/logging.ts): Fastify's request logger
 * is bound to the request id only when it writes, the request line skips redaction yet still
 * passes the secret mask (and, built by hand, is the line pino writes), lines are batched in
 * order, and flushing reaches the destination.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import {
  createLogger,
  isoTimeEachMs,
  lazyRequestLogger,
  LineBatch,
  maskingStream,
  requestLineLogger,
  requestLineWriter,
} from '../../src/server/logging';

const SECRET = 'aws-secret-value-1234567890';

function captured() {
  const lines: string[] = [];
  const logger = createLogger({
    target: { write: (line: string) => lines.push(line) },
    env: { AWS_SECRET_ACCESS_KEY: SECRET },
  });
  const parsed = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { logger, lines, parsed };
}

describe('lazyRequestLogger', () => {
  it('writes lines bound to the request id, through children too, and nothing below the level', () => {
    const { logger, parsed } = captured();
    const log = lazyRequestLogger(logger, { requestId: 'req-1' });
    log.debug('not at info level');
    log.error({ code: 'E1' }, 'failed');
    log.child({ part: 'body' }).warn('late');
    expect(parsed()).toEqual([
      expect.objectContaining({ requestId: 'req-1', code: 'E1', msg: 'failed', level: 50 }),
      expect.objectContaining({ requestId: 'req-1', part: 'body', msg: 'late', level: 40 }),
    ]);
    expect(log.level).toBe('info');
  });

  it('keeps the redaction of the logger it binds', () => {
    const { logger, lines } = captured();
    lazyRequestLogger(logger, { requestId: 'req-2' }).error(
      { req: { headers: { authorization: 'Bearer sk_live_abc' } } },
      'with headers',
    );
    expect(lines.join('')).not.toContain('sk_live_abc');
    expect(lines.join('')).toContain('[redacted]');
  });
});

describe('requestLineLogger', () => {
  it('writes the fields as given, with the secret mask still applied', () => {
    const { logger, parsed, lines } = captured();
    requestLineLogger(logger).info(
      { requestId: 'req-3', method: 'GET', url: `/v1/x?k=${SECRET}`, status: 200, ms: 1 },
      'request',
    );
    expect(parsed()).toEqual([
      expect.objectContaining({
        requestId: 'req-3',
        method: 'GET',
        url: '/v1/x?k=[redacted]',
        status: 200,
        msg: 'request',
      }),
    ]);
    expect(lines.join('')).not.toContain(SECRET);
  });
});

describe('maskingStream', () => {
  it('passes flush on to the destination', () => {
    let flushed = 0;
    const stream = maskingStream({ write: () => undefined, flush: (cb) => (flushed++, cb?.()) }, [
      SECRET,
    ]) as { flush?: (cb?: () => void) => void };
    let called = false;
    stream.flush?.(() => (called = true));
    expect([flushed, called]).toEqual([1, true]);
  });
});

describe('isoTimeEachMs', () => {
  it("writes pino's ISO time field, for the current millisecond", async () => {
    for (let i = 0; i < 3; i++) {
      const before = Date.now();
      const field = isoTimeEachMs();
      const after = Date.now();
      const match = /^,"time":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)"$/.exec(field);
      expect(match).not.toBeNull();
      const at = Date.parse(match![1]!);
      expect(at).toBeGreaterThanOrEqual(before);
      expect(at).toBeLessThanOrEqual(after);
      await new Promise((r) => setTimeout(r, 5));
    }
  });
});

describe('requestLineWriter', () => {
  /** A request as node:http hands it over, as far as the line reads it. */
  const request = (url: string, method: string | undefined, id: string | undefined) =>
    ({ url, method, headers: id === undefined ? {} : { 'x-request-id': id } }) as IncomingMessage;
  const withoutTime = (line: string) => line.replace(/,"time":"[^"]*"/, '');

  it("writes, for createLogger's loggers, the very line pino writes for the same fields", () => {
    const { logger, lines } = captured();
    const write = requestLineWriter(logger);
    const long = `/v1/generations/${'x'.repeat(300)}`;
    const cases: [string, string | undefined, string | undefined, number, number][] = [
      ['/v1/generations/job_1', 'GET', 'req-4', 200, 0.4],
      ['/v1/a?q="quoted"\\back\u0001\u001f\u00e9\u2028', 'POST', 'id/with+=:@.', 404, 12.5],
      [long, undefined, undefined, 500, Number.NaN],
    ];
    for (const [url, method, id, status, ms] of cases) {
      write(request(url, method, id), status, ms);
      requestLineLogger(logger).info(
        {
          requestId: id,
          method,
          url: url.length > 256 ? `${url.slice(0, 256)}…` : url,
          status,
          ms: Math.round(ms),
        },
        'request',
      );
    }
    expect(lines).toHaveLength(6);
    for (let i = 0; i < 6; i += 2) {
      expect(withoutTime(lines[i]!)).toBe(withoutTime(lines[i + 1]!));
      expect(lines[i]).toMatch(/^\{"level":30,"time":"[^"]+","pid":\d+,/);
      expect(lines[i]!.endsWith('}\n')).toBe(true);
      JSON.parse(lines[i]!);
    }
  });

  it('keeps the secret mask and the level', () => {
    const { logger, lines } = captured();
    const write = requestLineWriter(logger);
    write(request(`/v1/x?k=${SECRET}`, 'GET', 'req-5'), 200, 1);
    logger.level = 'warn';
    write(request('/v1/y', 'GET', 'req-6'), 200, 1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('/v1/x?k=[redacted]');
    expect(lines[0]).not.toContain(SECRET);
  });

  it('writes through pino for a logger it did not make (its format is not known)', () => {
    const lines: string[] = [];
    const other = pino({ base: null, timestamp: false }, { write: (l: string) => lines.push(l) });
    requestLineWriter(other)(request('/v1/z', 'GET', 'req-7'), 201, 2);
    expect(lines).toEqual([
      '{"level":30,"requestId":"req-7","method":"GET","url":"/v1/z","status":201,"ms":2,"msg":"request"}\n',
    ]);
  });
});

describe('LineBatch', () => {
  it('hands lines on in one write once enough wait, on flush, and keeps their order', () => {
    const writes: string[] = [];
    let flushed = 0;
    const batch = new LineBatch(
      {
        write: (chunk: string) => writes.push(chunk),
        flush: (cb) => (flushed++, cb?.()),
        flushSync: () => undefined,
      },
      10,
      60_000,
    );
    batch.write('abcd\n');
    expect(writes).toEqual([]);
    batch.write('efgh\n');
    expect(writes).toEqual(['abcd\nefgh\n']);
    batch.write('ij\n');
    let called = false;
    batch.flush(() => (called = true));
    expect([writes, flushed, called]).toEqual([['abcd\nefgh\n', 'ij\n'], 1, true]);
  });

  it('writes what waits within its interval', async () => {
    const writes: string[] = [];
    const batch = new LineBatch(
      { write: (c: string) => writes.push(c), flush: () => undefined, flushSync: () => undefined },
      1_000,
      20,
    );
    batch.write('one\n');
    expect(writes).toEqual([]);
    await vi.waitFor(() => expect(writes).toEqual(['one\n']), { timeout: 2_000, interval: 10 });
  });
});

describe('batchedStderr', () => {
  /** Runs a process that logs `count` lines through createLogger, then exits (`flush`: after logger.flush). */
  function logThenExit(count: number, flush: boolean): string[] {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'batched-stderr-'));
    try {
      const script = path.join(dir, 'exit.mts');
      const logging = path.resolve(import.meta.dirname, '../../src/server/logging.ts');
      fs.writeFileSync(
        script,
        `const { createLogger } = await import(${JSON.stringify(logging)});\n` +
          `const log = createLogger({ env: {} });\n` +
          `for (let i = 0; i < ${count}; i++) log.info('line ' + i);\n` +
          (flush ? `log.flush(() => process.exit(0));\n` : `process.exit(0);\n`),
      );
      const run = spawnSync(process.execPath, ['--import', 'tsx', script], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(run.status, run.stderr).toBe(0);
      return run.stderr
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { msg: string }).msg);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i}`);

  it('writes the lines still waiting when the process exits without a flush (process.exit)', () => {
    // Fewer than one batch: none is written before the exit, LineBatch's exit hook writes them.
    expect(logThenExit(100, false)).toEqual(numbered(100));
  });

  it('writes every line, in order, on logger.flush (how serve stops)', () => {
    // Several batches: some are written while the others wait.
    expect(logThenExit(2000, true)).toEqual(numbered(2000));
  });
});
