/**
 * The studio engine in its own process, driven over the message contract the desktop shell uses
 * (Electron's utility process cannot run here; `child_process.fork` runs the same entry): real
 * data folders, the embedded core in the child, real hot-folder photos.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EngineStart } from '../../src/shared/engine-process';
import type { FolderView, ItemView, RecipeInput } from '../../src/shared/studio';
import { EngineStartError, type EngineProcess } from '../../src/studio/host/engine-process';
import { forkEngine } from '../../src/studio/host/fork';

const repo = path.resolve(import.meta.dirname, '../..');
const recipe = JSON.parse(
  fs.readFileSync(path.join(repo, 'resources/samples/recipes/cutout-amazon.json'), 'utf8'),
) as RecipeInput;
const samplePhoto = path.join(repo, 'resources/samples/photos/red-tee.jpg');

let root: string;
let config: EngineStart;
const started: ChildProcess[] = [];

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-engine-child-'));
  fs.mkdirSync(path.join(root, 'in'));
  config = {
    dataDir: path.join(root, 'data'),
    service: { mode: 'embedded', providerKeys: {} },
    settleMs: 100,
  };
});

afterEach(async () => {
  // Removed once every engine has ended: one still writing its data folder would leave it behind.
  const running = started
    .splice(0)
    .filter((child) => child.exitCode === null && child.signalCode === null);
  await Promise.all(
    running.map((child) => {
      const ended = once(child, 'exit');
      child.kill('SIGKILL');
      return ended;
    }),
  );
  fs.rmSync(root, { recursive: true, force: true });
});

async function startEngine(
  start: EngineStart = config,
): Promise<{ engine: EngineProcess; child: ChildProcess }> {
  const forked = await forkEngine(start);
  started.push(forked.child);
  return forked;
}

/** Resolves with the first event of that name the predicate accepts. */
function nextEvent<T>(
  engine: EngineProcess,
  name: 'item.changed' | 'folder.changed',
  accept: (data: T) => boolean,
): Promise<T> {
  return new Promise((resolve) => {
    const listener = (data: unknown) => {
      if (!accept(data as T)) return;
      engine.events.off(name, listener);
      resolve(data as T);
    };
    engine.events.on(name, listener);
  });
}

/** Alive and not a zombie left for a reaper that never comes (containers). */
function isRunning(pid: number): boolean {
  if (process.platform === 'linux') {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const lockFile = () => path.join(config.dataDir, 'studio.lock');

describe('engine child process', () => {
  it('answers contract commands from the embedded core in the child and relays its events', async () => {
    const { engine } = await startEngine();
    expect(engine.libraryRoot).toBe(path.join(config.dataDir, 'library'));

    const budget = await engine.command('budget.get', {});
    expect(budget).toMatchObject({ ok: true, result: { mode: 'embedded' } });
    expect(budget.ok && budget.result.diamondBalance).toBeGreaterThan(0);

    const inDir = path.join(root, 'in');
    const added = await engine.command('folders.add', {
      path: inDir,
      outputDir: path.join(root, 'out'),
      recipe,
    });
    expect(added).toMatchObject({ ok: true, result: { path: inDir, paused: false } });
    const folderId = added.ok ? added.result.id : '';

    const paused = nextEvent<FolderView>(
      engine,
      'folder.changed',
      (folder) => folder.id === folderId && folder.paused,
    );
    expect(await engine.command('folders.pause', { id: folderId, paused: true })).toMatchObject({
      ok: true,
    });
    expect((await paused).paused).toBe(true);

    // A photo dropped into the hot folder becomes an item, announced by an event from the child.
    const queued = nextEvent<ItemView>(
      engine,
      'item.changed',
      (item) => item.name === 'red-tee.jpg',
    );
    fs.copyFileSync(samplePhoto, path.join(inDir, 'red-tee.jpg'));
    const item = await queued;
    expect(item.folderId).toBe(folderId);

    const list = await engine.command('queue.list', {});
    expect(list.ok && list.result.items.map((i) => i.id)).toEqual([item.id]);
    expect(await engine.sourcePath(item.id)).toBe(path.join(inDir, 'red-tee.jpg'));
    expect(await engine.sourcePath('item_unknown')).toBeNull();

    expect(await engine.stop()).toBe(0);
  });

  it('refuses an unknown command, invalid arguments and a malformed message with typed errors', async () => {
    const { engine, child } = await startEngine();

    expect(await engine.call('folders.explode', {})).toEqual({
      ok: false,
      error: { code: 'unknown_command', message: "unknown command 'folders.explode'" },
    });
    const invalid = await engine.call('folders.add', { path: '', outputDir: 'x', recipe });
    expect(invalid).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    expect(!invalid.ok && invalid.error.message).toMatch(/^path: /);

    // A message outside the process contract (a number where a command name goes) is answered, not run.
    const reply = new Promise<unknown>((resolve) => {
      child.on('message', (message: { type?: string; id?: number }) => {
        if (message.type === 'reply' && message.id === 424242) resolve(message);
      });
    });
    child.send({ type: 'call', id: 424242, name: 7, args: {} });
    expect(await reply).toMatchObject({
      type: 'reply',
      id: 424242,
      outcome: { ok: false, error: { code: 'invalid_message' } },
    });

    // The engine still works after refusing all three.
    expect(await engine.command('folders.list', {})).toEqual({ ok: true, result: [] });
    expect(await engine.stop()).toBe(0);
  });

  it('stops cleanly on request: lock released, work kept for the next start', async () => {
    const first = await startEngine();
    const inDir = path.join(root, 'in');
    expect(
      await first.engine.command('folders.add', {
        path: inDir,
        outputDir: path.join(root, 'out'),
        recipe,
      }),
    ).toMatchObject({ ok: true });
    expect(fs.existsSync(lockFile())).toBe(true);

    expect(await first.engine.stop()).toBe(0);
    expect(first.engine.running).toBe(false);
    expect(fs.existsSync(lockFile())).toBe(false);
    expect(await first.engine.call('folders.list', {})).toEqual({
      ok: false,
      error: { code: 'engine_gone', message: 'the studio engine is not running' },
    });

    const second = await startEngine();
    const folders = await second.engine.command('folders.list', {});
    expect(folders.ok && folders.result.map((f) => f.path)).toEqual([inDir]);
    expect(await second.engine.stop()).toBe(0);
  });

  it('refuses to start a second engine on a data folder another engine holds', async () => {
    const { engine } = await startEngine();
    const refused = startEngine().then(
      () => null,
      (err: unknown) => err,
    );
    const err = await refused;
    expect(err).toBeInstanceOf(EngineStartError);
    expect(String(err)).toMatch(/in use|locked|busy|another/i);
    expect(await engine.command('folders.list', {})).toMatchObject({ ok: true });
    expect(await engine.stop()).toBe(0);
  });

  it('ends cleanly when its parent process dies, releasing the data folder', async () => {
    // A parent like Electron main: it forks the engine, then is killed without a word.
    const parentScript = path.join(root, 'parent.mts');
    fs.writeFileSync(
      parentScript,
      `import { forkEngine } from ${JSON.stringify(path.join(repo, 'src/studio/host/fork.ts'))};
const { child } = await forkEngine(JSON.parse(process.argv[2]), { stdio: 'pipe' });
process.stdout.write(JSON.stringify({ enginePid: child.pid }) + '\\n');
setInterval(() => {}, 60_000);
`,
    );
    const parent = spawn(
      process.execPath,
      ['--import', 'tsx', parentScript, JSON.stringify(config)],
      { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    started.push(parent);
    const enginePid = await new Promise<number>((resolve, reject) => {
      let out = '';
      parent.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve((JSON.parse(line) as { enginePid: number }).enginePid);
      });
      parent.once('exit', (code) => reject(new Error(`parent exited first (${code})`)));
    });
    expect(fs.existsSync(lockFile())).toBe(true);
    expect(isRunning(enginePid)).toBe(true);

    parent.kill('SIGKILL');
    await until(() => !isRunning(enginePid), 'the engine process ended');
    expect(fs.existsSync(lockFile())).toBe(false);
  });

  it.runIf(process.platform === 'linux')(
    'receives provider keys over the message channel, never in argv or the environment',
    async () => {
      const secret = 'fal-secret-7f3a9c1e5b';
      const { engine, child } = await startEngine({
        ...config,
        service: { mode: 'embedded', providerKeys: { fal: secret } },
      });
      const cmdline = fs.readFileSync(`/proc/${child.pid}/cmdline`, 'utf8');
      const environ = fs.readFileSync(`/proc/${child.pid}/environ`, 'utf8');
      expect(cmdline).toContain('child-entry.ts');
      expect(cmdline).not.toContain(secret);
      expect(environ).not.toContain(secret);
      expect(await engine.stop()).toBe(0);
    },
  );
});
