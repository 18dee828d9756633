/**
 * Electron main, a thin shell: the window, menu, notifications, updates, the keychain-sealed
 * settings and the `dropshoot://` protocol. The studio engine and the embedded core run in a
 * utility process (src/studio/host/child-entry.ts); main hands it the settings (provider keys
 * and API key over the message channel) and passes the studio contract through: the window's
 * calls in, the engine's events out, each call from our own frame only.
 */
import path from 'node:path';
import {
  app,
  dialog,
  ipcMain,
  Menu,
  Notification,
  safeStorage,
  type BrowserWindow,
  type IpcMainInvokeEvent,
} from 'electron';
import type { EngineService, EngineStart } from '../shared/engine-process';
import { STUDIO_EVENT_NAMES } from '../shared/engine-process';
import type { EngineProcess } from '../studio/host/engine-process';
import { AttentionNotifier } from './attention';
import { IPC } from '../shared/ipc-channels';
import { startEngineProcess } from './engine-port';
import { handleScheme, registerScheme } from './protocol';
import { DesktopSettingsUpdateSchema } from '../shared/desktop-settings';
import { StudioSettingsUpdateSchema } from '../shared/studio-settings';
import { readSettings, settingsView, updateSettings, type Cipher } from './settings';
import { startUpdates } from './updates';
import { createWindow, hardenSession } from './window';
import { isOwnFrame } from './own-frame';

const rendererUrl = process.env.ELECTRON_RENDERER_URL;
const rendererFile = path.join(import.meta.dirname, '../renderer/index.html');
const appPage = { devServerUrl: rendererUrl, rendererFile };
const log = (message: string) => process.stderr.write(`${message}\n`);

registerScheme();
if (!app.requestSingleInstanceLock()) app.quit();

let window: BrowserWindow | null = null;
let engine: EngineProcess | null = null;
let quitting = false;

/** Secrets in settings.json are sealed by the operating system's keychain. */
const keychain: Cipher = {
  available: () => safeStorage.isEncryptionAvailable(),
  encrypt: (text) => safeStorage.encryptString(text),
  decrypt: (data) => safeStorage.decryptString(data),
};

/** What the engine process is told at start: the data folder and the service, secrets included. */
function engineConfig(userData: string): EngineStart {
  const settings = readSettings(userData, keychain);
  const catalogDir = app.isPackaged
    ? path.join(process.resourcesPath, 'catalog')
    : path.join(app.getAppPath(), 'resources', 'catalog');
  const service: EngineService =
    settings.mode === 'remote'
      ? { mode: 'remote', baseUrl: settings.baseUrl, apiKey: settings.apiKey }
      : { mode: 'embedded', catalogDir, providerKeys: settings.providerKeys };
  return {
    dataDir: path.join(userData, 'data'),
    service,
    ...(settings.dailyCap !== undefined ? { dailyCap: settings.dailyCap } : {}),
  };
}

/** Settings changes and restarts, from the Dropshoot window only; updates validated here. */
function handleSettings(userData: string): void {
  const own = (event: IpcMainInvokeEvent) => isOwnFrame(event.senderFrame?.url, appPage);
  const forbidden = {
    ok: false,
    error: { code: 'forbidden', message: 'not the Dropshoot window' },
  } as const;
  ipcMain.handle(IPC.settingsGet, (event) =>
    own(event) ? { ok: true, result: settingsView(userData, keychain) } : forbidden,
  );
  ipcMain.handle(IPC.settingsSave, async (event, update: unknown) => {
    if (!own(event)) return forbidden;
    const parsed = DesktopSettingsUpdateSchema.safeParse(update);
    if (!parsed.success) {
      // A cap alone is checked by its own schema, whose refusals are sentences for the form.
      const cap =
        typeof update === 'object' && update !== null && 'dailyCap' in update
          ? StudioSettingsUpdateSchema.safeParse(update)
          : null;
      const issue = (cap && !cap.success ? cap.error : parsed.error).issues[0];
      return {
        ok: false,
        error: {
          code: 'invalid_arguments',
          message: cap
            ? (issue?.message ?? 'The daily cap could not be read.')
            : issue
              ? `${issue.path.join('.') || 'settings'}: ${issue.message}`
              : 'invalid settings',
        },
      };
    }
    try {
      return { ok: true, result: await updateSettings(userData, keychain, parsed.data) };
    } catch (error) {
      return {
        ok: false,
        error: {
          code: 'not_saved',
          message: error instanceof Error ? error.message : String(error),
        },
      };
    }
  });
  ipcMain.handle(IPC.relaunch, (event) => {
    if (!own(event)) return forbidden;
    // will-quit drains the engine first; the queue is durable, so nothing is lost.
    app.relaunch();
    app.quit();
    return { ok: true, result: null };
  });
}

type CatalogUrls = {
  fashionModels: { imageUrl: string }[];
  venues: { imageUrl: string }[];
  poses: { imageUrl: string }[];
  readyShoots: { coverUrl: string }[];
};

async function start(): Promise<void> {
  hardenSession();
  const userData = app.getPath('userData');
  engine = await startEngineProcess(engineConfig(userData));
  const opened = engine;
  opened.events.on('exit', (code) => {
    if (quitting) return;
    // The queue is durable: a restart picks up where the engine stopped.
    log(`the studio engine stopped (exit code ${code ?? 'none'})`);
    dialog.showErrorBox(
      'Dropshoot stopped working',
      'The studio engine ended unexpectedly. Your queue is kept; start Dropshoot again to go on.',
    );
    app.exit(1);
  });

  handleSettings(userData);
  const listedMedia = new Set<string>();
  handleScheme(opened, (url) => listedMedia.has(url));
  ipcMain.handle(IPC.call, async (event, name: unknown, args: unknown) => {
    if (!isOwnFrame(event.senderFrame?.url, appPage))
      return { ok: false, error: { code: 'forbidden', message: 'not the Dropshoot window' } };
    const outcome = await opened.call(String(name), args);
    if (outcome.ok && name === 'catalog.get') {
      const c = outcome.result as CatalogUrls;
      for (const url of [...c.fashionModels, ...c.venues, ...c.poses]
        .map((e) => e.imageUrl)
        .concat(c.readyShoots.map((r) => r.coverUrl)))
        listedMedia.add(url);
    }
    if (outcome.ok && name === 'looks.list')
      for (const look of outcome.result as { coverUrl: string | null }[])
        if (look.coverUrl) listedMedia.add(look.coverUrl);
    return outcome;
  });
  for (const name of STUDIO_EVENT_NAMES) {
    opened.events.on(name, (data: unknown) =>
      window?.webContents.send(IPC.event, { type: name, data }),
    );
  }
  const notify = (title: string, body: string) => {
    if (Notification.isSupported()) new Notification({ title, body }).show();
  };
  opened.events.on('batch.finished', ({ exported, failed }) =>
    notify('Batch finished', `${exported} exported, ${failed} need attention`),
  );
  const attention = new AttentionNotifier(notify);
  opened.events.on('item.changed', (item) => attention.onItem(item));

  window = createWindow(rendererUrl, rendererFile);
  Menu.setApplicationMenu(
    Menu.buildFromTemplate([
      ...(process.platform === 'darwin' ? [{ role: 'appMenu' as const }] : []),
      { role: 'fileMenu' },
      { role: 'editMenu' },
      { role: 'viewMenu' },
      { role: 'windowMenu' },
    ]),
  );
  if (app.isPackaged) {
    startUpdates(window, () => opened.busy(), log);
  }
}

app.on('second-instance', () => {
  if (window?.isMinimized()) window.restore();
  window?.focus();
});
app.on('window-all-closed', () => app.quit());
app.on('will-quit', (event) => {
  if (!engine?.running) return;
  // The engine drains to its journal (already durable) and releases the data folder first.
  event.preventDefault();
  quitting = true;
  const closing = engine;
  engine = null;
  void closing.stop().finally(() => app.exit(0));
});
app
  .whenReady()
  .then(start)
  .catch((error: unknown) => {
    // A broken providers.json, a locked data folder...: say it where the operator looks.
    const message = error instanceof Error ? error.message : String(error);
    log(`Dropshoot could not start: ${message}`);
    dialog.showErrorBox('Dropshoot could not start', message);
    app.exit(1);
  });
