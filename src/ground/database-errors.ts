/**
 * Database errors, recognised in one place. knex (and the drivers under it) put the SQL text and
 * its bound values into err.message, so a failed insert of a user carries the password hash: such
 * an error is reduced to its SQL error code and constraint name before it reaches a log line, a
 * response or the audit trail.
 */
export type DatabaseErrorKind = 'unique' | 'foreign-key' | 'constraint' | 'unavailable' | 'other';

export interface DatabaseErrorSummary { kind: DatabaseErrorKind; code: string; constraint?: string }

const PG_SQLSTATE = /^[0-9A-Z]{5}$/;

interface DriverError { name?: string; code?: unknown; constraint?: unknown; severity?: unknown; routine?: unknown; message?: string }

/** True for better-sqlite3, pg and knex's own pool errors. */
export function isDatabaseError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as DriverError;
  if (e.name === 'SqliteError' || (typeof e.code === 'string' && e.code.startsWith('SQLITE_'))) return true;
  if (typeof e.code === 'string' && PG_SQLSTATE.test(e.code) && (e.severity !== undefined || e.routine !== undefined)) return true;
  if (e.name === 'KnexTimeoutError') return true;
  return typeof e.message === 'string' && /Unable to acquire a connection|aborted connection|pool is destroyed|The database connection is not open|Connection terminated/i.test(e.message);
}

/** The code and constraint only: never the message, the SQL or its values. */
export function summariseDatabaseError(err: unknown): DatabaseErrorSummary {
  const e = err as DriverError;
  const code = typeof e.code === 'string' ? e.code : (e.name ?? 'unknown');
  const constraint = typeof e.constraint === 'string' ? e.constraint : undefined;
  const kind: DatabaseErrorKind =
    code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ? 'unique'
      : code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY' ? 'foreign-key'
        : code.startsWith('23') || code.startsWith('SQLITE_CONSTRAINT') ? 'constraint'
          : typeof e.code === 'string' && (e.code.startsWith('SQLITE_') || PG_SQLSTATE.test(e.code)) && !code.startsWith('08') && !code.startsWith('57') ? 'other'
            : 'unavailable';
  return constraint ? { kind, code, constraint } : { kind, code };
}

/** A message safe for a client and the audit trail. */
export function describeDatabaseError(s: DatabaseErrorSummary): string {
  const where = s.constraint ? ` (${s.constraint})` : '';
  switch (s.kind) {
    case 'unique': return `a value that must be unique is taken${where}`;
    case 'foreign-key': return `a referenced record does not exist${where}`;
    case 'constraint': return `a database constraint refused the change${where}`;
    case 'unavailable': return 'the database is unavailable; try again';
    default: return `the database refused the operation (${s.code})`;
  }
}
