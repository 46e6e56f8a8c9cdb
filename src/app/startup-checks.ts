/**
 * Start-up failures that an operator fixes with a setting: each becomes a ConfigError whose one
 * line names the setting, so `pactum serve` prints it and exits instead of logging a stack (or,
 * worse, hanging while it holds the port).
 */
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError, type Config } from '../ground/config.js';
import { isDatabaseError, summariseDatabaseError } from '../db/errors.js';
import { StoreUnavailable } from '../objects/store/backend.js';
import { ownerOnlyDirectory } from '../ground/owner-only.js';

/** What pactum keeps in DATA_DIR (the SQLite database and its companions, generated keys, object files). */
const DATA_DIR_ENTRIES = /^(pactum\.sqlite(-wal|-shm|-journal)?|keys|lfs)$/;

/**
 * Creates DATA_DIR (owner only) and checks that it is a writable directory. One level at a time:
 * Node 20's `mkdirSync(…, { recursive: true })` never returns for a path under /proc. One that
 * exists and others may read is tightened to 0700 when it is ours (owned by this user, holding
 * only pactum's files), else refused with the fix (ground/owner-only.ts). Returns the mode it had
 * when it was tightened, else null.
 */
export function ensureDataDir(dir: string): number | null {
  const fail = (why: string): never => {
    throw new ConfigError(`DATA_DIR ${dir}: ${why}`);
  };
  const missing: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    try {
      if (!statSync(d).isDirectory()) fail(d === dir ? 'is not a directory' : `${d} is not a directory`);
      break;
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR') fail('a part of the path is a file, not a directory (ENOTDIR)');
      if (code !== 'ENOENT' || dirname(d) === d) fail(`cannot be read (${code})`);
      missing.unshift(d);
    }
  }
  for (const d of missing) {
    try {
      mkdirSync(d, { mode: 0o700 });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') fail(`cannot be created (${code} at ${d})`);
    }
  }
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (err) {
    fail(`is not writable (${(err as NodeJS.ErrnoException).code})`);
  }
  return ownerOnlyDirectory(dir, `DATA_DIR ${dir}`, (entry) => DATA_DIR_ENTRIES.test(entry));
}

/** Whether this configuration keeps anything in DATA_DIR (SQLite, object files, generated keys). */
export function usesDataDir(config: Config): boolean {
  return (
    !config.databaseUrl ||
    config.storage.kind === 'fs' ||
    !config.secretsKey ||
    !config.lfs.transferTokenSecret ||
    (!config.jwt.secret && !config.jwt.jwksUrl)
  );
}

/** A failed listen(), named by the setting that fixes it. */
export function listenError(err: NodeJS.ErrnoException, config: Config): Error {
  const code = err.code;
  const where = `${config.host}:${config.port}`;
  if (code === 'EADDRINUSE') return new ConfigError(`PORT ${config.port}: ${where} is in use by another process; choose another PORT`);
  if (code === 'EACCES') return new ConfigError(`PORT ${config.port}: this user may not listen on ${where}; choose a PORT above 1023`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new ConfigError(`HOST ${config.host}: not an address of this machine (${code})`);
  return err;
}

/**
 * A database that cannot be reached or entered at start-up, named as DATABASE_URL with its host,
 * port and database only (never the password), or as DATA_DIR for SQLite.
 */
export function databaseStartError(err: unknown, config: Config): unknown {
  const given = (err as { code?: unknown }).code;
  const code = typeof given === 'string' || typeof given === 'number' ? String(given) : '';
  const network = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET'].includes(code);
  if (!network && !isDatabaseError(err)) return err;
  if (!config.databaseUrl) return new ConfigError(`DATA_DIR ${config.dataDir}: the SQLite database cannot be opened (${summariseDatabaseError(err).code})`);
  let where = 'the database';
  try {
    const u = new URL(config.databaseUrl);
    where = `${u.hostname}:${u.port || 5432}${u.pathname}`;
  } catch {
    // an unparsable URL: say nothing of it
  }
  const why: Record<string, string> = {
    ECONNREFUSED: 'nothing listens there',
    ENOTFOUND: 'the host name does not resolve',
    '28P01': 'the password was refused',
    '28000': 'the user may not connect',
    '3D000': 'the database does not exist',
  };
  return new ConfigError(`DATABASE_URL: cannot use ${where}: ${why[code] ?? 'it did not answer'} (${code || summariseDatabaseError(err).code})`);
}

/**
 * An S3 store that cannot be used at start-up, named by the setting that fixes it. The SDK's
 * error names are S3's error codes; the message never includes a key or the endpoint's query.
 */
export function storageStartError(err: unknown, config: Config): unknown {
  if (config.storage.kind !== 's3') return err;
  const { bucket, endpoint, region } = config.storage;
  const e = (err instanceof StoreUnavailable ? err.cause : err) as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const code = e.code ?? e.name ?? 'Error';
  const where = endpoint ? endpoint.replace(/\?.*$/, '') : `AWS S3 (${region})`;
  const byCode: Record<string, string> = {
    NoSuchBucket: `S3_BUCKET ${bucket}: no such bucket at ${where}; create it first`,
    InvalidAccessKeyId: `S3_ACCESS_KEY_ID: ${where} does not know this access key`,
    SignatureDoesNotMatch: `S3_SECRET_ACCESS_KEY: ${where} refused the signature; the secret key does not belong to S3_ACCESS_KEY_ID`,
    AccessDenied: `S3_BUCKET ${bucket}: these credentials may not list the bucket at ${where}`,
    PermanentRedirect: `S3_REGION ${region}: bucket ${bucket} is in another region`,
    AuthorizationHeaderMalformed: `S3_REGION ${region}: the S3 server expects another region`,
    ECONNREFUSED: `S3_ENDPOINT ${where}: nothing listens there`,
    ENOTFOUND: `S3_ENDPOINT ${where}: the host name does not resolve`,
    EAI_AGAIN: `S3_ENDPOINT ${where}: the host name does not resolve`,
    TimeoutError: `S3_ENDPOINT ${where}: no answer`,
    ETIMEDOUT: `S3_ENDPOINT ${where}: no answer`,
    EHOSTUNREACH: `S3_ENDPOINT ${where}: the host cannot be reached`,
  };
  const known = byCode[code];
  if (known) return new ConfigError(`${known} (${code})`);
  const status = e.$metadata?.httpStatusCode;
  return new ConfigError(`S3_ENDPOINT ${where}: the bucket ${bucket} cannot be used (${code}${status ? `, HTTP ${status}` : ''})`);
}
