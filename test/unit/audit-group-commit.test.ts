/**
 * The audit trail's group commit (mcp/audit.ts): a call's row is written before its result is
 * returned; an idle server writes a row at the end of its turn; under load, rows that arrive
 * within the grouping window after a commit share the next INSERT.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { migrate, openDb, type Db } from '../../src/db/knex.js';
import { createAuditLog } from '../../src/mcp/audit.js';

let dataDir: string;
let db: Db;
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pactum-audit-'));
  db = openDb({ databaseUrl: null, dataDir });
  await migrate(db);
});
afterAll(async () => {
  await db.destroy();
  rmSync(dataDir, { recursive: true, force: true });
});

const entry = (tool: string) => ({ requestId: 'R1', subject: 'usr_1', orgId: 'org_1', tool, args: { token: 'secret-value' }, outcome: 'ok', durationMs: 1.4 });
const rowsOf = (tool: string) => db('audit_log').where({ tool }).select('arguments', 'duration_ms');

it('writes an idle call at once, and a burst after it in one INSERT once the window has passed', async () => {
  const commits: number[] = [];
  // A window long enough that the burst below cannot straddle it on a slow machine.
  const audit = createAuditLog(db, { groupMs: 200, onWritten: (rows) => commits.push(rows) });
  await audit.write(entry('idle'));
  expect(commits).toEqual([1]);
  expect(await rowsOf('idle')).toEqual([{ arguments: '{"token":"[redacted]"}', duration_ms: 1 }]);

  // Right after a commit: these wait for the window, then share one INSERT, each resolved once written.
  const burst = Array.from({ length: 5 }, () => audit.write(entry('burst')));
  await new Promise((r) => setTimeout(r, 20));
  expect(audit.pending).toBe(5);
  expect(await rowsOf('burst')).toHaveLength(0);
  await Promise.all(burst);
  expect(commits).toEqual([1, 5]);
  expect(await rowsOf('burst')).toHaveLength(5);
});

it('writes what is pending at once when flushed (shutdown), and when a batch is full', async () => {
  const commits: number[] = [];
  const audit = createAuditLog(db, { groupMs: 60_000, maxBatch: 3, onWritten: (rows) => commits.push(rows) });
  await audit.write(entry('first'));
  const waiting = audit.write(entry('flushed'));
  expect(audit.pending).toBe(1);
  await audit.flush();
  await waiting;
  const full = [1, 2, 3].map(() => audit.write(entry('full')));
  await Promise.all(full);
  expect(commits).toEqual([1, 1, 3]);
});

it('rejects every call of a batch whose INSERT fails', async () => {
  const audit = createAuditLog(db, { groupMs: 0 });
  const invalid = { ...entry('x'), subject: null as unknown as string };
  await expect(audit.write(invalid)).rejects.toThrow();
});
