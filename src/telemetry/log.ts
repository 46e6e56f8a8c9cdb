/**
 * pino, configured once. Request logs carry method, path, status, duration and the request id —
 * never headers or bodies, so credentials cannot reach a log line. Anything else that might hold
 * a secret goes through `redactSecrets` (ground/redact.ts) first.
 */
import { createRequire } from 'node:module';
import { pino, type Logger, type DestinationStream } from 'pino';
import { isDatabaseError, summariseDatabaseError } from '../ground/database-errors.js';

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

/**
 * pino's isoTime, made once a millisecond: every line formatted a fresh Date (~1% of a served MCP
 * call's CPU), and a busy server writes several lines a millisecond. The same text as isoTime.
 */
let stampedAt = -1;
let stamp = '';
function isoTime(): string {
  const now = Date.now();
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}

function build(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'pactum' },
      timestamp: isoTime,
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
