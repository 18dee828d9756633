/**
 * A small /v1 service written from docs/spec (service-api.md) alone, for the client tests: it
 * imports nothing from src/, and where the spec is silent it makes the choices a production
 * service may make and our core does not: results on another host served as
 * `application/octet-stream`, a cursor parameter of its own name, page-size bounds of its own,
 * uploads judged by signature. Every request is logged, so tests count what the studio spends.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';

export type LoggedRequest = {
  method: string;
  path: string;
  query: URLSearchParams;
  contentType: string | null;
  at: number;
};

export type StandInOptions = {
  /** Name of the query parameter this service reads the ready-set cursor from. */
  cursorParam?: string;
  /** Answer 400 to query parameters it does not know (a strict service). */
  strictQuery?: boolean;
  /** Ready template sets in the library. */
  readySets?: number;
  /** Page size when `limit` is omitted, and the largest `limit` accepted (400 above it). */
  defaultLimit?: number;
  maxLimit?: number;
  /** What result URLs answer: real images (default), or an HTML error page with 200. */
  resultBody?: 'image' | 'png' | 'webp' | 'html';
  /** Polls a job answers `processing` before `completed`. */
  pollsBeforeDone?: number;
  diamonds?: number;
  price?: number;
  /** Requests this key may make today (spec 8); the next one gets the spec's 429. */
  dailyCap?: number;
};

export type StandIn = {
  url: string;
  apiKey: string;
  /** Requests to the API host (downloads from the result host are not API requests). */
  log: LoggedRequest[];
  count(method: string, path: string | RegExp): number;
  /** Every download served by the result host. */
  downloads: string[];
  lookIds(): string[];
  close(): Promise<void>;
};

const TOOLS = [
  {
    id: 'virtual_model',
    inputShape: 'model_garment',
    promptMode: 'assembled',
    fallbackPriceDiamonds: 4,
  },
  {
    id: 'remove_background',
    inputShape: 'deterministic',
    promptMode: 'none',
    fallbackPriceDiamonds: 1,
  },
  {
    id: 'photo_enhance',
    inputShape: 'deterministic',
    promptMode: 'none',
    fallbackPriceDiamonds: 1,
  },
];

function isImageSignature(b: Buffer): boolean {
  return (
    (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) ||
    b.subarray(0, 8).equals(Buffer.from('89504e470d0a1a0a', 'hex')) ||
    (b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP')
  );
}

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
}

export async function startStandIn(options: StandInOptions = {}): Promise<StandIn> {
  const apiKey = `sk_${randomUUID().replaceAll('-', '')}`;
  const log: LoggedRequest[] = [];
  const downloads: string[] = [];
  let balance = options.diamonds ?? 100;
  const price = options.price ?? 1;
  const cursorParam = options.cursorParam ?? 'cursor';
  const defaultLimit = options.defaultLimit ?? 20;
  const maxLimit = options.maxLimit ?? 100;
  const readySets = Array.from({ length: options.readySets ?? 45 }, (_, i) => ({
    id: randomUUID(),
    name: `Ready shoot ${i + 1}`,
    shotCount: 2,
    shots: [{ id: randomUUID() }, { id: randomUUID() }],
    extraFieldThisServiceAdds: true,
  }));
  const looks = [
    {
      id: randomUUID(),
      label: 'Spring look',
      toolId: 'virtual_model',
      images: { fashion_model: 'fm-1' },
      pose: null,
      coverUrl: null,
    },
  ];
  const uploads = new Map<string, Buffer>();
  const jobs = new Map<string, { polls: number; resultUrls: string[] }>();

  // Results live on another host and come back as application/octet-stream, like an object store.
  const resultFiles = new Map<string, Buffer>();
  const results = http.createServer((req, res) => {
    const data = resultFiles.get(req.url ?? '');
    downloads.push(req.url ?? '');
    if (!data) return void res.writeHead(404).end();
    res
      .writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': data.length })
      .end(data);
  });
  const resultsUrl = (await listen(results)).replace('127.0.0.1', 'localhost');

  async function makeResult(seed: number): Promise<Buffer> {
    if (options.resultBody === 'html')
      return Buffer.from('<!DOCTYPE html><html><body>AccessDenied</body></html>');
    const image = sharp({
      create: {
        width: 320 + seed,
        height: 400,
        channels: 3,
        background: { r: (seed * 37) % 256, g: 120, b: 200 },
      },
    });
    if (options.resultBody === 'png') return image.png().toBuffer();
    if (options.resultBody === 'webp') return image.webp().toBuffer();
    return image.jpeg().toBuffer();
  }

  const send = (res: http.ServerResponse, status: number, body: object) => {
    const text = JSON.stringify(
      status < 400 ? { success: true, ...body } : { success: false, ...body },
    );
    res.writeHead(status, { 'content-type': 'application/json' }).end(text);
  };

  const known: Record<string, string[]> = {
    '/v1/fashion-models': ['gender', 'limit'],
    '/v1/venues': ['limit'],
    '/v1/poses': ['type', 'limit'],
    '/v1/ready-template-sets': ['category', 'limit', cursorParam],
  };

  const api = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const route = url.pathname;
      log.push({
        method: req.method ?? '',
        path: route,
        query: url.searchParams,
        contentType: req.headers['content-type'] ?? null,
        at: Date.now(),
      });
      if (req.headers.authorization !== `Bearer ${apiKey}`)
        return send(res, 401, { error: 'Invalid API key' });
      if (options.dailyCap !== undefined && log.length > options.dailyCap) {
        return send(res, 429, {
          error: `Daily request cap of ${options.dailyCap} reached for this API key`,
        });
      }
      if (options.strictQuery && known[route]) {
        const unknown = [...url.searchParams.keys()].filter((k) => !known[route]!.includes(k));
        if (unknown.length)
          return send(res, 400, { error: `Unknown query parameter: ${unknown.join(', ')}` });
      }
      const limitOf = () => {
        const raw = url.searchParams.get('limit');
        return raw === null ? defaultLimit : Number(raw);
      };
      if (req.method === 'GET' && route === '/v1/models') return send(res, 200, { models: TOOLS });
      if (req.method === 'GET' && route === '/v1/fashion-models')
        return send(res, 200, { fashionModels: [{ id: 'fm-1', name: 'Ada' }] });
      if (req.method === 'GET' && route === '/v1/venues')
        return send(res, 200, { venues: [{ id: 'v-1', name: 'Loft' }] });
      if (req.method === 'GET' && route === '/v1/poses')
        return send(res, 200, {
          poses: [{ id: `pose-${url.searchParams.get('type') ?? 'default'}`, name: 'Pose' }],
        });
      if (req.method === 'GET' && route === '/v1/template-sets')
        return send(res, 200, { templateSets: looks });
      const look = /^\/v1\/template-sets\/([^/]+)$/.exec(route);
      if (req.method === 'DELETE' && look) {
        const at = looks.findIndex((l) => l.id === decodeURIComponent(look[1]!));
        if (at < 0) return send(res, 404, { error: 'Template set not found' });
        looks.splice(at, 1);
        return send(res, 200, {});
      }
      if (req.method === 'GET' && route === '/v1/account') {
        return send(res, 200, {
          email: 'studio@example.com',
          diamondBalance: balance,
          plan: {
            isPremium: false,
            status: 'none',
            planProductId: '',
            provider: '',
            cancelAtPeriodEnd: false,
            renewsAt: new Date().toISOString(),
          },
        });
      }
      if (req.method === 'GET' && route === '/v1/ready-template-sets') {
        const limit = limitOf();
        if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit)
          return send(res, 400, { error: `limit must be between 1 and ${maxLimit}` });
        const cursor = url.searchParams.get(cursorParam);
        const start = cursor === null ? 0 : Number(Buffer.from(cursor, 'base64url').toString());
        const page = readySets.slice(start, start + limit);
        const next =
          start + limit < readySets.length
            ? Buffer.from(String(start + limit)).toString('base64url')
            : null;
        return send(res, 200, { templateSets: page, nextCursor: next });
      }
      if (req.method === 'POST' && route === '/v1/uploads') {
        const data = await readBody(req);
        if (data.length > 8 * 1024 * 1024) return send(res, 413, { error: 'File too large' });
        if (!isImageSignature(data)) return send(res, 415, { error: 'Unsupported image format' });
        const id = randomUUID();
        uploads.set(id, data);
        return send(res, 200, { id, url: `${resultsUrl}/uploads/${id}` });
      }
      if (req.method === 'POST' && route === '/v1/generations') {
        const body = JSON.parse((await readBody(req)).toString()) as { toolId?: string };
        if (!TOOLS.some((t) => t.id === body.toolId))
          return send(res, 400, { error: `Unknown toolId: ${body.toolId}` });
        if (balance < price)
          return send(res, 402, {
            error: `Insufficient diamonds: required ${price}, balance ${balance}`,
          });
        balance -= price;
        const id = randomUUID();
        const file = `/files/${randomUUID()}`;
        resultFiles.set(file, await makeResult(jobs.size));
        jobs.set(id, { polls: 0, resultUrls: [`${resultsUrl}${file}`] });
        return send(res, 202, { id, status: 'processing' });
      }
      const poll = /^\/v1\/generations\/([^/]+)$/.exec(route);
      if (req.method === 'GET' && poll) {
        const job = jobs.get(decodeURIComponent(poll[1]!));
        if (!job) return send(res, 404, { error: 'Generation not found' });
        job.polls++;
        const done = job.polls > (options.pollsBeforeDone ?? 0);
        return send(res, 200, {
          id: poll[1],
          status: done ? 'completed' : 'processing',
          resultUrls: done ? job.resultUrls : [],
          errorMessage: null,
        });
      }
      return send(res, 404, { error: 'Not found' });
    })().catch((err: unknown) => send(res, 500, { error: String(err) }));
  });
  const url = await listen(api);
  return {
    url,
    apiKey,
    log,
    downloads,
    lookIds: () => looks.map((l) => l.id),
    count: (method, path) =>
      log.filter(
        (r) =>
          r.method === method && (typeof path === 'string' ? r.path === path : path.test(r.path)),
      ).length,
    async close() {
      api.closeAllConnections();
      results.closeAllConnections();
      await Promise.all([new Promise((r) => api.close(r)), new Promise((r) => results.close(r))]);
    },
  };
}
