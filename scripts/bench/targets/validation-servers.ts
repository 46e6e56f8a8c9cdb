/**
 * Benchmark targets for scripts/bench/validation.ts, one per process:
 *   plain   Koa + @koa/router: read the JSON body, answer a fixed JSON. No validation.
 *   router  Koa + pactum's spec router (the generated route table bound through @koa/router):
 *           match, negotiate, validate parameters and body with the generated validators, answer
 *           the same fixed JSON through the same reply path.
 *   backend Koa + openapi-backend, the design card's binder, as a skilled user runs it on 3.1:
 *           quick init, its own (draft-07) validation off, getOperations memoized (it rebuilds
 *           the operation list with lodash on every request otherwise), and the same generated
 *           validators and reply as the router; the three specs' operations, as the server has.
 * All serve POST /{org}/{repo}.git/info/lfs/objects/batch.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import getRawBody from 'raw-body';
import { readFileSync } from 'node:fs';
import { OpenAPIBackend, type Context as BackendContext } from 'openapi-backend';
import { operations } from '../../../generated/operations.js';
import { createRouter, type Handlers } from '../../../src/http/router.js';
import { errorBoundary } from '../../../src/http/app.js';

const reply = {
  transfer: 'basic',
  objects: [{ oid: '5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03', size: 6, actions: { download: { href: 'http://127.0.0.1/x', expires_in: 3600 } } }],
};

const app = new Koa();
if (process.argv[2] === 'plain') {
  const router = new Router();
  router.post('/:org/:repo/info/lfs/objects/batch', async (ctx) => {
    const body = JSON.parse(await getRawBody(ctx.req, { limit: 4 << 20, encoding: 'utf8' })) as unknown;
    if (!body) ctx.throw(400);
    ctx.type = 'application/vnd.git-lfs+json';
    ctx.body = JSON.stringify(reply);
  });
  app.use(router.routes());
} else if (process.argv[2] === 'backend') {
  app.use(errorBoundary());
  app.use(await openapiBackend());
} else {
  const handlers = Object.fromEntries(operations.map((o) => [o.operationId, () => ({ status: 200, body: reply })])) as unknown as Handlers;
  app.use(errorBoundary());
  app.use(
    createRouter({
      handlers,
      security: { basicAuth: () => null, transferToken: () => null, bearerAuth: () => null, sessionCookie: () => null },
      challenge: () => ({}),
      maxJsonBytes: 4 << 20,
      maxAnonymousJsonBytes: 4 << 20,
      allowedOrigins: [],
    }),
  );
}

/** What mergedDefinition reads of a bundled spec. */
interface BundledSpec { servers?: { url: string }[]; paths: Record<string, unknown>; components?: Record<string, Record<string, unknown>> }

/** The three bundled specs as one document, each path under its server's base path. */
function mergedDefinition() {
  const definition = { openapi: '3.1.0', info: { title: 'pactum', version: '1' }, paths: {} as Record<string, unknown>, components: {} as Record<string, Record<string, unknown>> };
  for (const api of ['dashboard', 'legacy', 'batch']) {
    const doc = JSON.parse(readFileSync(new URL(`../../../generated/specs/${api}.json`, import.meta.url), 'utf8')) as BundledSpec;
    const base = (doc.servers?.[0]?.url ?? '').replace(/^[a-z]+:\/\/[^/]+/i, '').replace(/\/$/, '');
    for (const [path, item] of Object.entries(doc.paths)) definition.paths[base + path] = item;
    for (const [kind, entries] of Object.entries(doc.components ?? {})) Object.assign((definition.components[kind] ??= {}), entries);
  }
  return definition;
}

async function openapiBackend(): Promise<Koa.Middleware> {
  const api = new OpenAPIBackend({ definition: mergedDefinition() as never, quick: true, validate: false });
  const byId = new Map(operations.map((o) => [o.operationId, o]));
  api.register({
    'batch.batch': (c: BackendContext<unknown, Record<string, string>>, ctx: Koa.Context) => {
      const op = byId.get('batch.batch')!;
      const params = { ...c.request.params, accept: ctx.get('accept'), 'content-type': ctx.get('content-type') };
      if (op.validateParams && !op.validateParams(params)) ctx.throw(422);
      if (!ctx.is(op.requestBody!.mediaTypes as string[])) ctx.throw(415);
      if (!op.requestBody!.validate!(c.request.requestBody)) ctx.throw(422);
      ctx.type = 'application/vnd.git-lfs+json';
      ctx.body = JSON.stringify(reply);
    },
    notFound: (_c: BackendContext, ctx: Koa.Context) => ctx.throw(404),
    notImplemented: (_c: BackendContext, ctx: Koa.Context) => ctx.throw(501),
  });
  await api.init();
  const all = api.router.getOperations();
  api.router.getOperations = () => all;
  return async (ctx) => {
    const text = await getRawBody(ctx.req, { limit: 4 << 20, encoding: 'utf8' });
    await api.handleRequest({ method: ctx.method, path: ctx.path, query: ctx.querystring, headers: ctx.headers as Record<string, string>, body: JSON.parse(text) as unknown }, ctx);
  };
}

const handle = app.callback();
const server = createServer((req, res) => void handle(req, res)).listen(0, '127.0.0.1', () => {
  process.send!({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
