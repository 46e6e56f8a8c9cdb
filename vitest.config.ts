import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Servers, git-lfs and scans are real processes and sockets: give each file its own process.
    isolate: true,
    fileParallelism: true,
    maxWorkers: 2,
  },
});
