/**
 * The baseline of scripts/bench/batch.ts: a bare node:http server answering a batch request the
 * way a skilled user of the database driver would write it, against the same database pactum
 * uses: one indexed query for all the oids (better-sqlite3: a prepared statement over
 * json_each(?); pg: `oid = any($2)`), one HMAC-SHA256 token per action, the JSON answer. No
 * validation, authentication, rate limit or media-type negotiation: what is left of pactum's
 * time above this one is what those cost.
 *
 * Signing stays one createHmac per object with the raw key, as pactum did before its batch tokens
 * (format 3: one keyed signature per batch, a short MAC per object, objects/transfer-tokens.ts).
 * That is the token a skilled user writes for "each action carries its own signed grant"; the
 * two-level scheme is pactum's design, not the driver's, so the baseline does not get it. Its
 * cost is real: createHmac with a raw key spends most of its ~8 µs re-importing the key, so for
 * 1,000 objects signing is a large part of this server's time.
 *
 *   BENCH_DB=sqlite:<file> | postgres://…   BENCH_REPO=<repo id>
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import pg from 'pg';

interface Row { oid: string; size: number | string; deleted_at: string | null }
interface BatchRequest { operation: 'upload' | 'download'; objects: { oid: string; size: number }[] }

const require = createRequire(import.meta.url);
const target = process.env.BENCH_DB!;
const repoId = process.env.BENCH_REPO!;
const key = randomBytes(32);
const base = 'http://127.0.0.1/bench/objects.git/info/lfs';

let find: (oids: string[]) => Promise<Row[]>;
if (target.startsWith('sqlite:')) {
  // The driver pactum loads.
  type Database = new (file: string, opts: { readonly: boolean }) => { prepare(sql: string): { all(...args: unknown[]): Row[] } };
  const Sqlite = require('better-sqlite3') as Database;
  const db = new Sqlite(target.slice('sqlite:'.length), { readonly: true });
  const stmt = db.prepare('select oid, size, deleted_at from lfs_objects where repo_id = ? and oid in (select value from json_each(?))');
  find = (oids) => Promise.resolve(stmt.all(repoId, JSON.stringify(oids)));
} else {
  const pool = new pg.Pool({ connectionString: target, max: 4 });
  find = async (oids) => (await pool.query<Row>('select oid, size, deleted_at from lfs_objects where repo_id = $1 and oid = any($2)', [repoId, oids])).rows;
}

const sign = (claims: unknown[]) => {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${createHmac('sha256', key).update(payload).digest('base64url')}`;
};

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    void (async () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as BatchRequest;
      const rows = new Map((await find(body.objects.map((o) => o.oid))).map((r) => [r.oid, r]));
      const exp = Math.floor(Date.now() / 1000) + 3600;
      const objects = body.objects.map(({ oid, size }) => {
        const row = rows.get(oid);
        const header = { Authorization: `Bearer ${sign([2, repoId, oid, size, body.operation, 'bench', 'bench', 'org', exp, 1])}` };
        if (body.operation === 'download') {
          return row && !row.deleted_at ? { oid, size: Number(row.size), actions: { download: { href: `${base}/content/${oid}`, header, expires_in: 3600 } } } : { oid, size, error: { code: 404, message: 'Object does not exist' } };
        }
        if (row && !row.deleted_at) return { oid, size };
        return { oid, size, actions: { upload: { href: `${base}/content/${oid}`, header, expires_in: 3600 }, verify: { href: `${base}/verify`, header, expires_in: 3600 } } };
      });
      res.writeHead(200, { 'content-type': 'application/vnd.git-lfs+json' }).end(JSON.stringify({ transfer: 'basic', hash_algo: 'sha256', objects }));
    })();
  });
}).listen(0, '127.0.0.1', () => process.send!({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
