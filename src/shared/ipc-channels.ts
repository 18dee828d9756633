/** The IPC channels between preload and main (both import them from here); nothing else is listened to. */
export const IPC = {
  call: 'studio:call',
  event: 'studio:event',
  settingsGet: 'settings:get',
  settingsSave: 'settings:save',
  relaunch: 'app:relaunch',
} as const;
