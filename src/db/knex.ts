/**
 * The database: SQLite (better-sqlite3) in DATA_DIR by default, PostgreSQL when DATABASE_URL is a
 * postgres:// URL. Both run the same migrations; queries stay within what both support.
 */
import { chmodSync, closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { migrationSource } from './migrations/index.js';
import { ensureDataDir } from '../ground/data-dir.js';

export type Db = Knex;

export function openDb(opts: { databaseUrl: string | null; dataDir: string }): Db {
  if (opts.databaseUrl && /^postgres(ql)?:\/\//.test(opts.databaseUrl)) {
    // knex prints pool errors to the console itself; they reach the caller as errors anyway.
    const quiet = () => {};
    return knexFactory({ client: 'pg', connection: opts.databaseUrl, pool: { min: 0, max: 10 }, log: { warn: quiet, error: quiet, deprecate: quiet, debug: quiet } });
  }
  if (opts.databaseUrl) throw new Error('DATABASE_URL must be a postgres:// URL (unset means SQLite in DATA_DIR)');
  // Owner only: SQLite gives its -wal and -shm files the database file's mode.
  ensureDataDir(opts.dataDir);
  const filename = join(opts.dataDir, 'pactum.sqlite');
  closeSync(openSync(filename, 'a', 0o600));
  chmodSync(filename, 0o600);
  const main: MainConnection = { connection: null };
  const db = knexFactory({
    client: 'better-sqlite3',
    connection: { filename },
    useNullAsDefault: true,
    pool: {
      min: 1,
      max: 1, // one connection: better-sqlite3 is synchronous, and SQLite has one writer anyway
      afterCreate(conn: SqliteConnection, done: (err: Error | null, conn: unknown) => void) {
        main.connection = conn;
        cacheStatements(conn);
        conn.pragma('journal_mode = WAL');
        conn.pragma('synchronous = NORMAL');
        conn.pragma('foreign_keys = ON');
        conn.pragma('busy_timeout = 5000');
        done(null, conn);
      },
    },
  });
  mainConnections.set(db, main);
  return db;
}

interface SqliteStatement { get(): unknown; pluck(): SqliteStatement }
interface SqliteConnection { pragma(s: string): unknown; prepare(sql: string): SqliteStatement; open?: boolean }
interface MainConnection { connection: SqliteConnection | null }
const mainConnections = new WeakMap<Db, MainConnection>();
const dataVersions = new WeakMap<SqliteConnection, SqliteStatement>();

/**
 * SQLite's PRAGMA data_version on the main connection (the one knex writes through): it moves when
 * another connection, in another process (the CLI) or not, commits a change to the database, and
 * never for this connection's own commits. Null on PostgreSQL; NaN while no connection is open.
 */
export function sqliteDataVersion(db: Db): (() => number) | null {
  const main = mainConnections.get(db);
  if (!main) return null;
  return () => {
    const conn = main.connection;
    if (!conn || conn.open === false) return NaN;
    let statement = dataVersions.get(conn);
    if (!statement) {
      statement = conn.prepare('pragma data_version').pluck();
      dataVersions.set(conn, statement);
    }
    return Number(statement.get());
  };
}

/**
 * knex prepares every query anew; with better-sqlite3 the prepare was the largest single cost of
 * a small query. Statements are reusable (execution is synchronous), so keep them by SQL text.
 * knex binds values as parameters, so the texts are few; the cap guards against unusual ones.
 */
function cacheStatements(conn: { prepare(sql: string): SqliteStatement }) {
  const prepare = conn.prepare.bind(conn);
  const cache = new Map<string, SqliteStatement>();
  conn.prepare = (sql: string) => {
    let statement = cache.get(sql);
    if (!statement) {
      statement = prepare(sql);
      if (cache.size >= 1000) cache.delete(cache.keys().next().value!);
      cache.set(sql, statement);
    }
    return statement;
  };
}

export async function migrate(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]];
  return applied;
}

export const isPostgres = (db: Db) => (db.client as Knex.Client).config.client === 'pg';

/**
 * Runs `work` on one instance at a time: on PostgreSQL under a transaction-scoped advisory lock
 * named by `name` (an instance that finds it taken skips this round); on SQLite, whose database
 * one process owns, simply runs it.
 */
export function oneInstanceAtATime(db: Db, name: string) {
  return async (work: () => Promise<void>) => {
    if (!isPostgres(db)) return work();
    await db.transaction(async (trx) => {
      const { rows } = await trx.raw<{ rows: { taken: boolean }[] }>('select pg_try_advisory_xact_lock(hashtext(?)) as taken', [name]);
      if (rows[0]?.taken) await work();
    });
  };
}

/** The pool's connections: in use, free, and requests waiting for one (the metrics read it). */
export function poolConnections(db: Db): { used: number; free: number; pending: number } {
  const pool = (db.client as { pool?: { numUsed(): number; numFree(): number; numPendingAcquires(): number } }).pool;
  return { used: pool?.numUsed() ?? 0, free: pool?.numFree() ?? 0, pending: pool?.numPendingAcquires() ?? 0 };
}
