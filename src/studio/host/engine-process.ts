/**
 * The shell's side of the engine process: starts it with its configuration, passes the studio
 * contract through (commands in, events out) and stops it. Loads nothing of the engine itself, so
 * Electron main stays a thin shell; the transport (a utility process, a forked child) is a port.
 */
import { EventEmitter } from 'node:events';
import {
  FromEngineSchema,
  type EngineMedia,
  type EngineRequest,
  type EngineStart,
  type Outcome,
  type ToEngine,
} from '../../shared/engine-process';
import type {
  StudioCommandArgs,
  StudioCommandName,
  StudioCommandResults,
  StudioEvent,
  StudioEvents,
} from '../../shared/studio';

/** How messages reach the engine process and come back; `onExit` fires once, when it is gone. */
export type EnginePort = {
  send(message: ToEngine): void;
  onMessage(listener: (message: unknown) => void): void;
  onExit(listener: (code: number | null) => void): void;
  /** Ends the process at once (used only when it does not stop in time). */
  kill(): void;
};

export class EngineStartError extends Error {
  override name = 'EngineStartError';
}

type Pending = (outcome: Outcome) => void;
type Distributive<T> = T extends unknown ? Omit<T, 'id'> : never;
type RequestBody = Distributive<EngineRequest>;

export type EngineEvents = { [K in keyof StudioEvents]: [StudioEvents[K]] } & {
  exit: [number | null];
};

export class EngineProcess {
  /** The studio's events as the engine emits them, plus `exit` when the process ends. */
  readonly events = new EventEmitter<EngineEvents>();
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private exited: number | null | undefined = undefined;
  private readonly exitWaiters: (() => void)[] = [];

  private constructor(
    private readonly port: EnginePort,
    /** Where the engine keeps its results (the shell serves thumbnails from it). */
    readonly libraryRoot: string,
  ) {}

  /** Sends the configuration (secrets included) and resolves once the engine is open. */
  static start(port: EnginePort, config: EngineStart): Promise<EngineProcess> {
    return new Promise((resolve, reject) => {
      let engine: EngineProcess | null = null;
      port.onMessage((raw) => {
        const parsed = FromEngineSchema.safeParse(raw);
        if (!parsed.success) return; // not ours to trust; the engine validates its own side too
        const message = parsed.data;
        if (message.type === 'ready' && !engine) {
          engine = new EngineProcess(port, message.libraryRoot);
          resolve(engine);
        } else if (message.type === 'startFailed') {
          reject(new EngineStartError(message.message));
        } else if (engine) {
          engine.receive(
            message.type === 'event'
              ? { event: message.event as StudioEvent }
              : message.type === 'reply'
                ? { reply: message }
                : {},
          );
        }
      });
      port.onExit((code) => {
        if (engine) engine.gone(code);
        else
          reject(
            new EngineStartError(
              `the engine process ended before it was ready (exit code ${code ?? 'none'})`,
            ),
          );
      });
      port.send({ type: 'start', config });
    });
  }

  /** Any command by name, as the renderer sends it: the engine validates name and arguments. */
  call(name: string, args: unknown): Promise<Outcome> {
    return this.request({ type: 'call', name, args });
  }

  /** A command with the contract's types. */
  async command<K extends StudioCommandName>(
    name: K,
    args: StudioCommandArgs<K>,
  ): Promise<{ ok: true; result: StudioCommandResults[K] } | Extract<Outcome, { ok: false }>> {
    const outcome = await this.call(name, args);
    return outcome.ok ? { ok: true, result: outcome.result as StudioCommandResults[K] } : outcome;
  }

  /** The source photo of an item, or null for an unknown item. */
  async sourcePath(itemId: string): Promise<string | null> {
    const outcome = await this.request({ type: 'sourcePath', itemId });
    return outcome.ok && typeof outcome.result === 'string' ? outcome.result : null;
  }

  /** A catalog image fetched through the engine's service client, or null when it failed. */
  async media(url: string): Promise<EngineMedia | null> {
    const outcome = await this.request({ type: 'media', url });
    return outcome.ok ? (outcome.result as EngineMedia) : null;
  }

  /** Whether photos are on their way (the updater waits for them); false once the engine is gone. */
  async busy(): Promise<boolean> {
    const outcome = await this.request({ type: 'busy' });
    return outcome.ok && outcome.result === true;
  }

  /** Asks the engine to close (queue drained to disk, lock released) and waits for its exit. */
  async stop(timeoutMs = 30_000): Promise<number | null> {
    if (this.exited === undefined) {
      this.port.send({ type: 'stop' });
      const timer = setTimeout(() => this.port.kill(), timeoutMs);
      await new Promise<void>((resolve) => this.exitWaiters.push(resolve));
      clearTimeout(timer);
    }
    return this.exited ?? null;
  }

  get running(): boolean {
    return this.exited === undefined;
  }

  private request(body: RequestBody): Promise<Outcome> {
    if (this.exited !== undefined) return Promise.resolve(gone());
    const id = this.nextId++;
    return new Promise<Outcome>((resolve) => {
      this.pending.set(id, resolve);
      this.port.send({ ...body, id } as ToEngine);
    });
  }

  private receive(message: {
    event?: StudioEvent;
    reply?: { id: number; outcome: Outcome };
  }): void {
    if (message.event) {
      const { type, data } = message.event;
      (this.events.emit as (name: string, data: unknown) => boolean)(type, data);
    }
    if (message.reply) {
      const resolve = this.pending.get(message.reply.id);
      this.pending.delete(message.reply.id);
      resolve?.(message.reply.outcome);
    }
  }

  private gone(code: number | null): void {
    if (this.exited !== undefined) return;
    this.exited = code;
    for (const resolve of this.pending.values()) resolve(gone());
    this.pending.clear();
    for (const wake of this.exitWaiters.splice(0)) wake();
    this.events.emit('exit', code);
  }
}

const gone = (): Outcome => ({
  ok: false,
  error: { code: 'engine_gone', message: 'the studio engine is not running' },
});
