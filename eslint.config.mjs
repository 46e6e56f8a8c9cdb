// typescript-eslint, type-aware, its recommended rules (`make lint`, zero warnings). A rule
// switched off or narrowed here says why on its own line.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // What the build, the generators and the tests write (git-ignored, or generated/ drift-checked), never linted.
  { ignores: ['dist/**', 'generated/**', '.build/**', 'clients/**', '.tmp/**', 'data/**', 'coverage/**', '**/node_modules/**'] },
  // Imports the client `make clients` writes to .build/, which a fresh clone has only after that
  // step: scripts/test.sh lints it there (ESLINT_WITH_CLIENTS=1), with the client in place.
  ...(process.env.ESLINT_WITH_CLIENTS ? [] : [{ ignores: ['test/clients/typescript.test.ts'] }]),
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A leading underscore marks what a destructuring leaves out on purpose ({ secret: _s, ...rest }).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      // reject(err) with a caught error or an abort signal's reason, as it came, is the promise form of `throw err`,
      // which only-throw-error allows (its defaults): wrapping it would change what callers catch. Literals are still refused.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      // An ES import of node:http (or of a module that makes one) loads Node's bundled undici and
      // http2 (~13 MB resident) through its WebSocket getters: src/http/node-http.ts requires it instead.
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: [
          { name: 'node:http', message: 'import createServer or STATUS_CODES from src/http/node-http.ts (an ES import of node:http loads undici)', allowTypeImports: true },
          { name: 'http', message: 'import from src/http/node-http.ts (an ES import of node:http loads undici)', allowTypeImports: true },
          { name: '@koa/router', message: 'its ES build imports node:http: require it (src/http/routes.ts)', allowTypeImports: true },
        ],
      }],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Tests read the server's JSON answers as `any` (test/helpers/http.ts `json`) and assert on them
      // with expect; every one of those answers is already validated against the specs by the
      // response checker each test server installs, so restating their types here would add nothing.
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Scripts of hostile fixture pages: they run in the scanned page's browser (its globals), and
    // the page calls the functions they define.
    files: ['test/fixtures/hostile/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'script',
      globals: { self: 'readonly', navigator: 'readonly', URL: 'readonly', Blob: 'readonly', Worker: 'readonly', SharedWorker: 'readonly', AudioContext: 'readonly' },
    },
    rules: { '@typescript-eslint/no-unused-vars': 'off', 'no-empty': ['error', { allowEmptyCatch: true }] },
  },
  {
    // The plain ES modules the Makefile runs before anything is built (no types to check).
    files: ['**/*.mjs', '**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly' },
    },
  },
  {
    // CommonJS configuration files of tools (dependency-cruiser reads .dependency-cruiser.cjs).
    files: ['**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'commonjs',
      globals: { module: 'writable', require: 'readonly' },
    },
  },
);
