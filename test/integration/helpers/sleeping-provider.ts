/**
 * An OpenAI-Images-compatible edit endpoint on loopback that answers a small PNG after
 * `delayMs` (set by the test at any time): the AI provider of `serve` child processes in team
 * tests, so jobs take as long as each case needs.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import sharp from 'sharp';

export type SleepingProvider = {
  url: string;
  delayMs: number;
  requests: number;
  close(): Promise<void>;
};

export async function startSleepingProvider(): Promise<SleepingProvider> {
  const png = await sharp({
    create: { width: 48, height: 48, channels: 3, background: { r: 90, g: 140, b: 200 } },
  })
    .png()
    .toBuffer();
  const answer = JSON.stringify({ data: [{ b64_json: png.toString('base64') }] });
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || !req.url?.endsWith('/images/edits')) {
      res.writeHead(404).end();
      return;
    }
    req.resume();
    req.once('end', () => {
      provider.requests++;
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
      }, provider.delayMs);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const provider: SleepingProvider = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    delayMs: 20,
    requests: 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  return provider;
}

/** The environment that routes `photo_enhance` of a `serve` child to `url`. */
export const sleepingProviderEnv = (url: string): Record<string, string> => ({
  DROPSHOOT_OPENAI_KEY: 'team-test-provider-key',
  DROPSHOOT_OPENAI_BASE_URL: url,
  DROPSHOOT_ROUTE_PHOTO_ENHANCE: 'openai',
});
