/**
 * Rows read by primary key on every request: the token's user (auth) and an org. On SQLite they
 * come from a second, read-only connection with prepared statements, outside knex: knex's builder,
 * pool and promise chain cost several times the statement itself (scripts/bench/mcp.ts, profiled:
 * ~35 µs of knex around a ~3 µs lookup). The second connection reads the last committed state
 * (WAL), never another request's open transaction on the main connection. On PostgreSQL they are
 * ordinary knex queries on the pool.
 */
import { createRequire } from 'node:module';
import type { Db } from './knex.js';
import { isPostgres } from './knex.js';
import type { OrgRow, UserRow } from './users.js';

const USER_COLUMNS = ['id', 'org_id', 'username', 'role', 'active', 'credential_version'] as const;
const ORG_COLUMNS = ['id', 'name', 'slug', 'created_at', 'updated_at'] as const;

/** What auth needs of a user: never the password hash. */
export type UserRowSnapshot = Pick<UserRow, (typeof USER_COLUMNS)[number]>;
export type OrgRowSnapshot = Pick<OrgRow, (typeof ORG_COLUMNS)[number]>;

export interface PointReads {
  user(id: string): Promise<UserRowSnapshot | undefined>;
  org(id: string): Promise<OrgRowSnapshot | undefined>;
  close(): void;
}

interface Statement { get(...params: unknown[]): unknown }
interface Connection { prepare(sql: string): Statement; pragma(s: string): unknown; close(): void }

export function createPointReads(db: Db): PointReads {
  if (isPostgres(db)) {
    return {
      user: (id) => db<UserRowSnapshot>('users').where({ id }).first(...USER_COLUMNS),
      org: (id) => db<OrgRowSnapshot>('orgs').where({ id }).first(...ORG_COLUMNS),
      close() {},
    };
  }
  const filename = (db.client as { config: { connection: { filename: string } } }).config.connection.filename;
  // Opened at the first read, after the migrations the main connection ran.
  let reader: { connection: Connection; user: Statement; org: Statement } | null = null;
  const open = () => {
    if (!reader) {
      const Database = createRequire(import.meta.url)('better-sqlite3') as new (file: string, o: object) => Connection;
      const connection = new Database(filename, { readonly: true, fileMustExist: true });
      connection.pragma('busy_timeout = 5000');
      reader = {
        connection,
        user: connection.prepare(`select ${USER_COLUMNS.join(', ')} from users where id = ?`),
        org: connection.prepare(`select ${ORG_COLUMNS.join(', ')} from orgs where id = ?`),
      };
    }
    return reader;
  };
  // Synchronous underneath; a failure (a locked or missing file) still arrives as a rejection.
  const read = <T>(pick: (r: NonNullable<typeof reader>) => Statement, id: string): Promise<T | undefined> => {
    try {
      return Promise.resolve(pick(open()).get(id) as T | undefined);
    } catch (err) {
      return Promise.reject(err);
    }
  };
  return {
    user: (id) => read<UserRowSnapshot>((r) => r.user, id),
    org: (id) => read<OrgRowSnapshot>((r) => r.org, id),
    close() {
      reader?.connection.close();
      reader = null;
    },
  };
}
