/**
 * What the report view's bundle leaves out of its dependencies, so the MCP App resource stays
 * small (at most 150 kB). ext-apps' App validates every message with zod (its own schemas and the
 * MCP SDK's), so zod stays, but only the parts a view reaches at run time:
 *
 * - ext-apps imports zod as the whole `z` namespace object, and loads it again by a dynamic
 *   import to turn App-registered tools' schemas into JSON Schema: either keeps every one of
 *   zod's exports. Importing it as a module namespace lets the bundler keep only what is used;
 *   the view registers no tools of its own, so the dynamic import is refused instead.
 * - `.describe("…")` texts on ext-apps' schemas only feed JSON Schema generation; parsing never
 *   reads them.
 * - zod's JSON Schema generation (reached only through `toJSONSchema` and `~standard.jsonSchema`)
 *   is replaced by functions that throw if called.
 *
 * Each rewrite checks that it found what it rewrites: a new ext-apps or zod that changes shape
 * fails the bundle loudly instead of silently shipping everything again.
 */
import { readFile } from 'node:fs/promises';
import type { Plugin } from 'esbuild';

const EXT_APPS_APP = /[\\/]@modelcontextprotocol[\\/]ext-apps[\\/]dist[\\/]src[\\/]app\.js$/;
const ZOD_JSON_SCHEMA = /^\.\.\/core\/(json-schema-processors|to-json-schema)\.js$/;
const ZOD_CLASSIC_SCHEMAS = /[\\/]zod[\\/]v4[\\/]classic[\\/]schemas\.js$/;

const NAMED_Z_IMPORT = /import\{z as ([\w$]+)\}from"zod\/v4"/g;
const DYNAMIC_Z_IMPORT = 'await import("zod/v4")';
/** `.describe(…)` with one string literal argument (double, single or back quotes, no `${}`). */
const DESCRIBE = /\.describe\((?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\$]|\\.)*`)\)/g;

class TrimError extends Error {}

/** ext-apps' App module with zod imported as a namespace, no dynamic zod import, no descriptions. */
export function trimExtApps(source: string): string {
  if (source.search(NAMED_Z_IMPORT) < 0) throw new TrimError('report view bundle: ext-apps no longer imports `z` from "zod/v4"');
  if (!source.includes(DYNAMIC_Z_IMPORT)) throw new TrimError(`report view bundle: ext-apps no longer has ${DYNAMIC_Z_IMPORT}`);
  const trimmed = source
    .replace(NAMED_Z_IMPORT, 'import*as $1 from"zod/v4"')
    .replace(DYNAMIC_Z_IMPORT, 'await Promise.reject(Error("The report view registers no tools: JSON Schema for tool schemas is not bundled"))')
    .replace(DESCRIBE, '');
  if (trimmed.includes('.describe(')) throw new TrimError('report view bundle: an ext-apps .describe() call has a form the trim does not know');
  return trimmed;
}

/** The names a zod module exports (`export const|function|class x`, `export { a as b }`). */
export function exportedNames(source: string): string[] {
  const names = new Set<string>();
  for (const m of source.matchAll(/^export (?:async )?(?:function\*?|const|let|class) ([\w$]+)/gm)) names.add(m[1]!);
  for (const m of source.matchAll(/^export \{([^}]*)\}/gm)) {
    for (const part of m[1]!.split(',')) {
      const name = part.trim().split(/\s+as\s+/).pop();
      if (name) names.add(name);
    }
  }
  return [...names];
}

/**
 * A stand-in for one of zod's JSON Schema modules: every export throws when called, except the
 * `create…Method` factories, which zod calls when building `~standard` and which return the
 * thrower (so validation through `~standard` still works).
 */
export function jsonSchemaStandIn(names: string[]): string {
  const lines = ['const unavailable = () => { throw new Error("JSON Schema generation is not bundled in the report view"); };'];
  for (const name of names) lines.push(`export const ${name} = ${/^create\w*Method$/.test(name) ? '() => unavailable' : 'unavailable'};`);
  return lines.join('\n');
}

export const trimDependencies: Plugin = {
  name: 'report-view-trim',
  setup(build) {
    build.onLoad({ filter: EXT_APPS_APP }, async (args) => ({ contents: trimExtApps(await readFile(args.path, 'utf8')), loader: 'js' }));
    build.onResolve({ filter: ZOD_JSON_SCHEMA }, async (args) => {
      if (!ZOD_CLASSIC_SCHEMAS.test(args.importer)) return undefined;
      const real = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir });
      if (real.errors.length > 0) return { errors: real.errors };
      return { path: real.path, namespace: 'zod-json-schema-stand-in' };
    });
    build.onLoad({ filter: /.*/, namespace: 'zod-json-schema-stand-in' }, async (args) => {
      const names = exportedNames(await readFile(args.path, 'utf8'));
      if (names.length === 0) throw new TrimError(`report view bundle: no exports found in ${args.path}`);
      return { contents: jsonSchemaStandIn(names), loader: 'js' };
    });
  },
};
