/**
 * The studio contract over HTTP looks commands up among its own entries only: names inherited
 * from Object.prototype are unknown commands (404), never a call into the prototype (500). The
 * same lookup (runCommand) serves Electron IPC.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessClient } from '../../src/client/in-process';
import { openStudio, type Studio } from '../../src/studio';
import { buildStudioWeb } from '../../src/studio/web';

let root: string;
let client: InProcessClient;
let studio: Studio;
let web: ReturnType<typeof buildStudioWeb>;
let url: string;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-command-names-'));
  client = await InProcessClient.open({ dataDir: path.join(root, 'core') });
  studio = await openStudio({ dataDir: path.join(root, 'studio'), client, settleMs: 100 });
  web = buildStudioWeb({ engine: studio.engine, commands: studio.commands });
  await web.listen({ host: '127.0.0.1', port: 0 });
  const address = web.server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => {
  await web?.close();
  await studio?.close();
  await client?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const command = async (name: string, args: unknown = {}) => {
  const res = await fetch(`${url}/api/command/${encodeURIComponent(name)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(args),
  });
  return {
    status: res.status,
    body: (await res.json()) as { ok: boolean; error?: { code: string; message: string } },
  };
};

describe('studio command names', () => {
  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'no.such.command'])(
    "answers '%s' with 404 unknown command",
    async (name) => {
      const res = await command(name);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({
        ok: false,
        error: { code: 'unknown_command', message: `unknown command '${name}'` },
      });
    },
  );

  it('still runs a real command', async () => {
    const res = await command('queue.list');
    expect(res.status).toBe(200);
    expect(res.body.ok).toBe(true);
  });
});
