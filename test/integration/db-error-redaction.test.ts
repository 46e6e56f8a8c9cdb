/**
 * A database error on a write path never puts a credential into the response, the log or the
 * audit trail (issue 14 §5). knex writes the SQL with its bound values into err.message; the
 * table a write needs is renamed away, so the driver fails the insert with those values in hand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, failure, mcpClient } from '../helpers/mcp.js';
import { insertOrg } from '../../src/db/users.js';

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
