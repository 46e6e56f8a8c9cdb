/** Shared by the CLI commands: usage errors, reading a password without echoing it in argv. */
import { ConfigError, describeDatabase, loadConfig, loadSettings, nearest, type Config, type Settings } from '../ground/config.js';
import { ROLE_PERMISSIONS } from '../domain/access/permissions.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { migrate, openDb, type Db } from '../db/knex.js';
import { recordedServerUrl } from '../db/server-settings.js';
import { findOrgById, findOrgBySlug } from '../db/users.js';

export class UsageError extends Error {}

/** The refusal of a role that does not exist, with the ones that do. */
export const unknownRole = (role: string) => {
  const near = nearest(role, Object.keys(ROLE_PERMISSIONS));
  return `unknown role ${role}${near ? ` (did you mean ${near}?)` : ''}; the roles are ${Object.keys(ROLE_PERMISSIONS).join(', ')}`;
};

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

/** The settings file named by `pactum --config FILE` (else pactum.env from the working directory up). */
let configFile: string | undefined;
export const useConfigFile = (file: string | undefined) => void (configFile = file);

/** The settings the server would start with here: the environment over the settings file. */
export function cliSettings(): Settings {
  return loadSettings({ configFile });
}

/** The configuration the server would start with here. */
export function cliConfig(): Config {
  return loadConfig(cliSettings().env);
}

/**
 * Opens the server's database, migrated, for the length of `fn`. Only a command that creates
 * something (`creates`) may start a new database, and it says which one it started: any other
 * command run where no database is (another directory, a mistyped DATA_DIR) is refused with
 * where it looked, instead of answering from a new empty one.
 */
export async function withDb<T>(fn: (db: Db, config: Config) => Promise<T>, opts: { creates?: boolean } = {}): Promise<T> {
  const settings = cliSettings();
  const config = loadConfig(settings.env);
  const where = describeDatabase(config, settings);
  const fresh = !config.databaseUrl && !existsSync(join(config.dataDir, 'pactum.sqlite'));
  if (fresh && !opts.creates) throw new UsageError(`no pactum database here: looked for ${where}. Run this where the server's ${'pactum.env'} is, set DATA_DIR or DATABASE_URL as the server has them, or pass --config FILE`);
  const db = openDb(config);
  try {
    if (config.databaseUrl && !opts.creates && !(await db.schema.hasTable('orgs'))) {
      throw new UsageError(`no pactum tables in ${where}: start the server on it first (pactum serve or pactum migrate), or point DATABASE_URL at the server's database`);
    }
    const applied = await migrate(db);
    if (fresh || (config.databaseUrl && applied.length && applied[0]!.startsWith('001'))) console.error(`pactum: started a new database: ${where}`);
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
