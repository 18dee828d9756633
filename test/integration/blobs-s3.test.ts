/**
 * Blob storage chosen by configuration (issue 14, step 1): uploads and results in an
 * S3-compatible bucket (s3rver on loopback), served through `serve` at the same unguessable URLs,
 * orphans swept from the bucket, credentials never shown; the embedded default unchanged.
 * Also /healthz, /readyz, request ids and JSON logs without secrets, and draining on close.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCore } from '../../src/core';
import { parseBlobsUrl, BlobsUrlError } from '../../src/core/media/blobs-url';
import { startServer, type RunningServer } from '../../src/server';
import type { HttpTimeouts } from '../../src/server/app';
import { createLogger } from '../../src/server/logging';
import { Api, expectSuccess, makeTempDir, removeDir, request } from './helpers/api';
import { garmentPng, isPng } from './helpers/images';
import { createAccount, runCli, spawnServe, stopServe, type ServeProcess } from './helpers/cli';
import { startTestS3, type TestS3 } from './helpers/s3';

const BUCKET = 'dropshoot-blobs';
const SPARE = 'dropshoot-sweep';
let s3: TestS3;

beforeAll(async () => {
  s3 = await startTestS3([BUCKET, SPARE]);
});
afterAll(async () => {
  await s3?.close();
});

type Started = {
  server: RunningServer;
  api: (key: string) => Api;
  apiKey: string;
  dataDir: string;
  logs: string[];
};

/** A server on S3 blobs with a fresh account (made through the core, before the server starts). */
async function startOnS3(
  opts: {
    bucket?: string;
    prefix?: string;
    accessKeyId?: string;
    secret?: string;
    timeouts?: Partial<HttpTimeouts>;
  } = {},
): Promise<Started> {
  const dataDir = makeTempDir('blobs-s3-');
  const blobsUrl = s3.blobsUrl(opts.bucket ?? BUCKET, opts.prefix);
  const setup = await openCore({ dataDir, blobsUrl, resumeJobs: false });
  const { apiKey } = await setup.admin.createAccount({ email: 's3@example.test', diamonds: 50 });
  await setup.close();
  const logs: string[] = [];
  const previous = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
  if (opts.accessKeyId) process.env.AWS_ACCESS_KEY_ID = opts.accessKeyId;
  if (opts.secret) process.env.AWS_SECRET_ACCESS_KEY = opts.secret;
  try {
    const logger = createLogger({ target: { write: (line: string) => logs.push(line) } });
    const server = await startServer({
      dataDir,
      blobsUrl,
      host: '127.0.0.1',
      port: 0,
      logger,
      log: (m) => logger.info(m),
      ...(opts.timeouts ? { timeouts: opts.timeouts } : {}),
    });
    return { server, api: (key) => new Api(server.url, key), apiKey, dataDir, logs };
  } finally {
    process.env.AWS_ACCESS_KEY_ID = previous.id;
    process.env.AWS_SECRET_ACCESS_KEY = previous.secret;
  }
}

async function stop(started: Started): Promise<void> {
  await started.server.close();
  removeDir(started.dataDir);
}

describe('blobs in an S3-compatible bucket', () => {
  let srv: Started;
  beforeAll(async () => {
    srv = await startOnS3({ prefix: 'team' });
  });
  afterAll(async () => {
    if (srv) await stop(srv);
  });

  it('stores an upload in the bucket under its hash, not on disk, and serves it at its public URL', async () => {
    const bytes = await garmentPng(200, 250);
    const url = await srv.api(srv.apiKey).uploadUrl(bytes);
    expect(url).toMatch(/\/files\/b_[A-Za-z0-9_-]+$/);
    const { createHash } = await import('node:crypto');
    const sha = createHash('sha256').update(bytes).digest('hex');
    expect(await s3.keys(BUCKET)).toContain(`team/${sha.slice(0, 2)}/${sha}`);
    expect(fs.existsSync(path.join(srv.dataDir, 'blobs', sha.slice(0, 2), sha))).toBe(false);

    const res = await fetch(url); // public: no Authorization
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('content-length')).toBe(String(bytes.length));
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('runs a generation from an uploaded image and serves its result from the bucket', async () => {
    const api = srv.api(srv.apiKey);
    const photo = await api.uploadUrl(await garmentPng(200, 250, '#20a040'));
    const before = new Set(await s3.keys(BUCKET));
    const id = await api.submit({ toolId: 'remove_background', images: { user_photo: photo } });
    const job = await api.waitForJob(id, 90_000);
    expect(job.status, String(job.errorMessage)).toBe('completed');
    const [resultUrl] = job.resultUrls as string[];
    expect(resultUrl).toMatch(/\/files\/r_[A-Za-z0-9_-]+$/);

    const res = await fetch(resultUrl!);
    expect(res.status).toBe(200);
    const result = Buffer.from(await res.arrayBuffer());
    expect(isPng(result)).toBe(true);
    const { createHash } = await import('node:crypto');
    const sha = createHash('sha256').update(result).digest('hex');
    const added = (await s3.keys(BUCKET)).filter((k) => !before.has(k));
    expect(added).toEqual([`team/${sha.slice(0, 2)}/${sha}`]);
    // The provider read its input from a scratch copy under --data, not from a blobs/ folder.
    expect(fs.existsSync(path.join(srv.dataDir, 'blobs'))).toBe(false);
    expect(fs.readdirSync(path.join(srv.dataDir, 'blob-scratch')).length).toBeGreaterThan(0);
  });

  it('answers 404 for unknown file ids and /readyz 200 with both checks ok', async () => {
    expect((await fetch(`${srv.server.url}/files/b_nope`)).status).toBe(404);
    const ready = await request(srv.server.url, 'GET', '/readyz', null);
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({
      success: true,
      status: 'ready',
      checks: { database: 'ok', blobs: 'ok' },
    });
  });
});

describe('orphan sweep on a bucket', () => {
  it('removes objects no row names and stray keys past the grace period, and keeps recorded ones', async () => {
    const dataDir = makeTempDir('blobs-sweep-');
    const blobsUrl = s3.blobsUrl(SPARE);
    try {
      let core = await openCore({ dataDir, blobsUrl, resumeJobs: false });
      const { apiKey } = await core.admin.createAccount({
        email: 'sweep@example.test',
        diamonds: 0,
      });
      expect((await core.service.upload(`Bearer ${apiKey}`, await garmentPng())).status).toBe(200);
      await core.close();
      const [kept] = await s3.keys(SPARE);
      expect(kept).toMatch(/^[0-9a-f]{2}\/[0-9a-f]{64}$/);

      const orphan = `ab/${'ab'.padEnd(64, '0')}`;
      await s3.put(SPARE, orphan, Buffer.alloc(1000, 1));
      await s3.put(SPARE, 'ab/leftover.123.tmp', Buffer.alloc(10, 2));

      // Within the default grace (1 h): possibly a request of another process between write and row.
      core = await openCore({ dataDir, blobsUrl, resumeJobs: false });
      await core.close();
      expect(await s3.keys(SPARE)).toEqual([kept, 'ab/leftover.123.tmp', orphan].sort());

      core = await openCore({ dataDir, blobsUrl, resumeJobs: false, orphanGraceMs: 0 });
      await core.close();
      expect(await s3.keys(SPARE)).toEqual([kept]);
    } finally {
      removeDir(dataDir);
    }
  });

  it('leaves the content of a refused upload to the sweep (another process may be recording it)', async () => {
    const dataDir = makeTempDir('blobs-refused-');
    const blobsUrl = s3.blobsUrl(SPARE, 'refused');
    try {
      const core = await openCore({ dataDir, blobsUrl, resumeJobs: false, storageQuotaBytes: 10 });
      const { apiKey } = await core.admin.createAccount({
        email: 'refused@example.test',
        diamonds: 0,
      });
      const refused = await core.service.upload(`Bearer ${apiKey}`, await garmentPng());
      expect(refused.status).toBe(413);
      expect(await core.store.blobs.recordedShas()).toEqual(new Set());
      expect((await s3.keys(SPARE)).filter((k) => k.startsWith('refused/'))).toHaveLength(1);
      expect(await core.blobs.sweepOrphans(0)).toMatchObject({ files: 1 });
      expect((await s3.keys(SPARE)).filter((k) => k.startsWith('refused/'))).toEqual([]);
      await core.close();
    } finally {
      removeDir(dataDir);
    }
  });
});

describe('credentials', () => {
  const SECRET = 'wrong-secret-do-not-show-7c1f9e';

  it('never shows the secret key: not in /readyz, not in a failed upload, not in the logs', async () => {
    // s3rver does not check SigV4 signatures, only the key id: an unknown id makes every call fail.
    const srv = await startOnS3({ accessKeyId: 'AKIAUNKNOWNTEST', secret: SECRET });
    try {
      const ready = await request(srv.server.url, 'GET', '/readyz', null);
      expect(ready.status).toBe(503);
      expect(ready.body.success).toBe(false);
      expect(ready.body.checks.database).toBe('ok');
      expect(ready.body.error).toMatch(
        /^Not ready: blobs unreachable: reaching the bucket on s3:\/\/dropshoot-blobs\//,
      );
      const upload = await srv.api(srv.apiKey).upload(await garmentPng());
      expect(upload.status).toBe(500);
      const everything = `${ready.text}\n${upload.text}\n${srv.logs.join('')}`;
      expect(everything).not.toContain(SECRET);
      expect(everything).not.toContain(srv.apiKey);
      // The failure was logged, as JSON, with what went wrong.
      expect(
        srv.logs.some((l) => l.includes('unexpected error') && l.includes('storing a blob')),
      ).toBe(true);
    } finally {
      await stop(srv);
    }
  });

  it('refuses credentials in the URL without echoing them, and a missing secret by naming the variables', async () => {
    let message = '';
    try {
      parseBlobsUrl(`s3://AKIAEXAMPLE:${SECRET}@bucket-name?forcePathStyle=true`);
    } catch (err) {
      expect(err).toBeInstanceOf(BlobsUrlError);
      message = (err as Error).message;
    }
    expect(message).toContain('AWS_SECRET_ACCESS_KEY');
    expect(message).not.toContain(SECRET);
    expect(() => parseBlobsUrl('s3://ab?forcePathStyle=true')).toThrow(/3-63/);
    expect(() => parseBlobsUrl('s3://bucket-name?endpoint=ftp://x')).toThrow(/endpoint/);
    expect(
      parseBlobsUrl(
        's3://bucket-name/a/b/?endpoint=http://127.0.0.1:9000&region=eu-west-1&forcePathStyle=true',
      ),
    ).toEqual({
      bucket: 'bucket-name',
      prefix: 'a/b/',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-1',
      forcePathStyle: true,
    });

    const saved = process.env.AWS_SECRET_ACCESS_KEY;
    delete process.env.AWS_SECRET_ACCESS_KEY;
    const dataDir = makeTempDir('blobs-nocreds-');
    try {
      await expect(
        openCore({ dataDir, blobsUrl: s3.blobsUrl(BUCKET), resumeJobs: false }),
      ).rejects.toThrow(
        'S3 blob storage needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment',
      );
    } finally {
      process.env.AWS_SECRET_ACCESS_KEY = saved;
      removeDir(dataDir);
    }
  });
});

describe('the embedded default (no --blobs)', () => {
  it('keeps files under <data>/blobs/ab/<sha256>, as before, and is ready', async () => {
    const dataDir = makeTempDir('blobs-local-');
    const setup = await openCore({ dataDir, resumeJobs: false });
    const { apiKey } = await setup.admin.createAccount({
      email: 'local@example.test',
      diamonds: 0,
    });
    await setup.close();
    const logs: string[] = [];
    const server = await startServer({
      dataDir,
      host: '127.0.0.1',
      port: 0,
      logger: createLogger({ target: { write: (l: string) => logs.push(l) } }),
    });
    try {
      const bytes = await garmentPng(120, 150);
      const url = await new Api(server.url, apiKey).uploadUrl(bytes);
      const { createHash } = await import('node:crypto');
      const sha = createHash('sha256').update(bytes).digest('hex');
      expect(fs.readFileSync(path.join(dataDir, 'blobs', sha.slice(0, 2), sha)).equals(bytes)).toBe(
        true,
      );
      expect(fs.existsSync(path.join(dataDir, 'blob-scratch'))).toBe(false);
      expect(Buffer.from(await (await fetch(url)).arrayBuffer()).equals(bytes)).toBe(true);
      const ready = await request(server.url, 'GET', '/readyz', null);
      expect(ready.status).toBe(200);
      expect(ready.body.checks).toEqual({ database: 'ok', blobs: 'ok' });
    } finally {
      await server.close();
      removeDir(dataDir);
    }
  });
});

describe('request ids and logs', () => {
  it('echoes a valid x-request-id, makes one otherwise, and logs one JSON line per request with it and without the key', async () => {
    const srv = await startOnS3();
    try {
      const api = srv.api(srv.apiKey);
      const given = await api.get('/v1/account', { headers: { 'x-request-id': 'client-req-42' } });
      expectSuccess(given, 200);
      expect(given.headers.get('x-request-id')).toBe('client-req-42');
      const made = await api.get('/v1/account');
      expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      const hostile = await api.get('/v1/account', {
        headers: { 'x-request-id': 'a"b\\n{"level":60}' },
      });
      expect(hostile.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      const health = await request(srv.server.url, 'GET', '/healthz', null);
      expect(health.status).toBe(200);

      const lines = srv.logs
        .join('')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const requests = lines.filter((l) => l.msg === 'request');
      expect(requests.find((l) => l.requestId === 'client-req-42')).toMatchObject({
        method: 'GET',
        url: '/v1/account',
        status: 200,
      });
      expect(requests.some((l) => l.requestId === made.headers.get('x-request-id'))).toBe(true);
      expect(srv.logs.join('')).not.toContain(srv.apiKey);
    } finally {
      await stop(srv);
    }
  });
});

describe('graceful shutdown', () => {
  it('finishes a request that is in flight when close starts, refuses new connections, and lets its connection go', async () => {
    // Kept-alive connections would hold close for 10 minutes here: the test times out unless drained.
    const srv = await startOnS3({ timeouts: { keepAliveMs: 600_000, idleMs: 600_000 } });
    try {
      const bytes = await garmentPng(160, 200, '#a02080');
      const { port } = new URL(srv.server.url);
      const socket = net.connect(Number(port), '127.0.0.1');
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
      const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      // Headers and half the body now, so the request is under way when close begins.
      socket.write(
        `POST /v1/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${srv.apiKey}\r\n` +
          `Content-Type: image/png\r\nContent-Length: ${bytes.length}\r\n\r\n`,
      );
      socket.write(bytes.subarray(0, bytes.length >> 1));
      await new Promise((r) => setTimeout(r, 200));
      let closed = false;
      const closing = srv.server.close().then(() => (closed = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(closed).toBe(false); // waiting for the upload
      await expect(fetch(`${srv.server.url}/healthz`)).rejects.toThrow(); // no new connections
      // Written, not ended: a client that half-closes its socket aborts its own request in Node.
      socket.write(bytes.subarray(bytes.length >> 1));
      await closing;
      await ended;
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      expect(answer).toContain('"success":true');
    } finally {
      removeDir(srv.dataDir);
    }
  });
});

describe('dropshoot serve --blobs', () => {
  it('serves uploads from the bucket, logs JSON lines with request ids on stderr, and stops cleanly on SIGTERM', async () => {
    const dataDir = makeTempDir('blobs-cli-');
    let proc: ServeProcess | undefined;
    try {
      const account = await createAccount(dataDir, 0);
      proc = await spawnServe(dataDir, ['--blobs', s3.blobsUrl(BUCKET, 'cli')]);
      const ready = await request(proc.url, 'GET', '/readyz', null);
      expect(ready.status).toBe(200);
      const bytes = await garmentPng(90, 110, '#3050f0');
      const url = await new Api(proc.url, account.apiKey).uploadUrl(bytes);
      expect((await s3.keys(BUCKET)).some((k) => k.startsWith('cli/'))).toBe(true);
      expect(
        Buffer.from(
          await (await fetch(url, { headers: { 'x-request-id': 'cli-download-1' } })).arrayBuffer(),
        ).equals(bytes),
      ).toBe(true);
      await stopServe(proc);
      expect(await proc.exited).toEqual({ code: 0, signal: null });
      const lines = proc
        .stderr()
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.find((l) => l.requestId === 'cli-download-1')).toMatchObject({
        msg: 'request',
        method: 'GET',
        status: 200,
      });
      expect(proc.stderr()).not.toContain(account.apiKey);
    } finally {
      if (proc) await stopServe(proc);
      removeDir(dataDir);
    }
  });

  it('refuses a malformed --blobs URL in one line, before listening', async () => {
    const dataDir = makeTempDir('blobs-cli-bad-');
    try {
      const res = await runCli([
        'serve',
        '--port',
        '0',
        '--data',
        dataDir,
        '--blobs',
        's3://AKIA:topsecretvalue@Bad_Bucket',
      ]);
      expect(res.code).toBe(2); // a usage error, as for run and studio
      expect(res.stdout).toBe('');
      expect(res.stderr).toBe(
        'dropshoot: --blobs: the blobs URL must not hold credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY instead; see `dropshoot --help` for usage.\n',
      );
    } finally {
      removeDir(dataDir);
    }
  });
});
