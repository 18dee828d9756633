/**
 * The renderer's one way to the studio engine: Electron IPC through the preload bridge in the
 * desktop app, HTTP + server-sent events when the headless studio serves this build to a browser.
 */
import {
  type StudioCommandArgs,
  type StudioCommandName,
  type StudioCommandResults,
  type StudioError,
  type StudioEvent,
  type StudioEventName,
} from '../../shared/studio';
import type { DesktopSettingsUpdate, DesktopSettingsView } from '../../shared/desktop-settings';
import { STUDIO_EVENT_NAMES } from '../../shared/engine-process';
import type { StudioSettingsUpdate, StudioSettingsView } from '../../shared/studio-settings';

export type Outcome = { ok: true; result: unknown } | { ok: false; error: StudioError };

export type Transport = {
  call<K extends StudioCommandName>(
    name: K,
    args: StudioCommandArgs<K>,
  ): Promise<StudioCommandResults[K]>;
  subscribe(listener: (event: StudioEvent) => void): () => void;
  /** URLs the renderer may put in `<img src>`. */
  libraryUrl(relative: string): string;
  mediaUrl(serviceUrl: string): string;
  sourceUrl(itemId: string): string;
  /** The Settings screen's saved values (null: this studio keeps none, e.g. a test harness). */
  settings(): Promise<StudioSettingsView | null>;
  /** Saves them for the next start; a refusal is a StudioCallError whose message is a sentence. */
  saveSettings(update: StudioSettingsUpdate): Promise<StudioSettingsView>;
};

/** What the preload script exposes as `window.dropshoot` (nothing else crosses the bridge). */
export type DesktopBridge = {
  call(name: string, args: unknown): Promise<Outcome>;
  onEvent(listener: (event: StudioEvent) => void): () => void;
  pathForFile(file: File): string;
  settings: {
    get(): Promise<Outcome>;
    save(update: DesktopSettingsUpdate): Promise<Outcome>;
    relaunch(): Promise<Outcome>;
  };
};

declare global {
  interface Window {
    dropshoot?: DesktopBridge;
  }
}

export class StudioCallError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'StudioCallError';
  }
}

function unwrap<T>(outcome: Outcome): T {
  if (!outcome.ok) throw new StudioCallError(outcome.error.code, outcome.error.message);
  return outcome.result as T;
}

/** The desktop app's own settings; null in a browser, where the studio was started with flags. */
export function desktopSettings() {
  const bridge = typeof window === 'undefined' ? undefined : window.dropshoot?.settings;
  if (!bridge) return null;
  return {
    get: async () => unwrap<DesktopSettingsView>(await bridge.get()),
    save: async (update: DesktopSettingsUpdate) =>
      unwrap<DesktopSettingsView>(await bridge.save(update)),
    relaunch: async () => {
      unwrap<null>(await bridge.relaunch());
    },
  };
}

/** HTTP + SSE to the headless studio; `base` is '' in the browser (same origin). */
export function httpTransport(base = ''): Transport {
  return {
    async call(name, args) {
      const response = await fetch(`${base}/api/command/${name}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(args ?? {}),
      });
      let outcome: Outcome;
      try {
        outcome = (await response.json()) as Outcome;
      } catch {
        throw new StudioCallError(
          'offline',
          `The studio answered ${response.status} without a readable body`,
        );
      }
      return unwrap(outcome);
    },
    subscribe(listener) {
      // fetch streaming rather than EventSource: one code path in browsers and in Node tests,
      // and a reconnect loop we control (the studio may restart).
      const controller = new AbortController();
      const connect = async (): Promise<void> => {
        while (!controller.signal.aborted) {
          try {
            const response = await fetch(`${base}/api/events`, { signal: controller.signal });
            const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
            let buffer = '';
            for (;;) {
              const { value, done } = await reader.read();
              if (done) break;
              buffer += value;
              let end: number;
              while ((end = buffer.indexOf('\n\n')) >= 0) {
                const block = buffer.slice(0, end);
                buffer = buffer.slice(end + 2);
                const event = parseSse(block);
                if (event) listener(event);
              }
            }
          } catch {
            if (controller.signal.aborted) return;
          }
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      };
      void connect();
      return () => controller.abort();
    },
    libraryUrl: (relative) =>
      `${base}/library/${relative.split('/').map(encodeURIComponent).join('/')}`,
    mediaUrl: (url) => `${base}/api/media?url=${encodeURIComponent(url)}`,
    sourceUrl: (itemId) => `${base}/api/source/${encodeURIComponent(itemId)}`,
    async settings() {
      const response = await fetch(`${base}/api/settings`);
      if (response.status === 404) return null;
      return unwrap<StudioSettingsView>((await response.json()) as Outcome);
    },
    async saveSettings(update) {
      const response = await fetch(`${base}/api/settings`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(update),
      });
      return unwrap<StudioSettingsView>((await response.json()) as Outcome);
    },
  };
}

function parseSse(block: string): StudioEvent | null {
  let type = '';
  let data = '';
  for (const line of block.split('\n')) {
    if (line.startsWith('event: ')) type = line.slice(7);
    else if (line.startsWith('data: ')) data += line.slice(6);
  }
  if (!STUDIO_EVENT_NAMES.includes(type as StudioEventName) || !data) return null;
  return { type, data: JSON.parse(data) } as StudioEvent;
}

/** The desktop app: IPC through the preload bridge, files through the `dropshoot:` protocol. */
export function ipcTransport(bridge: DesktopBridge): Transport {
  return {
    call: async (name, args) => unwrap(await bridge.call(name, args ?? {})),
    subscribe: (listener) => bridge.onEvent(listener),
    libraryUrl: (relative) =>
      `dropshoot://library/${relative.split('/').map(encodeURIComponent).join('/')}`,
    mediaUrl: (url) => `dropshoot://media/?url=${encodeURIComponent(url)}`,
    sourceUrl: (itemId) => `dropshoot://source/${encodeURIComponent(itemId)}`,
    settings: async () => fromDesktop(unwrap<DesktopSettingsView>(await bridge.settings.get())),
    saveSettings: async (update) =>
      fromDesktop(unwrap<DesktopSettingsView>(await bridge.settings.save(update))),
  };
}

/** The desktop app's settings seen as the studio's: the app has no command-line cap. */
function fromDesktop(view: DesktopSettingsView): StudioSettingsView {
  return {
    dailyCap: view.dailyCap,
    dailyCapFromFlag: null,
    aiProviderFromEnvironment: view.aiProviderFromEnvironment,
  };
}

let current: Transport | null = null;
export function setTransport(transport: Transport): void {
  current = transport;
}
export function studio(): Transport {
  if (!current) throw new Error('no studio transport set');
  return current;
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
