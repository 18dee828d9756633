/**
 * The only thing the renderer gets from Electron: the studio contract's call and events, the path
 * of a dropped folder, and the desktop settings. No raw ipcRenderer, no channels chosen by the page.
 */
import { contextBridge, ipcRenderer, webUtils, type IpcRendererEvent } from 'electron';
import type { StudioEvent } from '../shared/studio';
import { IPC } from '../shared/ipc-channels';

contextBridge.exposeInMainWorld('dropshoot', {
  call: (name: string, args: unknown) => ipcRenderer.invoke(IPC.call, name, args),
  onEvent(listener: (event: StudioEvent) => void) {
    const handler = (_event: IpcRendererEvent, data: StudioEvent) => listener(data);
    ipcRenderer.on(IPC.event, handler);
    return () => ipcRenderer.off(IPC.event, handler);
  },
  pathForFile: (file: File) => webUtils.getPathForFile(file),
  settings: {
    get: () => ipcRenderer.invoke(IPC.settingsGet),
    save: (update: unknown) => ipcRenderer.invoke(IPC.settingsSave, update),
    relaunch: () => ipcRenderer.invoke(IPC.relaunch),
  },
});
