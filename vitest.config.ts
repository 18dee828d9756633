import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'test/unit/**/*.test.ts',
      'test/integration/**/*.test.ts',
      'test/component/**/*.test.tsx',
    ],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start servers and spawn CLIs; two cores, so keep the pool small.
    maxWorkers: 2,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
