/**
 * The better-sqlite3 each Node loads (src/db/sqlite-driver.ts): 12 on Node 20, 13 (Node-API) on
 * Node 22 and later. `make test` runs this file on Node 20 and again on Node 24.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { openDb } from '../../src/db/knex.js';
import { sqliteDriverPackage } from '../../src/db/sqlite-driver.js';

const require = createRequire(import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'pactum-sqlite-driver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('loads the better-sqlite3 made for this Node, and the database works through it', async () => {
  const major = Number(process.versions.node.split('.')[0]);
  const version = (require(`${sqliteDriverPackage}/package.json`) as { version: string }).version;
  expect(Number(version.split('.')[0])).toBe(major >= 22 ? 13 : 12);
  const db = openDb({ databaseUrl: null, dataDir: dir });
  try {
    await db.raw('create table t (id integer primary key)');
    await db('t').insert([{ id: 1 }, { id: 2 }, { id: 3 }]);
    expect(await db('t').count({ n: '*' })).toEqual([{ n: 3 }]);
    expect((db.client as { driver: unknown }).driver).toBe(require(sqliteDriverPackage));
  } finally {
    await db.destroy();
  }
});
