/**
 * How the in-memory copies of user and org rows (auth/user-state.ts) hear that a row changed, so
 * that a revoked or deactivated user, a new password or a demoted role counts at the next request
 * wherever the change was made:
 *  - a write of this process through knex: the `users` or `orgs` statement itself (when it
 *    answers, and again when its transaction commits), and `principalsChanged(db)` after a
 *    transaction that changed them (changeUser, revokePersonalTokens);
 *  - another process on SQLite (the CLI): PRAGMA data_version on the main connection, which moves
 *    only when another connection commits, checked before anything remembered is served;
 *  - another instance or process on PostgreSQL: a trigger (migration 017) NOTIFYs
 *    `pactum_principals` with the row's table and id when its transaction commits, and a dedicated
 *    connection LISTENs. While it is not listening (starting, reconnecting), nothing remembered is
 *    served: every request reads the rows, as without the cache.
 * PostgreSQL sends a notification to the listening sessions after the commit, not within it: a
 * request that reaches another instance before the notification does (normally within a
 * millisecond; longer on a loaded machine) is still served the rows as they were.
 */
import { createRequire } from 'node:module';
import type pg from 'pg';
import type { Logger } from '../telemetry/log.js';
import type { Db } from './knex.js';
import { isPostgres, sqliteDataVersion } from './knex.js';

export const PRINCIPALS_CHANNEL = 'pactum_principals';
const CHANGED_EVENT = 'pactum:principals-changed';

/** A statement that changes or removes rows of users or orgs, as knex writes it on either database. */
const PRINCIPAL_WRITE = /^\s*(?:update|delete\s+from)\s+[`"]?(?:users|orgs)[`"]?\s/i;
const TRANSACTION_END = /^\s*(?:commit|rollback)\b/i;

export interface PrincipalChanges {
  /**
   * Whether remembered rows may be served now. Before answering it notices what changed out of
   * sight (SQLite: another process's commit) and reports it to the subscribers.
   */
  usable(): boolean;
  /** `forget(id)` drops one row; `forget()` all of them. */
  subscribe(forget: (id?: string) => void): void;
  /** Starts hearing of other instances' changes (PostgreSQL: connects and LISTENs), once the database is migrated. */
  start(): void;
  close(): Promise<void>;
}

/** Says that a transaction of this process that changed users or orgs has committed. */
export function principalsChanged(db: Db): void {
  db.emit(CHANGED_EVENT);
}

export function watchPrincipals(db: Db, opts: { databaseUrl: string | null; log: Logger }): PrincipalChanges {
  const subscribers: ((id?: string) => void)[] = [];
  const forget = (id?: string) => {
    for (const s of subscribers) s(id);
  };
  watchOwnWrites(db, () => forget());

  const dataVersion = sqliteDataVersion(db);
  if (dataVersion) {
    let seen = dataVersion();
    return {
      usable() {
        const now = dataVersion();
        if (now !== seen) {
          seen = now;
          forget();
        }
        return !Number.isNaN(now);
      },
      subscribe: (f) => void subscribers.push(f),
      start() {},
      close: () => Promise.resolve(),
    };
  }
  if (!isPostgres(db) || !opts.databaseUrl) throw new Error('principal changes: unknown database');
  const listener = listen(opts.databaseUrl, opts.log, {
    notice: (payload) => forget(payload.slice(payload.indexOf(':') + 1) || undefined),
    state: () => forget(),
  });
  return { usable: () => listener.listening, subscribe: (f) => void subscribers.push(f), start: () => listener.start(), close: () => listener.close() };
}

/** Calls `changed` when this process's knex writes users or orgs (and when such a transaction ends). */
function watchOwnWrites(db: Db, changed: () => void) {
  const dirty = new Set<string>();
  db.on('query', (q: { sql?: string; __knexTxId?: string }) => {
    const sql = q.sql ?? '';
    if (PRINCIPAL_WRITE.test(sql)) {
      changed();
      if (q.__knexTxId) dirty.add(q.__knexTxId);
    } else if (q.__knexTxId && dirty.has(q.__knexTxId) && TRANSACTION_END.test(sql)) {
      // On SQLite the commit runs synchronously right after this event; on PostgreSQL the
      // function that ran the transaction says so once it committed (principalsChanged).
      dirty.delete(q.__knexTxId);
      changed();
    }
  });
  db.on('query-response', (_r: unknown, q: { sql?: string }) => {
    if (PRINCIPAL_WRITE.test(q.sql ?? '')) changed();
  });
  db.on(CHANGED_EVENT, changed);
}

/** A dedicated connection LISTENing on the channel, reconnecting with a growing pause. */
function listen(url: string, log: Logger, on: { notice(payload: string): void; state(listening: boolean): void }) {
  let client: pg.Client | null = null;
  let closed = false;
  let pause = 500;
  let retry: NodeJS.Timeout | null = null;
  const state = { listening: false };

  const drop = (c: pg.Client, err?: unknown) => {
    if (client !== c) return;
    client = null;
    state.listening = false;
    on.state(false);
    c.end().catch(() => {});
    if (closed) return;
    log.warn({ err: err instanceof Error ? err.message : undefined, retryMs: pause }, 'lost the PostgreSQL connection that hears of user and org changes; reading them on every request until it is back');
    retry = setTimeout(() => void connect(), pause);
    retry.unref();
    pause = Math.min(pause * 2, 30_000);
  };

  async function connect() {
    retry = null;
    // Loaded here, on PostgreSQL only: a server on SQLite never holds the driver.
    const { Client } = createRequire(import.meta.url)('pg') as typeof pg;
    const c = new Client({ connectionString: url, keepAlive: true });
    client = c;
    c.on('notification', (m) => on.notice(m.payload ?? ''));
    c.on('error', (err) => drop(c, err));
    c.on('end', () => drop(c));
    try {
      await c.connect();
      await c.query(`listen ${PRINCIPALS_CHANNEL}`);
    } catch (err) {
      drop(c, err);
      return;
    }
    if (client !== c) return;
    pause = 500;
    // Anything remembered before now may have changed unheard.
    on.state(true);
    state.listening = true;
  }
  return {
    start() {
      if (!closed && !client && !retry) void connect();
    },
    get listening() {
      return state.listening;
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = null;
      state.listening = false;
      await c?.end().catch(() => {});
    },
  };
}
