/**
 * A database error on a write path never puts a credential into the response, the log or the
 * audit trail. knex writes the SQL with its bound values into err.message; the
 * table a write needs is renamed away, so the driver fails the insert with those values in hand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, failure, mcpClient } from '../helpers/mcp.js';
import { insertOrg } from '../../src/db/users.js';
import { backendEnv } from '../helpers/backends.js';
import { pactum } from '../helpers/cli.js';
import { lfsFixture } from '../helpers/git-lfs.js';

const PASSWORD = 'redaction-password-7e1f';
const SECRET = 'client-secret-REDACT-4c9d';

let s: TestServer;
let root: Client;
beforeAll(async () => {
  s = await startTestServer();
  const orgId = (await insertOrg(s.services.db, { name: 'Acme', slug: 'acme' })).id;
  root = await mcpClient(s.url, bearer(await s.token({ sub: 'svc_root', orgId, perms: ['admin.system'] })));
});
afterAll(async () => {
  await root?.close();
  await s.stop();
});

/** Runs `write` while `table` is renamed away, then puts it back. */
async function withTableGone<T>(table: string, write: () => Promise<T>): Promise<T> {
  const db = s.services.db;
  await db.schema.renameTable(table, `${table}_away`);
  try {
    return await write();
  } finally {
    await db.schema.renameTable(`${table}_away`, table);
  }
}

async function auditText(): Promise<string> {
  return JSON.stringify(await s.services.db('audit_log').select());
}

describe('database errors on write paths', () => {
  it('user create: no password or hash in the response, the log or the audit trail', async () => {
    const logFrom = s.logLines.length;
    const result = await withTableGone('users', () => root.callTool({ name: 'dashboard_create_user', arguments: { username: 'victim', password: PASSWORD, role: 'member' } }));
    const refused = failure(result);
    expect(['failed', 'unavailable']).toContain(refused.error);
    const log = s.logLines.slice(logFrom).join('\n');
    expect(log).toMatch(/database error/);
    for (const text of [JSON.stringify(result), log, await auditText()]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toMatch(/scrypt|\$[0-9a-z]+\$|insert into/i); // no hash, no SQL
    }
  });

  it('user update and sign-in: no password or hash anywhere', async () => {
    const created = JSON.parse((((await root.callTool({ name: 'dashboard_create_user', arguments: { username: 'walter', password: PASSWORD, role: 'member' } })).content as { text: string }[])[0]!).text) as { id: string };
    const hash = (await s.services.db('users').where({ id: created.id }).first()).password_hash as string;
    const logFrom = s.logLines.length;
    const update = await withTableGone('users', () => root.callTool({ name: 'dashboard_update_user', arguments: { userId: created.id, password: `${PASSWORD}-new` } }));
    failure(update);
    const login = await withTableGone('sessions', () =>
      fetch(`${s.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'walter', password: PASSWORD }) }),
    );
    const loginBody = await login.text();
    expect(login.status).toBeGreaterThanOrEqual(500);
    const log = s.logLines.slice(logFrom).join('\n');
    for (const text of [JSON.stringify(update), loginBody, log, await auditText()]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(hash);
      expect(text).not.toMatch(/insert into|update `?"?users/i);
    }
  });

  it('service connection create: no client secret anywhere', async () => {
    const logFrom = s.logLines.length;
    const result = await withTableGone('service_connections', () =>
      root.callTool({ name: 'dashboard_create_service_connection', arguments: { serviceId: 'llm', url: 'https://llm.example.com', clientId: 'pactum', clientSecret: SECRET } }),
    );
    failure(result);
    const log = s.logLines.slice(logFrom).join('\n');
    for (const text of [JSON.stringify(result), log, await auditText()]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toMatch(/insert into/i);
    }
  });
});

const GIT_LFS = 'application/vnd.git-lfs+json';
const LOCKER_PASSWORD = 'locker-password-9b2e';
const lockerAuth = `Basic ${Buffer.from(`locker:${LOCKER_PASSWORD}`).toString('base64')}`;
const lock = (base: string, path: string) =>
  fetch(`${base}/acme/site.git/info/lfs/locks`, { method: 'POST', headers: { authorization: lockerAuth, accept: GIT_LFS, 'content-type': GIT_LFS }, body: JSON.stringify({ path }) });

describe('database errors on the object API and the CLI', () => {
  beforeAll(async () => {
    await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'locker', password: LOCKER_PASSWORD, access: 'write' });
  });

  it('a personal token created while its table is gone: the CLI prints no token, hash or SQL', { timeout: 120_000 }, async () => {
    const env = { DATA_DIR: s.dataDir, ...(await backendEnv(s.dataDir)) };
    const made = await withTableGone('personal_tokens', () => pactum(['user', 'token', 'locker', '--name', 'ci'], env));
    expect(made.code).not.toBe(0);
    for (const text of [made.stdout, made.stderr]) {
      expect(text).not.toMatch(/pat_[A-Za-z0-9_-]{20,}/);
      expect(text).not.toMatch(/insert into|token_hash/i);
    }
  });

  it('a lock written while its table is gone: the spec\'s error shape, no path value or SQL in response or log', async () => {
    const logFrom = s.logLines.length;
    const path = 'secret-plans/lock-value-5d1e.psd';
    const res = await withTableGone('lfs_locks', () => lock(s.url, path));
    const text = await res.text();
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(JSON.parse(text)).toHaveProperty('message');
    const log = s.logLines.slice(logFrom).join('\n');
    for (const t of [text, log]) {
      expect(t).not.toContain('lock-value-5d1e');
      expect(t).not.toMatch(/insert into|select .* from/i);
    }
  });

  it('a uniqueness race on a lock is 409 in the error shape, naming the constraint, not the values', async () => {
    const db = s.services.db;
    expect((await lock(s.url, 'race/a.psd')).status).toBe(201);
    // One lock per repository from now on: the next insert breaks a unique index, as a concurrent insert of the same path would.
    await db.schema.raw('create unique index one_lock_per_repo on lfs_locks (repo_id)');
    try {
      const logFrom = s.logLines.length;
      const res = await lock(s.url, 'race/b-value-77aa.psd');
      const body = (await res.json()) as { message: string };
      expect(res.status).toBe(409);
      expect(body.message).toMatch(/unique/);
      const log = s.logLines.slice(logFrom).join('\n');
      for (const t of [JSON.stringify(body), log]) {
        expect(t).not.toContain('b-value-77aa');
        expect(t).not.toMatch(/insert into/i);
      }
    } finally {
      await db.schema.raw('drop index one_lock_per_repo');
    }
  });
});

describe('a database that is gone', () => {
  it('answers 503 with Retry-After on the object API and sign-in, in the spec\'s shape, and the process serves on', { timeout: 120_000 }, async () => {
    const t = await startTestServer();
    try {
      await lfsFixture(t.services.db, { org: 'acme', repo: 'site', username: 'locker', password: LOCKER_PASSWORD, access: 'write' });
      expect((await lock(t.url, 'before/close.psd')).status).toBe(201);
      await t.services.db.destroy();
      const locked = await lock(t.url, 'after/close.psd');
      expect(locked.status).toBe(503);
      expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await locked.json()) as { message: string }).message).toMatch(/database is unavailable/);
      const login = await fetch(`${t.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'locker', password: LOCKER_PASSWORD }) });
      expect(login.status).toBe(503);
      expect(login.headers.get('retry-after')).not.toBeNull();
      expect(await login.text()).not.toContain(LOCKER_PASSWORD);
      // Still serving what needs no database.
      expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
      expect(t.logLines.join('\n')).not.toMatch(/insert into|select .* from/i);
      t.expectConformant();
    } finally {
      await t.stop().catch(() => {});
    }
  });
});

