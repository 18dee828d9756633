import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import react from '@vitejs/plugin-react';

// The desktop shell (issue: desktop app) builds from src/main, src/preload and src/renderer.
// Native and binary packages stay external so electron-builder can unpack them from the asar.
const external = ['better-sqlite3', 'sharp', '@ffmpeg-installer/ffmpeg'];

export default defineConfig({
  main: {
    // engine.js: the studio engine's utility process (the same entry `child_process.fork` runs in tests).
    build: {
      rollupOptions: {
        input: {
          index: resolve('src/main/index.ts'),
          engine: resolve('src/studio/host/child-entry.ts'),
        },
        external,
      },
    },
  },
  preload: {
    // Sandboxed preloads cannot be ES modules: CommonJS it is.
    build: {
      rollupOptions: {
        input: resolve('src/preload/index.ts'),
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve('src/renderer'),
    build: { rollupOptions: { input: resolve('src/renderer/index.html') } },
    plugins: [react()],
  },
});
