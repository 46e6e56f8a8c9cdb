/**
 * The audit trail: one row per tools/call — who, which org, which tool, the arguments with
 * secrets redacted, the outcome and how long it took. Written before the result is returned.
 */
import { newId } from '../ids.js';
import { redactSecrets } from '../log.js';
import type { Db } from '../db/knex.js';

export interface AuditEntry {
  requestId: string;
  subject: string;
  orgId: string;
  tool: string;
  args: unknown;
  outcome: string;
  message?: string;
  durationMs: number;
}

export async function audit(db: Db, e: AuditEntry): Promise<void> {
  await db('audit_log').insert({
    id: newId('aud'),
    at: new Date().toISOString(),
    request_id: e.requestId,
    subject: e.subject,
    org_id: e.orgId,
    tool: e.tool,
    arguments: JSON.stringify(redactSecrets(e.args) ?? null).slice(0, 20_000),
    outcome: e.outcome,
    message: e.message ?? null,
    duration_ms: Math.round(e.durationMs),
  });
}
