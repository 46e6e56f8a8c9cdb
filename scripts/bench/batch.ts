/**
 * Batch latency with a repository that already holds many objects: p50 and p99 of
 * sequential batch requests naming 100 and 1,000 objects, downloads of stored objects and uploads
 * of new ones, on SQLite and on PostgreSQL, against pactum (`pactum serve` from dist/) and a bare
 * node:http server doing the same indexed query and signing (targets/batch-servers.ts), run side by
 * side against the same database. Goal, for each case: pactum's p50 at most 1.2 times the bare
 * driver's. The printed and recorded ratio is bare p50 / pactum p50 (higher is better, 1 is a
 * tie), so the goal reads ratio >= 0.83 (1 / 1.2).
 *
 *   npx tsx scripts/bench/batch.ts [--stored 100000] [--requests 200] [--backends sqlite,postgres]
 *   (PostgreSQL: PACTUM_BENCH_PG_URL, default postgres://postgres@127.0.0.1:5432/test; a fresh
 *   database is created and dropped)
 */
import { createHash, randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { isPostgres, openDb, type Db } from '../../src/db/knex.js';
import { fmt, median, record, startTarget, type Target } from './lib.js';
import { startPactum, type Pactum } from './pactum-process.js';

const { values } = parseArgs({ options: { stored: { type: 'string', default: '100000' }, requests: { type: 'string', default: '200' }, backends: { type: 'string', default: 'sqlite,postgres' } } });
const STORED = Number(values.stored);
const REQUESTS = Number(values.requests);
const pgAdminUrl = process.env.PACTUM_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const baselineScript = new URL('./targets/batch-servers.ts', import.meta.url).href;

const oidOf = (tag: string, i: number) => createHash('sha256').update(`${tag} ${i}`).digest('hex');
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** One batch request on a kept-alive connection; its time until the whole answer arrived. */
function post(url: string, headers: Record<string, string>, body: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/vnd.git-lfs+json', accept: 'application/vnd.git-lfs+json', 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => (n += c.length));
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`${url} answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function seed(db: Db, repoName: string): Promise<string> {
  const repo = await db('repos').where({ name: repoName }).first<{ id: string }>('id');
  const created_at = new Date().toISOString();
  const rows = Array.from({ length: STORED }, (_, i) => ({ repo_id: repo.id, oid: oidOf('stored', i), size: 1000 + i, created_at, deleted_at: null, deleted_reason: null }));
  await db.transaction(async (tx) => {
    for (let i = 0; i < rows.length; i += 500) await tx('lfs_objects').insert(rows.slice(i, i + 500));
  });
  // What autovacuum does about a minute after such an insert: without statistics PostgreSQL plans
  // the lookup as a scan of the whole repository (18 ms for 100,000 rows instead of 0.6 ms).
  await db.raw(isPostgres(db) ? 'analyze lfs_objects' : 'analyze');
  return repo.id;
}

interface Figures { p50: number; p99: number }
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

async function measure(url: string, headers: Record<string, string>, operation: 'upload' | 'download', n: number): Promise<Figures> {
  const times: number[] = [];
  for (let r = 0; r < REQUESTS + 20; r++) {
    // Downloads name stored objects; uploads name objects the repository does not have.
    const objects = Array.from({ length: n }, (_, i) => ({ oid: operation === 'download' ? oidOf('stored', (r * n + i) % STORED) : oidOf(`new ${r}`, i), size: operation === 'download' ? 1000 + ((r * n + i) % STORED) : 5000 }));
    const ms = await post(url, headers, JSON.stringify({ operation, transfers: ['basic'], objects, hash_algo: 'sha256' }));
    if (r >= 20) times.push(ms); // the first 20 warm the caches
  }
  return { p50: median(times), p99: percentile(times, 99) };
}

/** The goal: pactum's p50 at most this many times the bare driver's. */
const MAX_SLOWDOWN = 1.2;

const cases = [
  ['download', 100],
  ['download', 1000],
  ['upload', 100],
  ['upload', 1000],
] as const;

const table: string[] = [];
for (const backend of values.backends.split(',')) {
  let pgDb: string | null = null;
  let env: Record<string, string> = {};
  if (backend === 'postgres') {
    pgDb = `pactum_bench_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: pgAdminUrl });
    await admin.connect();
    await admin.query(`create database ${pgDb}`);
    await admin.end();
    const u = new URL(pgAdminUrl);
    u.pathname = `/${pgDb}`;
    env = { DATABASE_URL: u.toString() };
  }
  const pactum: Pactum = await startPactum(env);
  const db = openDb({ databaseUrl: env.DATABASE_URL ?? null, dataDir: pactum.dataDir });
  const started = performance.now();
  const repoId = await seed(db, 'objects');
  await db.destroy();
  console.log(`${backend}: ${fmt(STORED)} objects stored in the repository (${fmt((performance.now() - started) / 1000, 1)} s)`);
  const baseline: Target = await startTarget(baselineScript, [], { BENCH_DB: env.DATABASE_URL ?? `sqlite:${join(pactum.dataDir, 'pactum.sqlite')}`, BENCH_REPO: repoId });
  for (const [operation, n] of cases) {
    const b = await measure(baseline.url, {}, operation, n);
    const p = await measure(`${pactum.lfs}/objects/batch`, { authorization: pactum.auth }, operation, n);
    const ratio = b.p50 / p.p50;
    const met = p.p50 <= MAX_SLOWDOWN * b.p50;
    const line = `${backend.padEnd(8)} ${operation.padEnd(8)} ${String(n).padStart(5)} objects: pactum p50 ${fmt(p.p50, 2)} ms p99 ${fmt(p.p99, 2)} ms; bare driver p50 ${fmt(b.p50, 2)} ms; ratio (bare / pactum) ${fmt(ratio, 2)} (goal >= ${fmt(1 / MAX_SLOWDOWN, 2)}: ${met ? 'met' : 'NOT met'})`;
    console.log(line);
    table.push(line);
    record({ bench: 'batch', measure: `${backend} ${operation} ${n} objects, ${fmt(STORED)} stored, p50`, value: p.p50, unit: 'ms', baseline: { name: 'bare driver, same query', value: b.p50 }, ratio, goal: `>= ${fmt(1 / MAX_SLOWDOWN, 2)} (pactum p50 <= ${MAX_SLOWDOWN}x bare)`, met });
  }
  await baseline.stop();
  await pactum.stop();
  if (pgDb) {
    const admin = new pg.Client({ connectionString: pgAdminUrl });
    await admin.connect();
    await admin.query(`drop database ${pgDb} with (force)`);
    await admin.end();
  }
}
agent.destroy();
console.log(`\ngoal: pactum p50 <= ${MAX_SLOWDOWN}x the bare driver's, i.e. ratio (bare p50 / pactum p50) >= ${fmt(1 / MAX_SLOWDOWN, 2)}\n${table.join('\n')}`);
