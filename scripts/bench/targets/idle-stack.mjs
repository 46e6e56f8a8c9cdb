/**
 * The floor under pactum's idle memory: a minimal server built on the libraries pactum serves
 * with (Koa, @koa/router, knex on better-sqlite3 with one table, pino writing to a file, jose
 * imported), one route, listening on loopback. scripts/bench/objects.ts starts it with pactum's
 * malloc arenas and reads its RSS 1 s after it listens, beside pactum's: what pactum adds above
 * its stack is the difference. Plain JavaScript, run by node itself (a TypeScript loader would
 * add its own memory). Prints its URL on stdout.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Router from '@koa/router';
import * as jose from 'jose';
import knex from 'knex';
import Koa from 'koa';
import pino from 'pino';

const dir = mkdtempSync(join(tmpdir(), 'bench-idle-stack-'));
const db = knex({ client: 'better-sqlite3', connection: { filename: join(dir, 'db.sqlite') }, useNullAsDefault: true });
await db.schema.createTable('objects', (t) => {
  t.string('oid').primary();
  t.bigInteger('size');
});
const log = pino(pino.destination({ dest: join(dir, 'log'), sync: false }));
const router = new Router();
router.get('/objects/:oid', async (ctx) => {
  ctx.body = (await db('objects').where({ oid: ctx.params.oid }).first()) ?? { missing: ctx.params.oid, alg: typeof jose.jwtVerify };
});
const app = new Koa();
app.use(router.routes());
const server = app.listen(0, '127.0.0.1', () => {
  log.info('listening');
  console.log(`http://127.0.0.1:${server.address().port}`);
});
process.on('SIGTERM', () => {
  server.close();
  void db.destroy().finally(() => {
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
});
