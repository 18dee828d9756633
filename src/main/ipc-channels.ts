/** The two IPC channels between preload and main; nothing else is listened to. */
export const IPC = { call: 'studio:call', event: 'studio:event' } as const;
