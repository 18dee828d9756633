/**
 * The studio engine's own process: Electron's `utilityProcess` in the desktop app, a
 * `child_process.fork` in plain Node. It waits for one `start` message (the data folder and the
 * service, secrets included), opens the studio host, then answers the studio contract's commands
 * and relays every event. It ends cleanly on `stop` and when its parent goes away.
 */
import { getItem } from '../db/store';
import { runCommand } from '../commands';
import {
  FromEngineSchema,
  STUDIO_EVENT_NAMES,
  ToEngineSchema,
  type EngineRequest,
  type EngineStart,
  type FromEngine,
  type Outcome,
} from '../../shared/engine-process';
import { openStudioHost, type StudioHost } from './open-host';

/** The part of Electron's `process.parentPort` this entry uses (no Electron import here). */
type ElectronParentPort = {
  on(event: 'message', listener: (event: { data: unknown }) => void): void;
  postMessage(message: unknown): void;
};

type Channel = {
  send(message: FromEngine): void;
  onMessage(listener: (message: unknown) => void): void;
  onParentGone(listener: () => void): void;
};

function parentChannel(): Channel {
  const electronPort = (process as unknown as { parentPort?: ElectronParentPort }).parentPort;
  if (electronPort) {
    return {
      send: (message) => electronPort.postMessage(message),
      onMessage: (listener) => electronPort.on('message', (event) => listener(event.data)),
      // Electron ends a utility process with the app; nothing to watch for.
      onParentGone: () => {},
    };
  }
  if (!process.send)
    throw new Error('the engine process runs as a child: fork it with an IPC channel');
  return {
    send: (message) => {
      if (process.connected) process.send?.(message);
    },
    onMessage: (listener) => process.on('message', listener),
    onParentGone: (listener) => process.on('disconnect', listener),
  };
}

const log = (message: string) => process.stderr.write(`${message}\n`);
const refused = (code: string, message: string): Outcome => ({
  ok: false,
  error: { code, message },
});

async function answer(host: StudioHost, request: EngineRequest): Promise<Outcome> {
  const { engine, commands } = host.studio;
  switch (request.type) {
    case 'call':
      return runCommand(commands, request.name, request.args);
    case 'sourcePath':
      return { ok: true, result: getItem(engine.db, request.itemId)?.sourcePath ?? null };
    case 'busy':
      return { ok: true, result: engine.hasActiveItems() };
    case 'media': {
      const media = await engine.client.download(request.url);
      return { ok: true, result: { data: new Uint8Array(media.data), mime: media.mime } };
    }
  }
}

function serve(channel: Channel): void {
  let host: StudioHost | null = null;
  let starting = false;
  let stopping: Promise<void> | null = null;

  const send = (message: FromEngine) => channel.send(FromEngineSchema.parse(message));

  const stop = (exitCode: number) => {
    stopping ??= (async () => {
      try {
        await host?.close();
      } catch (err) {
        log(`engine: closing failed: ${err instanceof Error ? err.message : String(err)}`);
        exitCode = 1;
      }
      send({ type: 'stopped' });
      // chokidar and sharp may hold handles a little longer; the work is saved, so end here.
      process.exit(exitCode);
    })();
    return stopping;
  };

  const start = async (config: EngineStart) => {
    starting = true;
    try {
      host = await openStudioHost(config, log);
    } catch (err) {
      send({ type: 'startFailed', message: err instanceof Error ? err.message : String(err) });
      process.exit(1);
    }
    const opened = host;
    for (const name of STUDIO_EVENT_NAMES) {
      opened.studio.engine.events.on(name, (data: unknown) =>
        send({ type: 'event', event: { type: name, data } }),
      );
    }
    send({ type: 'ready', libraryRoot: opened.studio.engine.library.root });
  };

  channel.onParentGone(() => void stop(0));
  channel.onMessage((raw) => {
    const parsed = ToEngineSchema.safeParse(raw);
    if (!parsed.success) {
      // A malformed request still gets its answer when it names an id; anything else is dropped.
      const id = (raw as { id?: unknown } | null)?.id;
      const issue = parsed.error.issues[0];
      const message = `not an engine message: ${issue ? `${issue.path.join('.') || 'message'}: ${issue.message}` : 'invalid'}`;
      if (typeof id === 'number' && Number.isInteger(id) && id >= 0)
        send({ type: 'reply', id, outcome: refused('invalid_message', message) });
      else log(`engine: ${message}`);
      return;
    }
    const message = parsed.data;
    if (message.type === 'stop') return void stop(0);
    if (message.type === 'start') {
      if (starting) return log('engine: a second start message was ignored');
      return void start(message.config);
    }
    if (!host || stopping) {
      send({
        type: 'reply',
        id: message.id,
        outcome: refused(
          'not_ready',
          stopping ? 'the engine is stopping' : 'the engine has not started',
        ),
      });
      return;
    }
    answer(host, message).then(
      (outcome) => send({ type: 'reply', id: message.id, outcome }),
      (err: unknown) =>
        send({
          type: 'reply',
          id: message.id,
          outcome: refused('internal', err instanceof Error ? err.message : String(err)),
        }),
    );
  });
}

serve(parentChannel());
