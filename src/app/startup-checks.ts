/**
 * Start-up failures that an operator fixes with a setting: each becomes a ConfigError whose one
 * line names the setting, so `pactum serve` prints it and exits instead of logging a stack (or,
 * worse, hanging while it holds the port).
 */
import { ConfigError, type Config } from '../ground/config.js';
import { isDatabaseError, summariseDatabaseError } from '../ground/database-errors.js';
import { StoreUnavailable } from '../objects/store/backend.js';

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
