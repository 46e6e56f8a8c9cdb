/**
 * The route table of generated/operations.ts bound through @koa/router: the specs are the only
 * routing table, and the library does the path matching and parameter decoding. Shared by the
 * server's router and the conformance runner, which must classify a request as the server does.
 */
import Router, { type RouterInstance, type RouterMiddleware } from '@koa/router';
import { operations, routes, type HttpMethod, type OperationSpec, type RouteSpec } from '../../generated/operations.js';

export const operationById = new Map(operations.map((op) => [op.operationId, op]));

/**
 * The route table as @koa/router layers, most specific template first, each answering every
 * method: the first template that matches serves the request or answers 405 with its Allow (so a
 * GET of .../objects/batch is a 405, not a download of an object named "batch").
 */
export function specRoutes(bind: (spec: RouteSpec) => RouterMiddleware): RouterInstance {
  const router = new Router({ strict: true, sensitive: true });
  for (const spec of routes) router.all(spec.template, spec.routerPath, bind(spec));
  return router;
}

/** The operation that serves `method path`, as the server's router chooses it (HEAD falls back to GET). */
export function operationFor(method: string, path: string): OperationSpec | undefined {
  const layer = lookup.match(path, method).pathAndMethod[0];
  if (!layer) return undefined;
  const spec = routes.find((r) => r.template === layer.name)!;
  const id = Object.values(spec.methods).find((i) => operationById.get(i)!.tool) ?? spec.methods[method as HttpMethod] ?? (method === 'HEAD' ? spec.methods.GET : undefined);
  return id ? operationById.get(id) : undefined;
}
const lookup = specRoutes(() => async () => {});

