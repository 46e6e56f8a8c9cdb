/**
 * The route table of generated/operations.ts bound through @koa/router: the specs are the only
 * routing table, and the library does the path matching and parameter decoding. Shared by the
 * server's router and the conformance runner, which must classify a request as the server does.
 */
import { createRequire } from 'node:module';
import type RouterClass from '@koa/router';
import type { RouterInstance } from '@koa/router';
import { operations, routes, type HttpMethod, type OperationSpec, type RouteSpec } from '../../generated/operations.js';

// Its CommonJS build, through require: the ES build imports node:http as an ES module, which
// loads Node's bundled undici and http2 (~13 MB resident; see node-http.ts).
const Router = (createRequire(import.meta.url)('@koa/router') as { default: typeof RouterClass }).default;

export const operationById = new Map(operations.map((op) => [op.operationId, op]));

/**
 * The route table as @koa/router layers, named by template, most specific first, each answering
 * every method: the first template that matches serves the request or answers 405 with its Allow
 * (so a GET of .../objects/batch is a 405, not a download of an object named "batch"). Only its
 * matching is used (`match`, then the layer's captures and params), never its routes() chain, so
 * the layers carry no middleware of their own.
 */
function specRouter(): RouterInstance {
  const router = new Router({ strict: true, sensitive: true });
  for (const spec of routes) router.all(spec.template, spec.routerPath, (_ctx, next) => next());
  return router;
}

const router = specRouter();
const routeByTemplate = new Map(routes.map((spec) => [spec.template, spec]));

/**
 * What @koa/router answered for a path that is itself a template without parameters (the MCP
 * endpoint, /healthz, each tool's discovery path), by method: its match tests every layer's regexp
 * in turn, about 1.5% of a read tool's CPU, for an answer that cannot change. Bounded by the
 * templates and the methods Node's parser admits.
 */
const staticTemplates = new Set(routes.filter((spec) => !spec.template.includes('{')).map((spec) => spec.template));
const staticMatches = new Map<string, Map<string, RouteSpec | null>>();

/** The route of the first template matching `path` (any method), its parameters decoded by @koa/router. */
export function matchRoute(method: string, path: string): { spec: RouteSpec; params: Record<string, string>; captures: string[] } | undefined {
  if (staticTemplates.has(path)) {
    let byPath = staticMatches.get(method);
    if (!byPath) staticMatches.set(method, (byPath = new Map<string, RouteSpec | null>()));
    let spec = byPath.get(path);
    if (spec === undefined) {
      const layer = router.match(path, method).pathAndMethod[0];
      // A parameterless template's layer has no captures: the path itself is the whole match.
      spec = layer && layer.captures(path).length === 0 ? routeByTemplate.get(layer.name!)! : null;
      if (!layer || spec) byPath.set(path, spec);
      else return routerMatch(method, path);
    }
    return spec ? { spec, params: {}, captures: [] } : undefined;
  }
  return routerMatch(method, path);
}

/**
 * @koa/router's own match, without its cost: Router.match logs a debug line for every layer it
 * tests (a third of a match, debugging off) and collects every matching layer where the first is
 * all we serve. Each layer is tested in the same order, by its own regexp and methods; a layer
 * whose path does not begin with the literal text before its first parameter cannot match it,
 * so that string test spares most regexps (about 11% of a validated request's CPU together).
 */
const layers = router.stack.map((layer) => ({ layer, prefix: /^[^:*?+!(){}[\]\\]*/.exec(layer.path as string)![0], spec: routeByTemplate.get(layer.name!)! }));

function routerMatch(method: string, path: string) {
  const upper = method.toUpperCase();
  for (const { layer, prefix, spec } of layers) {
    if (!path.startsWith(prefix)) continue;
    // Layer.match and Layer.captures in one pass (the layers set no ignoreCaptures).
    const found = layer.regexp.exec(path);
    if (!found || !(layer.methods.length === 0 || layer.methods.includes(upper))) continue;
    const captures = found.slice(1);
    return { spec, params: layer.params(path, captures), captures };
  }
  return undefined;
}

/** The operation that serves `method path`, as the server's router chooses it (HEAD falls back to GET). */
export function operationFor(method: string, path: string): OperationSpec | undefined {
  const spec = matchRoute(method, path)?.spec;
  if (!spec) return undefined;
  const id = Object.values(spec.methods).find((i) => operationById.get(i)!.tool) ?? spec.methods[method as HttpMethod] ?? (method === 'HEAD' ? spec.methods.GET : undefined);
  return id ? operationById.get(id) : undefined;
}

