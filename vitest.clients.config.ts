import { defineConfig } from 'vitest/config';

/**
 * The partner clients' tests (test/clients/): they drive the clients `make clients` wrote into
 * .build/clients/ against live servers they start. `make test` runs them after `make clients`
 * where Java and Maven are installed:
 *   make clients && npx vitest run --config vitest.clients.config.ts
 */
export default defineConfig({
  test: {
    include: ['test/clients/**/*.test.ts'],
    pool: 'forks',
    execArgv: ['--unhandled-rejections=strict'],
    // Maven's first run fetches its plugins and JUnit; later runs take seconds.
    testTimeout: 300_000,
    hookTimeout: 120_000,
    isolate: true,
    // Maven and the TypeScript compiler each want a core.
    fileParallelism: false,
  },
});
