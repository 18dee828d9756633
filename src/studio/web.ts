/**
 * The studio contract over HTTP + server-sent events, for the headless studio and the browser UI:
 * `POST /api/command/<name>` runs one command, `GET /api/events` streams events, `/library/...`
 * serves result files and thumbnails, and `/` serves the built UI when there is one.
 * Local only: requests from other origins or with a foreign Host header are refused, so a web
 * page cannot drive the studio (CSRF, DNS rebinding).
 */
import fs from 'node:fs';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { STUDIO_EVENT_NAMES } from '../shared/engine-process';
import { mimeOfPath } from '../shared/media-types';
import type { CatalogView, LookView, StudioEvents } from '../shared/studio';
import { StudioSettingsUpdateSchema } from '../shared/studio-settings';
import type { StudioSettingsPort } from './host/studio-settings-file';
import { getItem } from './db/store';
import type { StudioEngine } from './engine';
import { runCommand, type createCommands } from './commands';
import { refuseForeignRequest } from './local-guard';

/** `settings`: the Settings screen's saved values (the CLI's studio; absent in harnesses: 404). */
export type StudioWebOptions = {
  engine: StudioEngine;
  commands: ReturnType<typeof createCommands>;
  uiDir?: string;
  settings?: StudioSettingsPort;
};
/** The built UI's own files; photos and results take their type from the shared media table. */
const WEB_ASSET_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};
const contentTypeOf = (file: string): string =>
  WEB_ASSET_TYPES[path.extname(file).toLowerCase()] ??
  mimeOfPath(file) ??
  'application/octet-stream';

export function buildStudioWeb(opts: StudioWebOptions): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 4 * 1024 * 1024 });
  const { engine } = opts;

  app.addHook('onRequest', async (request, reply) => {
    const refusal = refuseForeignRequest({
      host: request.headers.host,
      origin: request.headers.origin,
    });
    if (refusal) return reply.code(403).send({ ok: false, error: refusal });
  });

  // Catalog and look images live at the service (which may be embedded: not a URL a browser can
  // open); the UI asks for them here, and only URLs the service itself listed are fetched.
  const listedMedia = new Set<string>();
  app.post<{ Params: { name: string } }>('/api/command/:name', async (request, reply) => {
    const outcome = await runCommand(opts.commands, request.params.name, request.body);
    if (outcome.ok)
      for (const url of mediaUrlsIn(request.params.name, outcome.result)) listedMedia.add(url);
    return reply
      .code(
        outcome.ok
          ? 200
          : outcome.error.code === 'internal'
            ? 500
            : outcome.error.code === 'unknown_command'
              ? 404
              : 400,
      )
      .send(outcome);
  });

  // Settings saved for the next start (the daily cap); checked here, refused as a sentence.
  app.get('/api/settings', async (_request, reply) => {
    if (!opts.settings)
      return reply.code(404).send({
        ok: false,
        error: { code: 'not_found', message: 'this studio keeps no settings' },
      });
    return reply.send({ ok: true, result: opts.settings.get() });
  });
  app.put('/api/settings', async (request, reply) => {
    if (!opts.settings)
      return reply.code(404).send({
        ok: false,
        error: { code: 'not_found', message: 'this studio keeps no settings' },
      });
    const parsed = StudioSettingsUpdateSchema.safeParse(request.body);
    if (!parsed.success)
      return reply.code(400).send({
        ok: false,
        error: {
          code: 'invalid_arguments',
          message: parsed.error.issues[0]?.message ?? 'The settings could not be read.',
        },
      });
    return reply.send({ ok: true, result: await opts.settings.save(parsed.data) });
  });

  app.get<{ Querystring: { url?: string } }>('/api/media', async (request, reply) => {
    const url = request.query.url ?? '';
    if (!listedMedia.has(url))
      return reply
        .code(404)
        .send({ ok: false, error: { code: 'not_found', message: 'not a listed catalog image' } });
    const media = await engine.client.download(url);
    return reply
      .header('content-type', media.mime)
      .header('cache-control', 'private, max-age=86400')
      .send(media.data);
  });

  // The source photo of an item, for before/after comparison; gone once exported and moved.
  app.get<{ Params: { id: string } }>('/api/source/:id', async (request, reply) => {
    const item = getItem(engine.db, request.params.id);
    if (!item || !fs.existsSync(item.sourcePath))
      return reply.code(404).send({
        ok: false,
        error: { code: 'not_found', message: 'the source photo is no longer in its folder' },
      });
    return reply
      .header('content-type', contentTypeOf(item.sourcePath))
      .send(fs.createReadStream(item.sourcePath));
  });

  // Open event streams end when the server closes, so shutdown never waits on a browser tab.
  const streams = new Set<import('node:http').ServerResponse>();
  app.addHook('preClose', (done) => {
    for (const stream of streams) stream.end();
    done();
  });
  app.get('/api/events', (request, reply) => {
    reply.hijack();
    reply.raw.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    // Headers go out now, not with the first event or keep-alive.
    reply.raw.write(': connected\n\n');
    streams.add(reply.raw);
    const listeners = STUDIO_EVENT_NAMES.map((name) => {
      const listener = (data: StudioEvents[typeof name]) =>
        reply.raw.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
      engine.events.on(name, listener);
      return [name, listener] as const;
    });
    const keepAlive = setInterval(() => reply.raw.write(': keep-alive\n\n'), 15_000);
    request.raw.on('close', () => {
      streams.delete(reply.raw);
      clearInterval(keepAlive);
      for (const [name, listener] of listeners) engine.events.off(name, listener);
    });
  });

  app.get<{ Params: { '*': string } }>('/library/*', async (request, reply) => {
    const file = safeJoin(engine.library.root, request.params['*']);
    if (!file || !fs.existsSync(file))
      return reply
        .code(404)
        .send({ ok: false, error: { code: 'not_found', message: 'no such file' } });
    return reply
      .header('content-type', contentTypeOf(file))
      .header('cache-control', 'public, max-age=31536000, immutable')
      .send(fs.createReadStream(file));
  });

  app.get<{ Params: { '*': string } }>('/*', async (request, reply) => {
    const uiDir = opts.uiDir;
    if (!uiDir || !fs.existsSync(path.join(uiDir, 'index.html'))) {
      return reply
        .type('text/html; charset=utf-8')
        .send(
          '<!doctype html><title>Dropshoot studio</title><p>The studio engine is running. The UI has not been built: run <code>npm run build</code>.</p>',
        );
    }
    const file = safeJoin(uiDir, request.params['*'] || 'index.html');
    const target =
      file && fs.existsSync(file) && fs.statSync(file).isFile()
        ? file
        : path.join(uiDir, 'index.html');
    return reply.header('content-type', contentTypeOf(target)).send(fs.createReadStream(target));
  });

  return app;
}

function mediaUrlsIn(command: string, result: unknown): string[] {
  if (command === 'catalog.get') {
    const catalog = result as CatalogView;
    return [
      ...catalog.fashionModels.map((m) => m.imageUrl),
      ...catalog.venues.map((v) => v.imageUrl),
      ...catalog.poses.map((p) => p.imageUrl),
      ...catalog.readyShoots.map((r) => r.coverUrl),
    ];
  }
  if (command === 'looks.list')
    return (result as LookView[]).flatMap((look) => (look.coverUrl ? [look.coverUrl] : []));
  return [];
}

/** `root/relative`, or null when `relative` would leave `root`. */
function safeJoin(root: string, relative: string): string | null {
  const resolved = path.resolve(root, relative);
  return resolved.startsWith(path.resolve(root) + path.sep) ? resolved : null;
}
