/**
 * pino, configured once. Request logs carry method, path, status, duration and the request id —
 * never headers or bodies, so credentials cannot reach a log line. Anything else that might hold
 * a secret goes through `redactSecrets` first.
 */
import { createRequire } from 'node:module';
import { pino, type Logger, type DestinationStream } from 'pino';
import { isDatabaseError, summariseDatabaseError } from '../db/errors.js';

export type { Logger };

/**
 * LOG_FORMAT=pretty: pino-pretty (a development dependency) formats lines for a person at a
 * terminal, in this thread. Where it is not installed (a production install), lines stay JSON and
 * the first says why.
 */
function prettyStream(destination?: DestinationStream): { stream?: DestinationStream; missing: boolean } {
  try {
    const pretty = createRequire(import.meta.url)('pino-pretty') as (o: object) => DestinationStream;
    return { stream: pretty({ sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service', ...(destination ? { destination } : {}) }), missing: false };
  } catch {
    return { ...(destination ? { stream: destination } : {}), missing: true };
  }
}

export function createLogger(level: string, destination?: DestinationStream, format: 'json' | 'pretty' = 'json'): Logger {
  if (format === 'pretty') {
    const { stream, missing } = prettyStream(destination);
    const logger = build(level, stream);
    if (missing) logger.warn('LOG_FORMAT=pretty needs the pino-pretty package, which is not installed; logging JSON');
    return logger;
  }
  return build(level, destination);
}

function build(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'pactum' },
      timestamp: pino.stdTimeFunctions.isoTime,
      // A database error's message and stack carry the SQL's bound values: only its code and constraint are logged.
      serializers: { err: (err: unknown) => (isDatabaseError(err) ? { type: 'DatabaseError', ...summariseDatabaseError(err) } : pino.stdSerializers.err(err as Error)) },
      redact: {
        paths: ['*.password', '*.clientSecret', '*.secret', '*.token', '*.authorization', '*.cookie'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

const SECRET_KEYS = /^(password|clientSecret|secret|token|authorization|cookie|passwordHash)$/i;

/**
 * The user name and password of a URL ("https://user:pass@host"), wherever one appears in a text.
 * Any run of slashes or backslashes after the scheme, tabs or newlines inside, and up to the last
 * "@" before the host, as the WHATWG parser reads them.
 */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:[\\/]+)(?:[^\\/?#@ "'<>]*@)+/gi;

/** `text` with the credentials of every URL in it replaced. */
export const redactUrlCredentials = (text: string) => text.replace(URL_USERINFO, '$1[redacted]@');

/** A copy of a JSON value with secret-named members and URL credentials replaced, for logs and the audit trail. */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactUrlCredentials(value);
  // A hostile argument may nest thousands of levels: the copy stops well before the stack does.
  if (depth > 32 && value && typeof value === 'object') return '[nested too deep]';
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, depth + 1));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, SECRET_KEYS.test(k) ? '[redacted]' : redactSecrets(v, depth + 1)]),
    );
  }
  return value;
}
