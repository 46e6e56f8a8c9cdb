/** Shared by the CLI commands: usage errors, reading a password without echoing it in argv. */
import { ConfigError, loadConfig, type Config } from '../config.js';
import { parseArgs } from 'node:util';
import { migrate, openDb, type Db } from '../db/knex.js';
import { recordedServerUrl } from '../db/server-settings.js';
import { findOrgById, findOrgBySlug } from '../db/users.js';

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

/** For commands that take none: any argument is a mistake, not something to ignore. */
export function noArguments(args: string[]): void {
  parseArgs({ args, options: {}, strict: true, allowPositionals: false });
}

/**
 * The URL of the server this CLI works for: PUBLIC_URL when set, else the one the server that
 * last started on this database recorded, else HOST and PORT. Tokens take their audience from it.
 */
export async function serverUrl(db: Db, config: Config): Promise<{ url: string; source: string }> {
  if (config.publicUrlExplicit) return { url: config.publicUrl, source: 'PUBLIC_URL' };
  const recorded = await recordedServerUrl(db);
  if (recorded) return { url: recorded.url, source: `the server that started on this database at ${recorded.at}` };
  return { url: config.publicUrl, source: 'HOST and PORT (no server has started on this database yet)' };
}

/** An organization named by its slug or its id; an unknown one is a usage error. */
export async function orgOf(db: Db, ref: string) {
  const org = (await findOrgBySlug(db, ref)) ?? (await findOrgById(db, ref));
  if (!org) throw new UsageError(`no organization ${ref} (list them with: pactum org list; create one with: pactum org create <slug>)`);
  return org;
}
