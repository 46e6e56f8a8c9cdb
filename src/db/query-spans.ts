/**
 * A span per database query, from knex's query events (installed only when tracing is on): named
 * `db <method>` (a raw statement by its SQL verb), with the statement as knex prepared it (placeholders, never the bound values).
 */
import { isPostgres, type Db } from './knex.js';
import { startSpan, type SpanHandle } from '../telemetry/tracing.js';

interface QueryEvent {
  __knexQueryUid?: string;
  method?: string;
  sql?: string;
}

export function traceQueries(db: Db): void {
  const open = new Map<string, SpanHandle>();
  const system = isPostgres(db) ? 'postgresql' : 'sqlite';
  db.on('query', (q: QueryEvent) => {
    if (!q.__knexQueryUid) return;
    // A raw statement (knex says 'raw') is named by its SQL verb, as a built one is.
    const operation = q.method === 'raw' ? (/^\s*([a-z]+)/i.exec(q.sql ?? '')?.[1]?.toLowerCase() ?? 'raw') : (q.method ?? 'query');
    open.set(q.__knexQueryUid, startSpan(`db ${operation}`, { 'db.system.name': system, 'db.operation.name': operation, 'db.query.text': q.sql?.slice(0, 500) }));
  });
  const finish = (q: QueryEvent, err?: unknown) => {
    const span = q.__knexQueryUid ? open.get(q.__knexQueryUid) : undefined;
    if (!span) return;
    open.delete(q.__knexQueryUid!);
    if (err) span.fail(err);
    span.end();
  };
  db.on('query-response', (_response: unknown, q: QueryEvent) => finish(q));
  db.on('query-error', (err: unknown, q: QueryEvent) => finish(q, err));
}
