/**
 * `dropshoot://` serves the renderer's images without a broad file:// grant: `library/<path>`
 * only inside the studio library, `source/<itemId>` only an item's own source photo, and
 * `media/?url=` only catalog images the service listed, fetched through the service client.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { net, protocol } from 'electron';
import type { Studio } from '../studio';
import { getItem } from '../studio/db/store';

export const SCHEME = 'dropshoot';

/** Must run before the app is ready. */
export function registerScheme(): void {
  protocol.registerSchemesAsPrivileged([{ scheme: SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, stream: true } }]);
}

export function handleScheme(studio: Studio, isListedMedia: (url: string) => boolean): void {
  protocol.handle(SCHEME, async (request) => {
    const url = new URL(request.url);
    if (url.host === 'library') {
      const root = path.resolve(studio.engine.library.root);
      const file = path.resolve(root, decodeURIComponent(url.pathname.slice(1)));
      if (!file.startsWith(root + path.sep) || !fs.existsSync(file)) return new Response('not found', { status: 404 });
      return net.fetch(pathToFileURL(file).toString());
    }
    if (url.host === 'source') {
      const item = getItem(studio.engine.db, decodeURIComponent(url.pathname.slice(1)));
      if (!item || !fs.existsSync(item.sourcePath)) return new Response('not found', { status: 404 });
      return net.fetch(pathToFileURL(item.sourcePath).toString());
    }
    if (url.host === 'media') {
      const target = url.searchParams.get('url') ?? '';
      if (!isListedMedia(target)) return new Response('not found', { status: 404 });
      const media = await studio.engine.client.download(target);
      return new Response(new Uint8Array(media.data), { headers: { 'content-type': media.mime } });
    }
    return new Response('not found', { status: 404 });
  });
}
