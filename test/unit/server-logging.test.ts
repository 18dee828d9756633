/**
 * The serve logger's cheap per-request parts (src/server/logging.ts): Fastify's request logger
 * is bound to the request id only when it writes, the request line skips redaction yet still
 * passes the secret mask, and flushing reaches the destination.
 */
import { describe, expect, it } from 'vitest';
import {
  createLogger,
  isoTimeEachMs,
  lazyRequestLogger,
  maskingStream,
  requestLineLogger,
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
