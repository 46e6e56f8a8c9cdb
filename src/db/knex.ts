/**
 * The database: SQLite (better-sqlite3) in DATA_DIR by default, PostgreSQL when DATABASE_URL is a
 * postgres:// URL. Both run the same migrations; queries stay within what both support.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { migrationSource } from './migrations/index.js';

export type Db = Knex;

export function openDb(opts: { databaseUrl: string | null; dataDir: string }): Db {
  if (opts.databaseUrl && /^postgres(ql)?:\/\//.test(opts.databaseUrl)) {
    return knexFactory({ client: 'pg', connection: opts.databaseUrl, pool: { min: 0, max: 10 } });
  }
  if (opts.databaseUrl) throw new Error('DATABASE_URL must be a postgres:// URL (unset means SQLite in DATA_DIR)');
  mkdirSync(opts.dataDir, { recursive: true });
  return knexFactory({
    client: 'better-sqlite3',
    connection: { filename: join(opts.dataDir, 'pactum.sqlite') },
    useNullAsDefault: true,
    pool: {
      min: 1,
      max: 1, // one connection: better-sqlite3 is synchronous, and SQLite has one writer anyway
      afterCreate(conn: { pragma(s: string): unknown }, done: (err: Error | null, conn: unknown) => void) {
        conn.pragma('journal_mode = WAL');
        conn.pragma('synchronous = NORMAL');
        conn.pragma('foreign_keys = ON');
        conn.pragma('busy_timeout = 5000');
        done(null, conn);
      },
    },
  });
}

export async function migrate(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]];
  return applied;
}

export const isPostgres = (db: Db) => db.client.config.client === 'pg';
