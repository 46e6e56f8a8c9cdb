/**
 * The user and org rows a tools/call needs are served from memory once read (auth/user-state.ts),
 * and every change drops them before the next request: a change made through this server's tools,
 * by the CLI (another process writing the database), and on PostgreSQL by another instance on the
 * same database (LISTEN/NOTIFY). Each case first shows that the rows were being served from memory
 * (no point read during the warm calls), so the refusal that follows proves the invalidation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAIR_SECRETS, startTestServer, type TestServer } from '../helpers/server.js';
import { pactum } from '../helpers/cli.js';
import { backendEnv, backendMode } from '../helpers/backends.js';
import { hashPassword } from '../../src/auth/passwords.js';
import type { Role } from '../../src/domain/access/permissions.js';
import { insertOrg, insertUser } from '../../src/db/users.js';
import type { RunningServer } from '../../src/server.js';

/** Counts the point reads (user and org rows) a server makes from now on. */
function countReads(server: RunningServer) {
  const reads = server.services.reads;
  const count = { n: 0 };
  const user = reads.user.bind(reads);
  const org = reads.org.bind(reads);
  reads.user = (id) => (count.n++, user(id));
  reads.org = (id) => (count.n++, org(id));
  return count;
}

/** A tools/call of dashboard_get_org (a read tool) on `url` with this bearer token: the HTTP status and the tool's answer. */
async function getOrg(url: string, token: string) {
  const res = await fetch(`${url}/api/v1/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dashboard_get_org', arguments: {} } }),
  });
  const text = await res.text();
  return { status: res.status, text };
}

async function callTool(url: string, token: string, name: string, args: Record<string, unknown>) {
  const res = await fetch(`${url}/api/v1/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { result: { isError?: boolean; content: { text: string }[] } };
}

/**
 * Warm calls until one reads no row (on PostgreSQL nothing is served from memory until the
 * LISTEN connection is up), then three more that must read none.
 */
async function expectServedFromMemory(server: RunningServer, url: string, token: string) {
  const count = countReads(server);
  await expect
    .poll(async () => {
      const before = count.n;
      expect((await getOrg(url, token)).status).toBe(200);
      return count.n - before;
    }, { timeout: 10_000, interval: 50 })
    .toBe(0);
  const before = count.n;
  for (let i = 0; i < 3; i++) expect((await getOrg(url, token)).status).toBe(200);
  expect(count.n - before, 'point reads during calls that should be served from memory').toBe(0);
}

describe('one server', () => {
  let s: TestServer;
  let orgId: string;
  let root: string;
  beforeAll(async () => {
    s = await startTestServer();
    orgId = (await insertOrg(s.services.db, { name: 'Acme', slug: 'acme' })).id;
    root = await s.token({ sub: 'usr_root', orgId, perms: ['admin.system'] });
  });
  afterAll(() => s?.stop());

  const user = async (username: string, role: Role) =>
    insertUser(s.services.db, { orgId, username, passwordHash: await hashPassword(`${username}-password-1`), role });
  const tokenOf = (u: { id: string; role: Role }) => s.services.tokens.sign({ sub: u.id, orgId, role: u.role, credentialVersion: 0 }, 600);

  it('a new password set with the CLI refuses the next request of a token served from memory', { timeout: 120_000 }, async () => {
    const ada = await user('ada', 'org_admin');
    const token = await tokenOf(ada);
    await expectServedFromMemory(s, s.url, token);
    const cli = { DATA_DIR: s.dataDir, ...(await backendEnv(s.dataDir)) };
    const changed = await pactum(['user', 'passwd', 'ada', '--password-stdin'], cli, 'a-new-password-2\n');
    expect(changed.code, changed.stderr).toBe(0);
    const refused = { status: 401, text: expect.stringMatching(/credentials of this token's user were changed/) };
    // At once on SQLite; on PostgreSQL once the change's notification, sent after the commit, has arrived.
    if (backendMode !== 'embedded') await expect.poll(() => getOrg(s.url, token), { timeout: 5000, interval: 50 }).toMatchObject(refused);
    else expect(await getOrg(s.url, token)).toMatchObject(refused);
  });

  it("an org renamed through a tool is answered renamed at the next read tool's call", async () => {
    const bo = await user('bo', 'org_admin');
    const token = await tokenOf(bo);
    await expectServedFromMemory(s, s.url, token);
    const renamed = await callTool(s.url, root, 'dashboard_update_org', { targetOrgId: orgId, name: 'Acme renamed' });
    expect(renamed.result.isError).toBeFalsy();
    expect(JSON.parse((await callTool(s.url, token, 'dashboard_get_org', {})).result.content[0]!.text)).toMatchObject({ id: orgId, name: 'Acme renamed' });
  });
});

// Two instances need a database they share: PostgreSQL.
if (backendMode !== 'embedded') {
  describe('two instances on one PostgreSQL database', () => {
    let a: TestServer;
    let b: TestServer;
    let orgId: string;
    let root: string;
    beforeAll(async () => {
      a = await startTestServer(PAIR_SECRETS);
      const shared = await backendEnv(a.dataDir);
      b = await startTestServer({ ...PAIR_SECRETS, DATABASE_URL: shared.DATABASE_URL! });
      orgId = (await insertOrg(a.services.db, { name: 'Pair', slug: 'pair' })).id;
      root = await a.token({ sub: 'usr_pairroot', orgId, perms: ['admin.system'] });
    });
    afterAll(async () => {
      await b?.stop();
      await a?.stop();
    });

    const user = async (username: string, role: Role) =>
      insertUser(a.services.db, { orgId, username, passwordHash: await hashPassword(`${username}-password-1`), role });
    // For instance b: the audience is each instance's own public URL here (no balancer in front).
    const tokenOf = (u: { id: string; role: Role }) => b.services.tokens.sign({ sub: u.id, orgId, role: u.role, credentialVersion: 0 }, 600);

    /**
     * PostgreSQL delivers a NOTIFY to the listening instance after the commit, not within it
     * (db/principal-changes.ts): within a millisecond on a quiet machine, later on a loaded one.
     * The request is repeated until it shows the change, for at most 2 s: a cache that never heard
     * of the change still fails the test.
     */
    async function afterNotification<T>(request: () => Promise<T>, changed: (answer: T) => boolean): Promise<T> {
      const until = Date.now() + 2_000;
      for (;;) {
        const answer = await request();
        if (changed(answer) || Date.now() > until) return answer;
        await new Promise((r) => setTimeout(r, 20));
      }
    }

    it('a user deactivated on one instance is refused by the other once the change is delivered', async () => {
      const cy = await user('cy', 'org_admin');
      const token = await tokenOf(cy);
      await expectServedFromMemory(b, b.url, token);
      const off = await callTool(a.url, root, 'dashboard_update_user', { userId: cy.id, active: false });
      expect(off.result.isError, off.result.content[0]?.text).toBeFalsy();
      expect(await afterNotification(() => getOrg(b.url, token), (r) => r.status === 401)).toMatchObject({ status: 401, text: expect.stringMatching(/deactivated/) });
    });

    it('a role lowered on one instance counts on the other once the change is delivered', async () => {
      const di = await user('di', 'org_admin');
      const token = await tokenOf(di);
      await expectServedFromMemory(b, b.url, token);
      const demoted = await callTool(a.url, root, 'dashboard_update_user', { userId: di.id, role: 'viewer' });
      expect(demoted.result.isError, demoted.result.content[0]?.text).toBeFalsy();
      // dashboard_get_org needs admin.org, which a viewer does not hold.
      const after = await afterNotification(() => callTool(b.url, token, 'dashboard_get_org', {}), (r) => r.result.isError === true);
      expect(after.result.isError).toBe(true);
      expect(JSON.parse(after.result.content[0]!.text)).toMatchObject({ error: 'forbidden' });
    });

    it('an instance that is not listening (here: its LISTEN connection closed) reads every row', async () => {
      const ed = await user('ed', 'org_admin');
      const token = await tokenOf(ed);
      await expectServedFromMemory(b, b.url, token);
      await b.services.users.close();
      const count = countReads(b);
      expect((await getOrg(b.url, token)).status).toBe(200);
      expect(count.n).toBeGreaterThan(0);
    });
  });
}
