/**
 * The audit trail: one row per tools/call — who, which org, which tool, the arguments with
 * secrets redacted, the outcome and how long it took. Rows are group-committed: calls that finish
 * in the same turn of the event loop share one INSERT, and each call's result is returned only
 * once its row is written.
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

export function createAuditLog(db: Db, opts: { maxBatch?: number; onWritten?: (rows: number) => void } = {}) {
  const maxBatch = opts.maxBatch ?? 200;
  let pending: { row: ReturnType<typeof toRow>; written: () => void; failed: (err: unknown) => void }[] = [];
  let scheduled: NodeJS.Immediate | null = null;

  async function flush() {
    if (scheduled) clearImmediate(scheduled);
    scheduled = null;
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
        else scheduled ??= setImmediate(() => void flush());
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
