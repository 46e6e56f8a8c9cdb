/**
 * Which better-sqlite3 this Node loads. 12.x (compiled here for Node 20's ABI) aborts the
 * process on Node 24 when a collected prepared statement's destructor runs without a current
 * Node environment (Node 24's ObjectWrap asserts there: WiseLibs/better-sqlite3#1515, left
 * unfixed in 12); 13.x is built on Node-API, ships prebuilt binaries, and crashes on Node 20
 * (its engines say >= 22). So Node 20 loads 12, and Node 22 and later load 13, installed under
 * the alias better-sqlite3-napi. When Node 20 goes, 12 goes.
 */
import { createRequire } from 'node:module';
import type { Knex } from 'knex';

const require = createRequire(import.meta.url);

export const sqliteDriverPackage = Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';

const BetterSqlite3Client = require('knex/lib/dialects/better-sqlite3/index.js') as typeof Knex.Client;

/** knex's better-sqlite3 client, loading the driver chosen above. */
export class SqliteClient extends BetterSqlite3Client {
  _driver(): unknown {
    return require(sqliteDriverPackage);
  }
}
