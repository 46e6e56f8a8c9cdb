/**
 * The per-request primary-key reads (db/point-reads.ts): on SQLite a second, read-only connection
 * outside knex. What auth relies on: a change counts at the very next read, wherever it was made,
 * and a change still inside another request's transaction (which may roll back) is never seen.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, openDb, type Db } from '../../src/db/knex.js';
import { createPointReads, type PointReads } from '../../src/db/point-reads.js';
import { insertOrg, insertUser } from '../../src/db/users.js';
import { backendMode, databaseUrlFor, ensureDatabase } from '../helpers/backends.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function open(kind: 'sqlite' | 'postgres'): Promise<{ db: Db; other: Db; reads: PointReads }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pactum-reads-'));
  dirs.push(dataDir);
  let databaseUrl: string | null = null;
  if (kind === 'postgres') {
    const name = `pactum_t_reads_${process.pid}_${dirs.length}`;
    await ensureDatabase(name);
    databaseUrl = databaseUrlFor(name);
  }
  const db = openDb({ databaseUrl, dataDir });
  await migrate(db);
  // Another writer on the same database: a second instance, or the CLI.
  return { db, other: openDb({ databaseUrl, dataDir }), reads: createPointReads(db) };
}

const kinds: ('sqlite' | 'postgres')[] = ['sqlite', ...(backendMode === 'embedded' ? [] : ['postgres' as const])];

describe.each(kinds)('point reads on %s', (kind) => {
  it('read a user and an org by id, and nothing for an unknown id', async () => {
    const { db, other, reads } = await open(kind);
    try {
      const org = await insertOrg(db, { name: 'Acme', slug: 'acme' });
      const user = await insertUser(db, { orgId: org.id, username: 'ada', passwordHash: 'x', role: 'org_admin' });
      expect(await reads.org(org.id)).toMatchObject({ id: org.id, name: 'Acme', slug: 'acme' });
      expect(await reads.user(user.id)).toMatchObject({ id: user.id, org_id: org.id, username: 'ada', role: 'org_admin' });
      expect(await reads.user('usr_nobody')).toBeUndefined();
      expect(await reads.org('org_nothing')).toBeUndefined();
    } finally {
      reads.close();
      await Promise.all([db.destroy(), other.destroy()]);
    }
  });

  it("see another writer's change at the next read, and never a change not yet committed", async () => {
    const { db, other, reads } = await open(kind);
    try {
      const org = await insertOrg(db, { name: 'Acme', slug: 'acme' });
      const user = await insertUser(db, { orgId: org.id, username: 'ada', passwordHash: 'x', role: 'org_admin' });
      expect((await reads.user(user.id))?.role).toBe('org_admin'); // the statement is prepared and used

      await other('users').where({ id: user.id }).update({ role: 'viewer' });
      expect((await reads.user(user.id))?.role, 'a demotion counts at once').toBe('viewer');

      // A request's transaction on the server's own database: open, changed, then rolled back.
      await db
        .transaction(async (trx) => {
          await trx('users').where({ id: user.id }).update({ role: 'org_admin', active: false });
          const seen = await reads.user(user.id);
          expect(seen?.role, 'not the open transaction').toBe('viewer');
          expect(Boolean(seen?.active)).toBe(true);
          throw new Error('roll back');
        })
        .catch((err: Error) => expect(err.message).toBe('roll back'));
      expect((await reads.user(user.id))?.role).toBe('viewer');

      await db('users').where({ id: user.id }).delete();
      expect(await reads.user(user.id), 'a deletion counts at once').toBeUndefined();
    } finally {
      reads.close();
      await Promise.all([db.destroy(), other.destroy()]);
    }
  });
});
