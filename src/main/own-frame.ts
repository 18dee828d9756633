/**
 * Which frames may call the studio over IPC: exactly our own page. In development that is the
 * dev server's origin; packaged, the one HTML file the window loads (any other file:// page, a
 * look-alike host such as `localhost:5173.evil.test`, or another scheme is refused).
 */
import { pathToFileURL } from 'node:url';

export type AppPage = { devServerUrl: string | undefined; rendererFile: string };

function parse(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

export function isOwnFrame(frameUrl: string | undefined, page: AppPage): boolean {
  const frame = frameUrl ? parse(frameUrl) : null;
  if (!frame) return false;
  if (page.devServerUrl) {
    const dev = parse(page.devServerUrl);
    return (
      dev !== null &&
      (frame.protocol === 'http:' || frame.protocol === 'https:') &&
      frame.origin === dev.origin
    );
  }
  if (frame.protocol !== 'file:' || frame.host !== '') return false;
  // Query and fragment are the page's own routing; the file itself must be ours exactly.
  return frame.pathname === pathToFileURL(page.rendererFile).pathname;
}
