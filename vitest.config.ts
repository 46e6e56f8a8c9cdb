import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The partner clients' tests need `make clients` (Java) first: vitest.clients.config.ts.
    exclude: [...configDefaults.exclude, 'test/clients/**'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // The test servers run inside these workers: a promise rejection that nothing handles is
    // raised as an uncaught exception there, so a regression (issue 13) fails loudly.
    execArgv: ['--unhandled-rejections=strict'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Servers, git-lfs and scans are real processes and sockets: give each file its own process.
    isolate: true,
    fileParallelism: true,
    maxWorkers: 2,
  },
});
