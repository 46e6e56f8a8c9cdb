/**
 * The one document the partner clients are generated from: the three bundled specs
 * (generated/specs/*.json) as one HTTP surface, so that each language gets one client (one
 * pom.xml, one go.mod, one pyproject.toml, one package.json) rather than three.
 *
 *   tsx scripts/clients/spec.ts OUT.json
 *
 * - The dashboard's paths stay as they are, under the server's root.
 * - The object APIs' paths are served under `/{org}/{repo}.git/info/lfs` (their `servers` entry,
 *   whose variables become path parameters of every object operation). The transfer paths both
 *   object APIs declare (`/content/{oid}`, `/verify`) are one operation each: they must be equal.
 * - Components: the object APIs' components that share a name with a different dashboard component
 *   (error responses, headers) are renamed `Objects<Name>`, and their references follow. Security
 *   schemes of the same name may differ only in their description.
 * - Every operation carries its own spec's top-level `security` unless it declares one.
 *
 * Four adaptations for OpenAPI Generator 7.x change no meaning:
 * - a binary schema in the 3.1 form (`type: string, contentMediaType: application/octet-stream`)
 *   also gets the 3.0 form's `format: binary`, so that generators give it a byte/file type;
 * - a request body declared for any media type (the upload, which accepts any content type) is
 *   declared as `application/octet-stream`, the one type these clients send;
 * - an integer without a format is `format: int64`: JSON integers have no 32-bit bound, and object
 *   sizes and upload offsets go up to 1 TiB, past the int32 that Java and Go would otherwise get;
 * - in descriptions and summaries, the slash of a star-slash is U+2215 (a division slash, which
 *   looks the same): they are copied into block comments, and the Go generator does not escape
 *   a star-slash there, which ended the comment and broke the file.
 *
 * Nothing is invented: every operation, schema and response is one of the specs', and the checks
 * above fail loudly rather than pick one of two different definitions.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const OBJECTS_PREFIX = '/{org}/{repo}.git/info/lfs';

const read = (name: string) => JSON.parse(readFileSync(join(root, 'generated', 'specs', `${name}.json`), 'utf8')) as Obj;
const same = (a: Json | undefined, b: Json | undefined) => JSON.stringify(a) === JSON.stringify(b);
const obj = (v: Json | undefined): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v : {});
/** A field the specs declare as a string; anything else is a broken spec. */
const str = (v: Json | undefined, what: string): string => {
  if (typeof v !== 'string') throw new Error(`${what}: expected a string in the specs, found ${JSON.stringify(v)}`);
  return v;
};

/** Rewrites every `$ref` of `node` through `map` (old pointer → new pointer). */
function rewriteRefs(node: Json, map: Map<string, string>): Json {
  if (Array.isArray(node)) return node.map((n) => rewriteRefs(n, map));
  if (node === null || typeof node !== 'object') return node;
  const out: Obj = {};
  for (const [k, v] of Object.entries(node)) out[k] = k === '$ref' && typeof v === 'string' ? (map.get(v) ?? v) : rewriteRefs(v, map);
  return out;
}

export function mergeSpecs(dashboard: Obj, legacy: Obj, batch: Obj): Obj {
  // The object APIs first, as one: their shared components must agree.
  const objects: Obj = { paths: {}, components: {} };
  const objectsSecurity = batch.security ?? null;
  if (!same(legacy.security, batch.security)) throw new Error('legacy and batch declare different top-level security');
  if (!same(legacy.servers, batch.servers)) throw new Error('legacy and batch declare different servers');
  for (const spec of [batch, legacy]) {
    for (const [section, entries] of Object.entries(obj(spec.components))) {
      const into = obj((obj(objects.components)[section] ??= {}));
      for (const [name, def] of Object.entries(obj(entries))) {
        const prior = into[name];
        if (prior !== undefined && !same(prior, def)) {
          const { description: _a, ...p } = obj(prior);
          const { description: _b, ...d } = obj(def);
          if (section !== 'securitySchemes' || !same(p, d)) throw new Error(`legacy and batch both define components.${section}.${name}, differently`);
          continue;
        }
        into[name] = def;
      }
    }
    for (const [path, item] of Object.entries(obj(spec.paths))) {
      const paths = obj(objects.paths);
      if (paths[path] !== undefined && !same(paths[path], item)) throw new Error(`legacy and batch both declare ${path}, differently`);
      paths[path] = item;
    }
  }

  // Rename the object components that clash with a different dashboard component.
  const refMap = new Map<string, string>();
  const objectComponents: Obj = {};
  const dashComponents = obj(dashboard.components);
  for (const [section, entries] of Object.entries(obj(objects.components))) {
    const renamed: Obj = {};
    for (const [name, def] of Object.entries(obj(entries))) {
      const clash = obj(dashComponents[section])[name];
      let target = name;
      if (clash !== undefined && !same(clash, def)) {
        if (section === 'securitySchemes') throw new Error(`security scheme ${name} means two things`);
        target = `Objects${name.charAt(0).toUpperCase()}${name.slice(1)}`;
        if (obj(dashComponents[section])[target] !== undefined) throw new Error(`cannot rename components.${section}.${name}: ${target} is taken`);
        refMap.set(`#/components/${section}/${name}`, `#/components/${section}/${target}`);
      }
      renamed[target] = def;
    }
    objectComponents[section] = renamed;
  }

  // The object APIs' server variables become path parameters of each object path.
  const server = obj((batch.servers as Json[])[0]);
  const variables = obj(server.variables);
  const serverPath = new URL(str(server.url, 'servers[0].url').replace(/\{(\w+)\}/g, 'x$1x')).pathname.replace(/x(\w+)x/g, '{$1}');
  if (serverPath !== OBJECTS_PREFIX) throw new Error(`the object APIs' server path is ${serverPath}, expected ${OBJECTS_PREFIX}`);
  const serverParams: Json[] = Object.entries(variables).map(([name, v]) => ({
    name,
    in: 'path',
    required: true,
    description: str(obj(v).description ?? name, `server variable ${name}`),
    schema: { type: 'string', examples: [obj(v).default ?? name] },
  }));

  const paths: Obj = {};
  const withSecurity = (item: Obj, security: Json): Obj => {
    const out: Obj = { ...item };
    for (const m of METHODS) if (out[m] !== undefined && obj(out[m]).security === undefined && security !== null) out[m] = { ...obj(out[m]), security };
    return out;
  };
  for (const [path, item] of Object.entries(obj(dashboard.paths))) paths[path] = withSecurity(obj(item), dashboard.security ?? null);
  for (const [path, item] of Object.entries(obj(objects.paths))) {
    const full = `${OBJECTS_PREFIX}${path}`;
    if (paths[full] !== undefined) throw new Error(`${full} is declared by the dashboard too`);
    const it = withSecurity(obj(rewriteRefs(item, refMap)), objectsSecurity);
    it.parameters = [...serverParams, ...((it.parameters as Json[] | undefined) ?? [])];
    paths[full] = it;
  }

  const components: Obj = {};
  for (const section of new Set([...Object.keys(dashComponents), ...Object.keys(objectComponents)])) {
    const merged: Obj = { ...obj(dashComponents[section]) };
    for (const [name, def] of Object.entries(obj(objectComponents[section]))) {
      if (merged[name] !== undefined && !same(merged[name], def)) throw new Error(`components.${section}.${name} clashes`);
      merged[name] = rewriteRefs(def, refMap);
    }
    components[section] = merged;
  }

  for (const item of Object.values(paths)) {
    for (const m of METHODS) {
      const content = obj(obj(obj(obj(item)[m]).requestBody).content);
      if (content['*/*'] !== undefined && content['application/octet-stream'] === undefined) {
        content['application/octet-stream'] = content['*/*'];
        delete content['*/*'];
      }
    }
  }
  const formats = (node: Json): void => {
    if (Array.isArray(node)) return node.forEach(formats);
    if (node === null || typeof node !== 'object') return;
    if (node.type === 'string' && node.contentMediaType === 'application/octet-stream' && node.format === undefined) node.format = 'binary';
    for (const key of ['description', 'summary']) {
      const text = node[key];
      if (typeof text === 'string') node[key] = text.split('*/').join('*\u2215');
    }
    const integer = node.type === 'integer' || (Array.isArray(node.type) && node.type.includes('integer'));
    if (integer && node.format === undefined) node.format = 'int64';
    Object.values(node).forEach(formats);
  };
  formats(paths);
  formats(components);

  const tags: Json[] = [];
  for (const spec of [dashboard, batch, legacy]) for (const t of (spec.tags as Json[] | undefined) ?? []) if (!tags.some((x) => obj(x).name === obj(t).name)) tags.push(t);
  formats(tags);
  const info = (s: Obj) => obj(s.info);
  return {
    openapi: dashboard.openapi ?? '3.1.0',
    info: {
      title: 'pactum',
      version: str(info(dashboard).version, 'info.version'),
      summary: 'The dashboard MCP endpoint and the Git LFS object APIs of one pactum server.',
      description:
        `Made by \`make clients\` from generated/specs: ${[dashboard, legacy, batch].map((s) => `${str(info(s).title, 'info.title')} ${str(info(s).version, 'info.version')}`).join(', ')}. ` +
        `The object APIs' operations take the repository's \`org\` and \`repo\` as path parameters (their base URL is \`${OBJECTS_PREFIX}\`).`,
      license: info(dashboard).license ?? { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: str(obj((dashboard.servers as Json[])[0]).url, 'servers[0].url'), description: 'A local `make run`.' }],
    tags,
    paths,
    components,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  if (!out) throw new Error('usage: tsx scripts/clients/spec.ts OUT.json');
  const doc = mergeSpecs(read('dashboard'), read('legacy'), read('batch'));
  mkdirSync(dirname(resolve(out)), { recursive: true });
  writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
  const ops = Object.values(obj(doc.paths)).reduce<number>((n, item) => n + METHODS.filter((m) => obj(item)[m] !== undefined).length, 0);
  console.log(`${out}: ${ops} operations, ${Object.keys(obj(obj(doc.components).schemas)).length} schemas`);
}
