/**
 * The audit trail: one row per tools/call — who, which org, which tool, the arguments with
 * secrets redacted, the outcome and how long it took. Rows are group-committed, and each call's
 * result is returned only once its row is written. A commit costs about the same whatever its
 * size (~30 µs on SQLite: the WAL frames of the table and its two indexes), so under load rows
 * wait for at most `groupMs` after the previous commit and share one INSERT; a call that finds no
 * recent commit (an idle server) is written at the end of its turn of the event loop, as before.
 */
import { newId } from '../ground/ids.js';
import { redactSecrets } from '../ground/redact.js';
import type { Db } from '../db/knex.js';

export interface AuditEntry {
  /** Null for a change the CLI made (no request). */
  requestId: string | null;
  subject: string;
  orgId: string;
  tool: string;
  args: unknown;
  outcome: string;
  message?: string;
  durationMs: number;
}

const toRow = (e: AuditEntry) => ({
  id: newId('aud'),
  at: new Date().toISOString(),
  request_id: e.requestId,
  subject: e.subject,
  org_id: e.orgId,
  tool: e.tool,
  arguments: JSON.stringify(redactSecrets(e.args) ?? null).slice(0, 20_000),
  outcome: e.outcome,
  message: e.message?.slice(0, 2000) ?? null,
  duration_ms: Math.round(e.durationMs),
});

export function createAuditLog(db: Db, opts: { maxBatch?: number; groupMs?: number; onWritten?: (rows: number) => void } = {}) {
  const maxBatch = opts.maxBatch ?? 200;
  const groupMs = opts.groupMs ?? 1;
  let pending: { row: ReturnType<typeof toRow>; written: () => void; failed: (err: unknown) => void }[] = [];
  let scheduled: { immediate: NodeJS.Immediate } | { timer: NodeJS.Timeout } | null = null;
  let lastFlush = -Infinity;

  function schedule() {
    const wait = lastFlush + groupMs - performance.now();
    scheduled = wait > 0 ? { timer: setTimeout(() => void flush(), wait) } : { immediate: setImmediate(() => void flush()) };
  }

  async function flush() {
    if (scheduled) {
      if ('timer' in scheduled) clearTimeout(scheduled.timer);
      else clearImmediate(scheduled.immediate);
    }
    scheduled = null;
    lastFlush = performance.now();
    const batch = pending;
    pending = [];
    if (!batch.length) return;
    try {
      // SQLite allows 999 bound variables a statement: ten columns a row keeps chunks well below.
      for (let i = 0; i < batch.length; i += 90) await db('audit_log').insert(batch.slice(i, i + 90).map((b) => b.row));
      opts.onWritten?.(batch.length);
      for (const b of batch) b.written();
    } catch (err) {
      for (const b of batch) b.failed(err);
    }
  }

  return {
    write(e: AuditEntry): Promise<void> {
      return new Promise((resolve, reject) => {
        pending.push({ row: toRow(e), written: resolve, failed: reject });
        if (pending.length >= maxBatch) void flush();
        else if (!scheduled) schedule();
      });
    },
    flush,
    /** Rows waiting to be written. */
    get pending() {
      return pending.length;
    },
  };
}

export type AuditLog = ReturnType<typeof createAuditLog>;
