import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The test files that drive Chromium. They run after everything else, one file at a time: two
 * browsers beside the rest of the suite on two cores made pages miss their deadlines and media
 * miss axe's preload window, so the outcomes these tests pin (a page checked, axe's own findings)
 * depended on the load rather than on the code.
 */
const BROWSER_FILES = [
  'test/unit/scan/corpus.test.ts',
  'test/unit/scan/chromium-engine.test.ts',
  'test/unit/scan/chromium-pages.test.ts',
  'test/unit/scan/chromium-sandbox.test.ts',
  'test/unit/scan/chromium-workers.test.ts',
  'test/unit/scan/engine-choice.test.ts',
  'test/unit/scan/crawl-helpers.test.ts',
  'test/e2e/mcp-scans-chromium.test.ts',
  'test/e2e/scan-page-fairness.test.ts',
  'test/e2e/docs-page.test.ts',
  'test/e2e/reports-chromium.test.ts',
  'test/e2e/readme-tour.test.ts',
  'test/e2e/screenshot-quota-chromium.test.ts',
  'test/e2e/oauth-chromium.test.ts',
];

export default defineConfig({
  test: {
    // The partner clients' tests need `make clients` (Java) first: vitest.clients.config.ts. The
    // tests of pactum outside its checkout (the package, the image) run once: vitest.outside.config.ts.
    exclude: [...configDefaults.exclude, 'test/clients/**', 'test/outside/**'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // The test servers run inside these workers: a promise rejection that nothing handles is
    // raised as an uncaught exception there, so a regression fails loudly.
    execArgv: ['--unhandled-rejections=strict'],
    // Generous bounds, not expectations: scans, browsers and servers share two cores with the
    // other test files, and a slow machine must not turn a working test into a timeout.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // Servers, git-lfs and scans are real processes and sockets: give each file its own process.
    isolate: true,
    projects: [
      {
        extends: true,
        test: { name: 'servers', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, 'test/clients/**', 'test/outside/**', ...BROWSER_FILES], maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'browser', include: BROWSER_FILES, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
