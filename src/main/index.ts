/**
 * Electron main: one window on the embedded studio (or a remote service from settings), the
 * studio contract over IPC (validated by the same handler map as every other transport), the
 * `dropshoot://` protocol for images, notifications, menu and updates. The engine runs here,
 * asynchronously; nothing in it blocks the window.
 */
import path from 'node:path';
import { app, dialog, ipcMain, Menu, Notification, safeStorage, type BrowserWindow, type IpcMainInvokeEvent } from 'electron';
import { HttpClient, InProcessClient, type ServiceClient } from '../client';
import { loadCatalog } from '../core/catalog';
import type { StudioEventName } from '../shared/studio';
import { openStudio, runCommand, type Studio } from '../studio';
import { AttentionNotifier } from './attention';
import { IPC } from './ipc-channels';
import { handleScheme, registerScheme } from './protocol';
import { DesktopSettingsUpdateSchema } from '../shared/desktop-settings';
import { readSettings, settingsView, updateSettings, type Cipher } from './settings';
import { startUpdates } from './updates';
import { createWindow, hardenSession } from './window';
import { isOwnFrame } from './own-frame';

const EVENTS: readonly StudioEventName[] = ['item.changed', 'result.added', 'result.changed', 'budget.changed', 'folder.changed', 'batch.finished'];
const rendererUrl = process.env.ELECTRON_RENDERER_URL;
const rendererFile = path.join(import.meta.dirname, '../renderer/index.html');
const appPage = { devServerUrl: rendererUrl, rendererFile };
const log = (message: string) => process.stderr.write(`${message}\n`);

registerScheme();
if (!app.requestSingleInstanceLock()) app.quit();

let window: BrowserWindow | null = null;
let studio: Studio | null = null;
let client: ServiceClient | null = null;

/** Secrets in settings.json are sealed by the operating system's keychain. */
const keychain: Cipher = {
  available: () => safeStorage.isEncryptionAvailable(),
  encrypt: (text) => safeStorage.encryptString(text),
  decrypt: (data) => safeStorage.decryptString(data),
};

function openClient(userData: string): ServiceClient {
  const settings = readSettings(userData, keychain);
  if (settings.mode === 'remote') return new HttpClient({ baseUrl: settings.baseUrl, apiKey: settings.apiKey });
  const catalogDir = app.isPackaged ? path.join(process.resourcesPath, 'catalog') : path.join(app.getAppPath(), 'resources', 'catalog');
  return InProcessClient.open({ dataDir: path.join(userData, 'data', 'core'), catalog: loadCatalog(catalogDir), providerKeys: settings.providerKeys });
}

/** Settings changes and restarts, from the Dropshoot window only; updates validated here. */
function handleSettings(userData: string): void {
  const own = (event: IpcMainInvokeEvent) => isOwnFrame(event.senderFrame?.url, appPage);
  const forbidden = { ok: false, error: { code: 'forbidden', message: 'not the Dropshoot window' } } as const;
  ipcMain.handle(IPC.settingsGet, (event) => (own(event) ? { ok: true, result: settingsView(userData, keychain) } : forbidden));
  ipcMain.handle(IPC.settingsSave, (event, update: unknown) => {
    if (!own(event)) return forbidden;
    const parsed = DesktopSettingsUpdateSchema.safeParse(update);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return { ok: false, error: { code: 'invalid_arguments', message: issue ? `${issue.path.join('.') || 'settings'}: ${issue.message}` : 'invalid settings' } };
    }
    try {
      return { ok: true, result: updateSettings(userData, keychain, parsed.data) };
    } catch (error) {
      return { ok: false, error: { code: 'not_saved', message: error instanceof Error ? error.message : String(error) } };
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

async function start(): Promise<void> {
  hardenSession();
  const userData = app.getPath('userData');
  client = openClient(userData);
  studio = await openStudio({ dataDir: path.join(userData, 'data'), client, log });
  const opened = studio;

  handleSettings(userData);
  const listedMedia = new Set<string>();
  handleScheme(opened, (url) => listedMedia.has(url));
  ipcMain.handle(IPC.call, async (event, name: unknown, args: unknown) => {
    if (!isOwnFrame(event.senderFrame?.url, appPage)) return { ok: false, error: { code: 'forbidden', message: 'not the Dropshoot window' } };
    const outcome = await runCommand(opened.commands, String(name), args);
    if (outcome.ok && name === 'catalog.get') {
      const c = outcome.result as { fashionModels: { imageUrl: string }[]; venues: { imageUrl: string }[]; poses: { imageUrl: string }[]; readySets: { coverUrl: string }[] };
      for (const url of [...c.fashionModels, ...c.venues, ...c.poses].map((e) => e.imageUrl).concat(c.readySets.map((r) => r.coverUrl))) listedMedia.add(url);
    }
    if (outcome.ok && name === 'looks.list') for (const look of outcome.result as { coverUrl: string | null }[]) if (look.coverUrl) listedMedia.add(look.coverUrl);
    return outcome;
  });
  for (const name of EVENTS) {
    opened.engine.events.on(name, (data: unknown) => window?.webContents.send(IPC.event, { type: name, data }));
  }
  const notify = (title: string, body: string) => {
    if (Notification.isSupported()) new Notification({ title, body }).show();
  };
  opened.engine.events.on('batch.finished', ({ exported, failed }) => notify('Batch finished', `${exported} exported, ${failed} need attention`));
  const attention = new AttentionNotifier(notify);
  opened.engine.events.on('item.changed', (item) => attention.onItem(item));

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
    startUpdates(window, () => opened.engine.hasActiveItems(), log);
  }
}

app.on('second-instance', () => {
  if (window?.isMinimized()) window.restore();
  window?.focus();
});
app.on('window-all-closed', () => app.quit());
app.on('will-quit', (event) => {
  if (!studio) return;
  // Drain the engine (journal is already durable) before the process goes.
  event.preventDefault();
  const closing = studio;
  studio = null;
  void closing
    .close()
    .then(() => client?.close())
    .finally(() => app.exit(0));
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
