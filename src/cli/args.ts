/** Shared by the CLI commands: usage errors, reading a password without echoing it in argv. */
import { ConfigError, loadConfig, type Config } from '../config.js';
import { migrate, openDb, type Db } from '../db/knex.js';

export class UsageError extends Error {}

export const isUsageError = (err: unknown) =>
  err instanceof UsageError || err instanceof ConfigError || String((err as { code?: string }).code).startsWith('ERR_PARSE_ARGS');

/** Reads a password from stdin (first line), so it never appears in shell history or `ps`. */
export async function readPasswordFromStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const password = Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0]!;
  if (!password) throw new UsageError('no password on stdin');
  return password;
}

/** Opens the configured database, migrated, for the length of `fn`. */
export async function withDb<T>(fn: (db: Db, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = openDb(config);
  try {
    await migrate(db);
    return await fn(db, config);
  } finally {
    await db.destroy();
  }
}
