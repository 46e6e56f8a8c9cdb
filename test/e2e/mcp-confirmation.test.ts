/**
 * Confirmation of a call a person would want to approve (MCP 2026-07-28 multi round-trip): a v2
 * SDK Client that declares elicitation is asked, and its person's accept runs the call while a
 * decline or a cancel changes nothing and says so; a v2 Client without the capability, and a
 * 2025-11-25 client, see the tools exactly as before. The request state that carries the call
 * across the round trip is refused when forged, when its expiry was moved, when presented on
 * another call or by another caller, and when its confirmation was already used.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client as Client2026, StreamableHTTPClientTransport as Transport2026, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/client';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, failure, mcpClient, ok } from '../helpers/mcp.js';
import { insertOrg, insertUser } from '../../src/db/users.js';
import { createPersonalToken } from '../../src/db/repos.js';

const MODERN = '2026-07-28';

let s: TestServer;
let orgId: string;
let adminToken: string;
let otherAdminToken: string;
let eve: string;
const clients: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  s = await startTestServer();
  orgId = (await insertOrg(s.services.db, { name: 'Acme', slug: 'acme' })).id;
  adminToken = await s.token({ sub: 'svc_acme_admin', orgId, role: 'org_admin', perms: [] });
  otherAdminToken = await s.token({ sub: 'svc_acme_second_admin', orgId, role: 'org_admin', perms: [] });
  eve = (await insertUser(s.services.db, { orgId, username: 'eve', passwordHash: 'not-a-hash', role: 'member' })).id;
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await s?.stop();
});
afterEach(() => s.expectConformant());

/** A 2026-07-28 v2 Client; with `answer`, it declares elicitation and answers every question so, recording it. */
async function modernClient(answer?: ElicitResult, token = adminToken) {
  const asked: ElicitRequest['params'][] = [];
  const client = new Client2026({ name: 'pactum-tests-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } }, capabilities: answer ? { elicitation: { form: {} } } : {} });
  if (answer) {
    client.setRequestHandler('elicitation/create', (req) => {
      asked.push(req.params);
      return answer;
    });
  }
  await client.connect(new Transport2026(new URL(`${s.url}/api/v1/mcp`), { requestInit: { headers: bearer(token) } }));
  clients.push(client);
  return { client, asked };
}

async function tokenState(id: string) {
  const row = await s.services.db('personal_tokens').where({ id }).first<{ revoked_at: string | null }>();
  return row.revoked_at ? 'revoked' : 'live';
}

const ACCEPT: ElicitResult = { action: 'accept', content: { confirm: true } };

describe('a client that declares elicitation', () => {
  it('is asked to confirm a token revocation, and the accepted call revokes it', async () => {
    const { id } = await createPersonalToken(s.services.db, eve, 'laptop');
    const { client, asked } = await modernClient(ACCEPT);
    const revoked = ok(await client.callTool({ name: 'dashboard_revoke_user_token', arguments: { userId: eve, token: id } }));
    expect(revoked).toMatchObject({ revoked: 1, tokens: [expect.objectContaining({ id, state: 'revoked' })] });
    expect(asked).toEqual([
      {
        mode: 'form',
        message: `Revoke the personal token ${id} of user ${eve}? Whatever uses it stops working at once.`,
        requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean', title: 'Confirm', description: 'Yes: do it. No: change nothing.', default: false } }, required: ['confirm'] },
      },
    ]);
    // The audit trail has the question and the confirmed call.
    const audit = await s.services.db('audit_log').where({ tool: 'dashboard_revoke_user_token', subject: 'svc_acme_admin' }).orderBy('id').select('outcome');
    expect(audit.map((r: { outcome: string }) => r.outcome).slice(-2)).toEqual(['confirmation_asked', 'ok']);
  });

  it.each([
    ['declines', { action: 'decline' }],
    ['cancels', { action: 'cancel' }],
    ['accepts without ticking confirm', { action: 'accept', content: { confirm: false } }],
  ] as const)('changes nothing when the person %s, and says so', async (_, answer) => {
    const { id } = await createPersonalToken(s.services.db, eve, `desk-${answer.action}-${'content' in answer ? 'unticked' : 'none'}`);
    const { client, asked } = await modernClient(answer);
    expect(failure(await client.callTool({ name: 'dashboard_revoke_user_token', arguments: { userId: eve, token: id } }))).toEqual({
      error: 'declined',
      message: 'dashboard_revoke_user_token was not confirmed: the person declined or cancelled, and nothing was changed',
    });
    expect(asked).toHaveLength(1);
    expect(await tokenState(id)).toBe('live');
  });

  it('is asked before a deactivation, not before a role change', async () => {
    const frank = (await insertUser(s.services.db, { orgId, username: 'frank', passwordHash: 'not-a-hash', role: 'member' })).id;
    const { client, asked } = await modernClient({ action: 'decline' });
    expect(ok(await client.callTool({ name: 'dashboard_update_user', arguments: { userId: frank, role: 'viewer' } }))).toMatchObject({ role: 'viewer', active: true });
    expect(asked).toEqual([]);
    expect(failure(await client.callTool({ name: 'dashboard_update_user', arguments: { userId: frank, active: false } })).error).toBe('declined');
    expect(asked.map((q) => q.message)).toEqual([`Deactivate user ${frank}? Their sessions, bearer tokens and personal tokens end at once; reactivation does not bring the personal tokens back.`]);
    expect((await s.services.db('users').where({ id: frank }).first<{ active: unknown }>()).active).toBeTruthy();
  });

  it('is not asked about a call that would be refused anyway', async () => {
    const { client, asked } = await modernClient(ACCEPT);
    expect(failure(await client.callTool({ name: 'dashboard_revoke_user_token', arguments: { userId: eve } })).error).toBe('invalid_arguments');
    const viewerToken = await s.token({ sub: 'svc_acme_viewer', orgId, role: 'viewer', perms: [] });
    const viewer = await modernClient(ACCEPT, viewerToken);
    expect(failure(await viewer.client.callTool({ name: 'dashboard_queue_bulk_fix', arguments: { wcagCriterion: '1.1.1' } })).error).toBe('forbidden');
    expect([...asked, ...viewer.asked]).toEqual([]);
  });
});

describe('a client that does not declare elicitation', () => {
  it('revokes at once under 2026-07-28, as before', async () => {
    const { id } = await createPersonalToken(s.services.db, eve, 'phone');
    const { client } = await modernClient();
    expect(ok(await client.callTool({ name: 'dashboard_revoke_user_token', arguments: { userId: eve, token: id } }))).toMatchObject({ revoked: 1 });
    expect(await tokenState(id)).toBe('revoked');
  });

  it('revokes at once under 2025-11-25, as before', async () => {
    const { id } = await createPersonalToken(s.services.db, eve, 'tablet');
    const legacy = await mcpClient(s.url, bearer(adminToken));
    clients.push(legacy);
    expect(ok(await legacy.callTool({ name: 'dashboard_revoke_user_token', arguments: { userId: eve, token: id } }))).toMatchObject({ revoked: 1 });
    expect(await tokenState(id)).toBe('revoked');
  });
});

describe('the request state', () => {
  const capabilities = { elicitation: {} };
  const envelope = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'curl', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': capabilities };
  let nextId = 100;

  /** One raw tools/call of dashboard_revoke_user_token at 2026-07-28, with what a retry carries. */
  async function revoke(args: Record<string, unknown>, retry: { requestState?: string; inputResponses?: object } = {}, token = adminToken) {
    const res = await fetch(`${s.url}/api/v1/mcp`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'dashboard_revoke_user_token' },
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'dashboard_revoke_user_token', arguments: args, ...retry, _meta: envelope } }),
    });
    return { status: res.status, body: (await res.json()) as { result?: Record<string, unknown> & { requestState?: string }; error?: { code: number; message: string } } };
  }
  const accepted = { confirm: { action: 'accept', content: { confirm: true } } };

  it('travels with the question, and a retry with it and the answer runs the call', async () => {
    const { id } = await createPersonalToken(s.services.db, eve, 'raw');
    const first = await revoke({ userId: eve, token: id });
    expect(first.status).toBe(200);
    expect(first.body.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { confirm: { method: 'elicitation/create', params: { mode: 'form', message: expect.stringContaining(id) } } },
      requestState: expect.any(String),
    });
    // Its payload is signed, not encrypted: it names neither the caller nor the arguments.
    expect(Buffer.from(first.body.result!.requestState!.split('.')[1]!, 'base64url').toString()).not.toMatch(new RegExp(`${id}|${eve}|svc_acme_admin`));
    // An answer without the state is not taken: the question is asked again.
    const unstated = await revoke({ userId: eve, token: id }, { inputResponses: accepted });
    expect(unstated.body.result).toMatchObject({ resultType: 'input_required' });
    expect(await tokenState(id)).toBe('live');

    const done = await revoke({ userId: eve, token: id }, { requestState: first.body.result!.requestState, inputResponses: accepted });
    expect(done.body.result).toMatchObject({ resultType: 'complete', structuredContent: { revoked: 1 } });
    expect(await tokenState(id)).toBe('revoked');
    // The same confirmed retry again: the confirmation was used.
    const replayed = await revoke({ userId: eve, token: id }, { requestState: first.body.result!.requestState, inputResponses: accepted });
    expect(replayed.body).toMatchObject({ error: { code: -32602, message: 'The requestState was already used to confirm this call; call the tool again without it to be asked anew' } });
  });

  it('is refused when forged', async () => {
    const { id } = await createPersonalToken(s.services.db, eve, 'forged');
    const { requestState } = (await revoke({ userId: eve, token: id })).body.result!;
    const [version, payload, mac] = requestState!.split('.') as [string, string, string];
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { exp: number };
    const later = Buffer.from(JSON.stringify({ ...decoded, exp: decoded.exp + 86_400 })).toString('base64url');
    for (const forged of [`${version}.${later}.${mac}`, `${version}.${payload}.${'A'.repeat(mac.length)}`, 'made-up']) {
      const res = await revoke({ userId: eve, token: id }, { requestState: forged, inputResponses: accepted });
      expect(res.body).toMatchObject({ error: { code: -32602, message: 'Invalid or expired requestState' } });
    }
    expect(await tokenState(id)).toBe('live');
  });

  it('is refused on another call, and from another caller', async () => {
    const { id: first } = await createPersonalToken(s.services.db, eve, 'replay-a');
    const { id: second } = await createPersonalToken(s.services.db, eve, 'replay-b');
    const { requestState } = (await revoke({ userId: eve, token: first })).body.result!;
    const refusal = { error: { code: -32602, message: 'The requestState was issued for another call (another caller, tool or arguments); call the tool again without it' } };
    expect((await revoke({ userId: eve, token: second }, { requestState, inputResponses: accepted })).body).toMatchObject(refusal);
    expect((await revoke({ userId: eve, token: first }, { requestState, inputResponses: accepted }, otherAdminToken)).body).toMatchObject(refusal);
    expect([await tokenState(first), await tokenState(second)]).toEqual(['live', 'live']);
  });
});
