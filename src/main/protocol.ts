/**
 * `dropshoot://` serves the renderer's images without a broad file:// grant: `library/<path>`
 * only inside the studio library, `source/<itemId>` only an item's own source photo, and
 * `media/?url=` only catalog images the service listed, fetched by the engine's service client.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { net, protocol } from 'electron';
import type { EngineProcess } from '../studio/host/engine-process';

export const SCHEME = 'dropshoot';

/** Must run before the app is ready. */
export function registerScheme(): void {
  protocol.registerSchemesAsPrivileged([
    {
      scheme: SCHEME,
      privileges: { standard: true, secure: true, supportFetchAPI: true, stream: true },
    },
  ]);
}

const notFound = () => new Response('not found', { status: 404 });

export function handleScheme(engine: EngineProcess, isListedMedia: (url: string) => boolean): void {
  protocol.handle(SCHEME, async (request) => {
    const url = new URL(request.url);
    if (url.host === 'library') {
      const root = path.resolve(engine.libraryRoot);
      const file = path.resolve(root, decodeURIComponent(url.pathname.slice(1)));
      if (!file.startsWith(root + path.sep) || !fs.existsSync(file)) return notFound();
      return net.fetch(pathToFileURL(file).toString());
    }
    if (url.host === 'source') {
      const sourcePath = await engine.sourcePath(decodeURIComponent(url.pathname.slice(1)));
      if (!sourcePath || !fs.existsSync(sourcePath)) return notFound();
      return net.fetch(pathToFileURL(sourcePath).toString());
    }
    if (url.host === 'media') {
      const target = url.searchParams.get('url') ?? '';
      if (!isListedMedia(target)) return notFound();
      const media = await engine.media(target);
      if (!media) return notFound();
      return new Response(new Uint8Array(media.data), { headers: { 'content-type': media.mime } });
    }
    return notFound();
  });
}
