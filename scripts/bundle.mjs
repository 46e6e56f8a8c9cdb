#!/usr/bin/env node
/**
 * The production build of the `pactum` command: dist/src/ (what tsc or the quick build emitted)
 * bundled by esbuild into dist/pactum/, the script `make run`, `make serve` and the package's bin
 * start.
 *
 * Why a bundle: an idle server keeps in memory the source text of every module it loaded (V8
 * compiles functions lazily, from the source) and a module record for each. Unbundled, serving
 * loads ~750 modules, 6 MB of source; bundled, a few chunks of ~2.5 MB, and module loading is no
 * longer hot enough for V8 to optimise its own loader. Idle RSS falls by ~9 MB
 * (`npx tsx scripts/bench/objects.ts` prints it).
 *
 * What is not bundled, and why:
 *   - native addons and what spawns or reads files by path from its own package (better-sqlite3,
 *     pg, piscina, jsdom, axe-core, swagger-ui-dist, esbuild, pino-pretty);
 *   - what only some deployments or some requests load (the AWS SDK, OpenTelemetry, pg-boss,
 *     prom-client, undici, tinyld): loaded from node_modules on first use, as before, so the
 *     bundle holds nothing an idle server does not run;
 *   - knex's drivers for databases pactum does not use.
 * Dynamic imports stay dynamic (chunks, loaded on first use). The worker threads' modules are
 * entry points of their own (tasks.js, check-task.js), found next to the chunk that starts them, and
 * the generated validators are copied, minified, to validators/ beside the chunks.
 *
 * Identifiers are not renamed (whitespace and syntax only): class and function names stay what
 * the code says, in stack traces and wherever a name is read. Source maps are written beside the
 * chunks; `NODE_OPTIONS=--enable-source-maps` maps stack traces back to src/.
 *
 *   node scripts/bundle.mjs      (after `make build` or scripts/transpile.mjs)
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const from = join(root, 'dist', 'src');
const out = join(root, 'dist', 'pactum');
if (!existsSync(join(from, 'cli', 'main.js'))) throw new Error('dist/src/cli/main.js is missing: build first (make build)');

const NOT_BUNDLED = [
  'better-sqlite3', 'pg', 'pg-native', 'pg-boss', 'piscina', 'jsdom', 'axe-core', 'swagger-ui-dist', 'esbuild', 'tsx', 'pino-pretty',
  '@aws-sdk/*', '@smithy/*', '@opentelemetry/*', 'prom-client', 'undici', 'tinyld', 'json-schema-faker',
  'mysql', 'mysql2', 'mariadb', 'mariadb/*', 'oracledb', 'tedious', 'sqlite3', 'pg-query-stream',
];

rmSync(out, { recursive: true, force: true });
await esbuild.build({
  entryPoints: { main: join(from, 'cli', 'main.js'), tasks: join(from, 'compute', 'tasks.js'), 'check-task': join(from, 'compute', 'check-task.js') },
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  legalComments: 'none',
  external: NOT_BUNDLED,
  // The CommonJS packages inside call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as __pactumRequire } from 'node:module'; const require = __pactumRequire(import.meta.url);" },
  logLevel: 'warning',
});
// The generated validators, loaded by generated/operations.ts on first use from beside the chunk
// that holds it: minified in full (no name in them is read or shown, and V8 keeps a loaded
// module's source in memory, so shorter is smaller).
mkdirSync(join(out, 'validators'));
for (const file of readdirSync(join(root, 'generated', 'validators')).filter((f) => f.endsWith('.cjs'))) {
  const { code } = await esbuild.transform(readFileSync(join(root, 'generated', 'validators', file), 'utf8'), { minify: true, format: 'cjs', loader: 'js', legalComments: 'none' });
  writeFileSync(join(out, 'validators', file), code);
}
// The report view's script and style, bundled now rather than at first use: the package carries
// them instead of esbuild (src/report-view/document.ts reads them from here).
const { viewAssets } = await import(join(from, 'report-view', 'document.js'));
const view = await viewAssets();
mkdirSync(join(out, 'report-view'));
writeFileSync(join(out, 'report-view', 'view.js'), view.script);
writeFileSync(join(out, 'report-view', 'style.css'), view.style);
writeFileSync(join(out, 'report-view', 'page.js'), view.pageScript);
// The package's bin: esbuild keeps main.ts's #! line, not the execute bit.
chmodSync(join(out, 'main.js'), 0o755);
