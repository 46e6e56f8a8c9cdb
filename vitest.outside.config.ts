import { defineConfig } from 'vitest/config';

/**
 * pactum outside its checkout (test/outside/): the npm package through a local registry, the
 * container image with podman, and the docs' recipes run verbatim. They start from the build in
 * dist/ (make build), take minutes (an image build, installs with an empty npm cache) and each
 * wants the machine's cores, so they run once, one file at a time, after the suites of `make test`:
 *   npx vitest run --config vitest.outside.config.ts
 */
export default defineConfig({
  test: {
    include: ['test/outside/**/*.test.ts'],
    pool: 'forks',
    execArgv: ['--unhandled-rejections=strict'],
    testTimeout: 900_000,
    hookTimeout: 900_000,
    isolate: true,
    fileParallelism: false,
  },
});
