/**
 * Auto-update from GitHub releases: checks at start and daily, downloads in the background,
 * asks before installing, and never restarts while a batch is running.
 */
import { dialog, type BrowserWindow } from 'electron';
import electronUpdater from 'electron-updater';

const DAY_MS = 24 * 60 * 60 * 1000;

/** `batchRunning` asks the engine process (false once it is gone). */
export function startUpdates(
  window: BrowserWindow,
  batchRunning: () => Promise<boolean>,
  log: (m: string) => void,
): () => void {
  const { autoUpdater } = electronUpdater;
  autoUpdater.autoDownload = true;
  autoUpdater.autoInstallOnAppQuit = false;
  autoUpdater.on('error', (error) => log(`update check failed: ${error.message}`));
  autoUpdater.on('update-downloaded', (info) => {
    const ask = async () => {
      if (await batchRunning()) {
        setTimeout(() => void ask(), 10 * 60 * 1000);
        return;
      }
      const { response } = await dialog.showMessageBox(window, {
        type: 'info',
        buttons: ['Restart and install', 'Later'],
        defaultId: 1,
        message: `Dropshoot ${info.version} is ready to install`,
        detail: 'Your queue is kept; nothing in progress is lost.',
      });
      if (response === 0) autoUpdater.quitAndInstall();
    };
    void ask();
  });
  const check = () =>
    void autoUpdater
      .checkForUpdates()
      .catch((error: unknown) => log(`update check failed: ${String(error)}`));
  check();
  const timer = setInterval(check, DAY_MS);
  return () => clearInterval(timer);
}
