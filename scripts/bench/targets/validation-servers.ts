/**
 * Benchmark targets for scripts/bench/validation.ts, one per process:
 *   plain   Koa + @koa/router: read the JSON body, answer a fixed JSON. No validation.
 *   router  Koa + pactum's spec router: match, negotiate, validate parameters and body with the
 *           generated validators, answer the same fixed JSON through the same reply path.
 * Both serve POST /{org}/{repo}.git/info/lfs/objects/batch.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import getRawBody from 'raw-body';
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
    const body = JSON.parse(await getRawBody(ctx.req, { limit: 4 << 20, encoding: 'utf8' }));
    if (!body) ctx.throw(400);
    ctx.type = 'application/vnd.git-lfs+json';
    ctx.body = JSON.stringify(reply);
  });
  app.use(router.routes());
} else {
  const handlers = Object.fromEntries(operations.map((o) => [o.operationId, () => ({ status: 200, body: reply })])) as unknown as Handlers;
  app.use(errorBoundary());
  app.use(
    createRouter({
      handlers,
      security: { basicAuth: () => null, transferToken: () => null, bearerAuth: () => null, sessionCookie: () => null },
      challenge: () => ({}),
      maxJsonBytes: 4 << 20,
    }),
  );
}

const server = createServer(app.callback()).listen(0, '127.0.0.1', () => {
  process.send!({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
