import { defineConfig } from '@playwright/test';

// Debian's Chromium (apt), not a downloaded browser: these machines reach only npm and apt.
export default defineConfig({
  testDir: 'test/e2e',
  outputDir: 'test-results/playwright',
  timeout: 180_000,
  workers: 1,
  reporter: [['list']],
  use: {
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
    viewport: { width: 1280, height: 860 },
    trace: 'retain-on-failure',
  },
});
