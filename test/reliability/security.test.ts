/**
 * The attack matrix; each attack must be refused, and nothing secret may leak.
 *
 * - Bearer JWTs (server with JWT_SECRET and JWT_ISSUER): forged signature, altered signature and
 *   payload, expired, not yet valid, `alg: none` (any case), another HMAC algorithm, wrong or
 *   missing audience and issuer, no exp, no sub or org, an unknown role, a deactivated user, a
 *   token of another installation — each 401 with WWW-Authenticate and the spec's error body.
 * - Session cookies: after logout, tampered, after a password reset, after deactivation — 401.
 * - Cross-org: for EVERY tool of the catalogue, an org admin of org A calls it with the ids of
 *   org B's real resources (a user, service connections, a brand guideline, a completed scan with
 *   its report and brand score, a fleet site, a coordinated PR): refused where the call names B,
 *   and no answer to A ever carries an id, name or secret of B; B's services (compliance, llm)
 *   are never called on A's behalf; B's data is unchanged afterwards.
 * - oids with path traversal (`../`, `%2e%2e`, encoded slashes, double encoding, NUL), wrong
 *   length, upper-case or non-hex, on every object endpoint and in batch bodies: 4xx in the
 *   spec's shape, never 5xx, and nothing written outside the store.
 * - Scans of private addresses (server without SCAN_ALLOW_PRIVATE_NETWORKS): loopback in every
 *   spelling, 10/8, 172.16/12, 192.168/16, 100.64/10, 169.254.169.254, ::1, fe80::/10, fc00::/7,
 *   mapped IPv4, `localhost`, other schemes: refused at once, and a canary listener on loopback
 *   sees no connection.
 * - Transfer tokens and action hrefs: altered signature, altered payload (operation, oid, size,
 *   expiry, repository), the oid swapped in the href, another repository's path, the wrong
 *   operation, expired, forged with another key, and crossed with dashboard JWTs: all refused,
 *   and no object changes.
 * - Secrets: JWT_SECRET, the generated keys, every password, session cookie, connection secret,
 *   personal token and signed JWT of the run appear in no response body and no log line (and no
 *   password or client secret in the audit trail); transfer tokens appear in no log line.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tools, type ToolName } from '../../generated/tools.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { startFixtureSite, type FixtureSite } from '../helpers/site.js';
import { createPersonalToken } from '../../src/db/repos.js';
import { FULL, GIT_LFS, basicHeader, content, rawRequest, report, sha256, sized } from './support.js';

const JWT_SECRET = `jwt-${randomBytes(24).toString('hex')}`;
const ISSUER = 'https://id.pactum.test';
const PASSWORDS = {
  wally: `wally-${randomBytes(6).toString('hex')}-pw`,
  sally: `sally-${randomBytes(6).toString('hex')}-pw`,
  sallyReset: `sally-reset-${randomBytes(6).toString('hex')}`,
  oscar: `oscar-${randomBytes(6).toString('hex')}-pw`,
  grace: `grace-${randomBytes(6).toString('hex')}-pw`,
  intruder: `intruder-${randomBytes(6).toString('hex')}`,
  acmeUser: `acme-user-${randomBytes(6).toString('hex')}`,
};
const CLIENT_SECRETS = {
  compliance: `globex-compliance-secret-${randomBytes(8).toString('hex')}`,
  llm: `globex-llm-secret-${randomBytes(8).toString('hex')}`,
  acme: `acme-secret-${randomBytes(8).toString('hex')}`,
  attempt: `attempted-secret-${randomBytes(8).toString('hex')}`,
};

/** Secrets of the run: none may appear in a response body or a log line. */
const secrets = new Map<string, string>();
/** Transfer tokens: in response bodies by design, never in a log line. */
const transferTokens = new Set<string>();
const addSecret = (what: string, value: string) => value && secrets.set(value, what);
/** Shown once, in the answer that created the webhook: in no other body, no log line, no audit row. */
let webhookSecretOfB = '';
for (const [k, v] of Object.entries(PASSWORDS)) addSecret(`password of ${k}`, v);
for (const [k, v] of Object.entries(CLIENT_SECRETS)) addSecret(`client secret ${k}`, v);
addSecret('JWT_SECRET', JWT_SECRET);

let attacks = 0;
let refused = 0;
const failures: string[] = [];
/** Records one attack: `ok` when it was refused (and leaked nothing). */
function attack(name: string, ok: boolean, detail = '') {
  attacks++;
  if (ok) refused++;
  else failures.push(`${name}${detail ? `: ${detail}` : ''}`);
}

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };

interface McpAnswer {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON-RPC answer, read like helpers/http.ts json
  message: any;
}

let rpcId = 1;
async function mcp(base: string, auth: Record<string, string>, method: string, params?: unknown): Promise<McpAnswer> {
  const res = await fetch(`${base}/api/v1/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, ...auth },
    body: JSON.stringify({ jsonrpc: '2.0', id: rpcId++, method, ...(params === undefined ? {} : { params }) }),
  });
  const text = await res.text();
  let message: unknown = null;
  try {
    message = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, text, message };
}

const callTool = (base: string, auth: Record<string, string>, name: string, args: Record<string, unknown>) => mcp(base, auth, 'tools/call', { name, arguments: args });
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

/** The structured result of a successful tool call, or throws with the error. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a tool result, read like helpers/http.ts json
function ok(a: McpAnswer): any {
  if (a.status !== 200 || !a.message?.result || a.message.result.isError) throw new Error(`expected a result, got ${a.status} ${a.text.slice(0, 500)}`);
  return a.message.result.structuredContent;
}
const isRefusal = (a: McpAnswer) => a.status === 200 && (Boolean(a.message?.error) || a.message?.result?.isError === true);

/** A 401 in the dashboard's error shape, with the Bearer challenge. */
function isDashboard401(a: McpAnswer): boolean {
  const b = a.message;
  return (
    a.status === 401 &&
    /^Bearer /.test(a.headers.get('www-authenticate') ?? '') &&
    (a.headers.get('content-type') ?? '').startsWith('application/json') &&
    b?.error === 'Unauthorized' &&
    b?.statusCode === 401 &&
    typeof b?.message === 'string' &&
    b?.result === undefined
  );
}

let s1: TestServer;
let s2: TestServer;
let acmeId: string;
let wallyAuth: string;

beforeAll(async () => {
  // The server of the JWT, session, oid, scan-target and transfer attacks: no private networks.
  s1 = await startTestServer({ JWT_SECRET, JWT_ISSUER: ISSUER });
  const acme = await lfsFixture(s1.services.db, { org: 'acme', repo: 'site', username: 'wally', password: PASSWORDS.wally, access: 'write' });
  acmeId = acme.org.id;
  await lfsFixture(s1.services.db, { org: 'globex', repo: 'vault', username: 'oscar', password: PASSWORDS.oscar, access: 'write' });
  const { token: pat } = await createPersonalToken(s1.services.db, acme.user.id, 'reliability');
  addSecret('personal token of wally', pat);
  wallyAuth = basicHeader('wally', PASSWORDS.wally);
}, 60_000);

afterAll(async () => {
  await s1?.stop();
  await s2?.stop();
});

describe('bearer tokens', () => {
  it('refuses forged, altered, expired, unsigned, mis-addressed and malformed JWTs with 401 and the spec body', async () => {
    const key = new TextEncoder().encode(JWT_SECRET);
    const audience = `${s1.url}/api/v1/mcp`;
    const now = Math.floor(Date.now() / 1000);
    const claims = { orgId: acmeId, scopes: ['admin.system'] };
    const sign = (opts: { key?: Uint8Array; alg?: string; aud?: string | null; iss?: string | null; exp?: number | null; nbf?: number; sub?: string | null; body?: Record<string, unknown> } = {}) => {
      const jwt = new SignJWT(opts.body ?? claims).setProtectedHeader({ alg: opts.alg ?? 'HS256', typ: 'JWT' }).setIssuedAt(now - 30);
      if (opts.sub !== null) jwt.setSubject(opts.sub ?? 'svc_reliability');
      if (opts.aud !== null) jwt.setAudience(opts.aud ?? audience);
      if (opts.iss !== null) jwt.setIssuer(opts.iss ?? ISSUER);
      if (opts.exp !== null) jwt.setExpirationTime(opts.exp ?? now + 600);
      if (opts.nbf !== undefined) jwt.setNotBefore(opts.nbf);
      return jwt.sign(opts.key ?? key);
    };
    const valid = await sign();
    addSecret('a valid JWT', valid);
    // The control: the same construction with nothing wrong is accepted.
    const control = await mcp(s1.url, bearer(valid), 'tools/list');
    expect(control.status, control.text).toBe(200);
    expect(control.message.result.tools.length).toBe(Object.keys(tools).length);

    const [h, p, sig] = valid.split('.') as [string, string, string];
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const flip = (x: string, at: number) => x.slice(0, at) + (x[at] === 'A' ? 'B' : 'A') + x.slice(at + 1);
    const unsecured = (alg: string) => `${b64({ alg, typ: 'JWT' })}.${p}.`;
    // A member of acme: its payload with admin.system spliced in, the signature kept.
    const member = await sign({ body: { orgId: acmeId, role: 'member' } });
    const [mh, mp, ms] = member.split('.') as [string, string, string];
    const elevated = `${mh}.${b64({ ...JSON.parse(Buffer.from(mp, 'base64url').toString()), scopes: ['admin.system'] })}.${ms}`;
    // A user that existed, then was deactivated.
    const gone = await lfsFixture(s1.services.db, { org: 'acme', repo: 'site', username: 'gone', password: 'gone-password-1' });
    const goneToken = await sign({ sub: gone.user.id, body: { orgId: acmeId, role: 'member' } });
    expect((await mcp(s1.url, bearer(goneToken), 'tools/list')).status).toBe(200);
    const admin = await s1.token({ orgId: acmeId, perms: ['admin.system'] });
    addSecret('a JWT minted by the test server', admin);
    ok(await callTool(s1.url, bearer(admin), 'dashboard_update_user', { userId: gone.user.id, active: false }));

    const forged: [string, string][] = [
      ['signed with another key', await sign({ key: new TextEncoder().encode(`another-${JWT_SECRET}`) })],
      ['signature altered', `${h}.${p}.${flip(sig, 10)}`],
      ['signature removed', `${h}.${p}.`],
      ['payload altered, signature kept (admin.system spliced into a member token)', elevated],
      ['expired two minutes ago', await sign({ exp: now - 120 })],
      ['not valid before ten minutes from now', await sign({ nbf: now + 600 })],
      ['alg none', unsecured('none')],
      ['alg None', unsecured('None')],
      ['alg NONE', unsecured('NONE')],
      ['alg none (jose UnsecuredJWT)', new UnsecuredJWT(claims).setSubject('usr_x').setAudience(audience).setIssuer(ISSUER).setExpirationTime(now + 600).encode()],
      ['alg HS512 with the right key', await sign({ alg: 'HS512' })],
      ['alg HS384 with the right key', await sign({ alg: 'HS384' })],
      ['header says RS256, HMAC signature', `${b64({ alg: 'RS256', typ: 'JWT' })}.${p}.${createHmac('sha256', JWT_SECRET).update(`${b64({ alg: 'RS256', typ: 'JWT' })}.${p}`).digest('base64url')}`],
      ['wrong audience', await sign({ aud: 'https://elsewhere.example/api/v1/mcp' })],
      ['no audience', await sign({ aud: null })],
      ['wrong issuer', await sign({ iss: 'https://evil.example' })],
      ['no issuer', await sign({ iss: null })],
      ['no exp', await sign({ exp: null })],
      ['no sub', await sign({ sub: null })],
      ['no orgId', await sign({ body: { scopes: ['admin.system'] } })],
      ['unknown role', await sign({ body: { orgId: acmeId, role: 'superuser' } })],
      ['a deactivated user', goneToken],
      ['the token of another installation (its own key)', await s2Token()],
      ['not a JWT', 'not-a-jwt'],
      ['two segments', `${h}.${p}`],
      ['garbage segments', 'a.b.c'],
      ['payload not JSON', `${h}.${Buffer.from('not json').toString('base64url')}.${sig}`],
    ];
    for (const [name, token] of forged) {
      const a = await mcp(s1.url, bearer(token), 'tools/list');
      attack(`JWT ${name}`, isDashboard401(a), `answered ${a.status} ${a.headers.get('www-authenticate')} ${a.text.slice(0, 200)}`);
      const call = await callTool(s1.url, bearer(token), 'dashboard_list_orgs', {});
      attack(`JWT ${name} (tools/call)`, isDashboard401(call), `answered ${call.status} ${call.text.slice(0, 200)}`);
    }
  });

  it('refuses a session cookie after logout, tampered, after a password reset and after deactivation', async () => {
    const { user } = await lfsFixture(s1.services.db, { org: 'acme', repo: 'site', username: 'sally', password: PASSWORDS.sally });
    const admin = bearer(await s1.token({ orgId: acmeId, perms: ['admin.system'] }));
    const login = async (password: string) => {
      const res = await fetch(`${s1.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ username: 'sally', password }) });
      const text = await res.text();
      const cookie = /session=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')?.[1] ?? '';
      if (cookie) addSecret('a session cookie', cookie);
      return { status: res.status, cookie, text };
    };
    const withCookie = (cookie: string) => mcp(s1.url, { cookie: `session=${cookie}` }, 'tools/list');

    const wrong = await login('not the password');
    attack('login with a wrong password', wrong.status === 401 && !wrong.cookie, `answered ${wrong.status}`);

    const first = await login(PASSWORDS.sally);
    expect(first.status).toBe(200);
    expect((await withCookie(first.cookie)).status, 'a fresh session works').toBe(200);
    const out = await fetch(`${s1.url}/api/v1/auth/logout`, { method: 'POST', headers: { cookie: `session=${first.cookie}`, accept: 'application/json' } });
    expect(out.status).toBe(204);
    const after = await withCookie(first.cookie);
    attack('session cookie after logout', isDashboard401(after), `answered ${after.status} ${after.text.slice(0, 200)}`);

    const second = await login(PASSWORDS.sally);
    expect((await withCookie(second.cookie)).status).toBe(200);
    for (const [name, value] of [
      ['one character altered', second.cookie.slice(0, -3) + (second.cookie.at(-3) === 'A' ? 'B' : 'A') + second.cookie.slice(-2)],
      ['truncated', second.cookie.slice(0, -4)],
      ['extended', `${second.cookie}AAAA`],
      ['made up', randomBytes(24).toString('base64url')],
    ] as const) {
      const a = await withCookie(value);
      attack(`session cookie ${name}`, isDashboard401(a), `answered ${a.status}`);
    }
    ok(await callTool(s1.url, admin, 'dashboard_update_user', { userId: user.id, password: PASSWORDS.sallyReset }));
    const reset = await withCookie(second.cookie);
    attack('session cookie after a password reset', isDashboard401(reset), `answered ${reset.status}`);
    const old = await login(PASSWORDS.sally);
    attack('login with the password before the reset', old.status === 401, `answered ${old.status}`);

    const third = await login(PASSWORDS.sallyReset);
    expect((await withCookie(third.cookie)).status).toBe(200);
    ok(await callTool(s1.url, admin, 'dashboard_update_user', { userId: user.id, active: false }));
    const deactivated = await withCookie(third.cookie);
    attack('session cookie after deactivation', isDashboard401(deactivated), `answered ${deactivated.status}`);
    const relogin = await login(PASSWORDS.sallyReset);
    attack('login of a deactivated user', relogin.status === 401 && !relogin.cookie, `answered ${relogin.status}`);
  });
});

/** A token signed by another installation (s2 has its own generated key). */
async function s2Token(): Promise<string> {
  s2 ??= await startTestServer({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', SERVICE_TIMEOUT_MS: '2000' });
  const t = await s2.token({ orgId: acmeId, perms: ['admin.system'] });
  addSecret('a JWT of the second server', t);
  return t;
}

describe('cross-org isolation, for every tool of the catalogue', () => {
  let site: FixtureSite;
  let services: Server;
  let servicesUrl = '';
  let serviceHits = 0;
  let A: Record<string, string>;
  let B: Record<string, string>;
  let aId: string;
  let bId: string;
  // Org B's resources.
  const b = { userId: '', scanId: '', siteId: '', siteUrl: '', prId: '', criterion: '', fingerprint: '', scheduleId: '', webhookId: '', webhookUrl: '' };

  beforeAll(async () => {
    await s2Token();
    site = await startFixtureSite(0);
    // Org B's compliance and llm services: one stand-in that counts every request it gets.
    services = createServer((req, res) => {
      serviceHits++;
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const json = (status: number, payload: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
        if (req.url === '/api/v1/oauth/token') return json(200, { access_token: `svc-token-${randomBytes(4).toString('hex')}` });
        if (req.url === '/api/v1/health') return json(200, { status: 'ok' });
        if (req.url?.startsWith('/api/v1/regulations')) return json(200, { regulations: [] });
        if (req.url?.startsWith('/api/v1/proposals')) return json(200, { proposals: [] });
        if (req.url === '/api/v1/fix-drafts') return json(200, { fixedHtml: `<!-- globex llm -->${JSON.parse(body || '{}').htmlContext}`, explanation: 'globex llm draft', effort: 'low' });
        json(404, {});
      });
    });
    await new Promise<void>((r) => services.listen(0, '127.0.0.1', () => r()));
    servicesUrl = `http://127.0.0.1:${(services.address() as AddressInfo).port}`;

    aId = ok(await callTool(s2.url, bearer(await s2.token({ perms: ['admin.system'] })), 'dashboard_create_org', { name: 'Acme Reliability', slug: 'acme-rel' })).id;
    bId = ok(await callTool(s2.url, bearer(await s2.token({ perms: ['admin.system'] })), 'dashboard_create_org', { name: 'Globex Corporation', slug: 'globex-corp' })).id;
    const aToken = await s2.token({ sub: 'svc_acme_admin', orgId: aId, role: 'org_admin' });
    const bToken = await s2.token({ sub: 'svc_globex_admin', orgId: bId, role: 'org_admin' });
    addSecret('the JWT of org A', aToken);
    addSecret('the JWT of org B', bToken);
    A = bearer(aToken);
    B = bearer(bToken);

    // Org B: a user, two service connections, a brand guideline, a completed scan of a site with its
    // report and brand score, and a coordinated PR.
    b.userId = ok(await callTool(s2.url, B, 'dashboard_create_user', { username: 'globex-grace', password: PASSWORDS.grace, role: 'member' })).id;
    ok(await callTool(s2.url, B, 'dashboard_create_service_connection', { serviceId: 'compliance', url: servicesUrl, clientId: 'globex-compliance-client', clientSecret: CLIENT_SECRETS.compliance }));
    ok(await callTool(s2.url, B, 'dashboard_create_service_connection', { serviceId: 'llm', url: servicesUrl, clientId: 'globex-llm-client', clientSecret: CLIENT_SECRETS.llm }));
    expect(ok(await callTool(s2.url, B, 'dashboard_test_service_connection', { serviceId: 'llm' })).ok).toBe(true);
    ok(await callTool(s2.url, B, 'dashboard_set_brand_guideline', {
      colors: [{ name: 'Globex Vault Teal', value: '#0a7b83', role: 'primary' }, { name: 'Globex Ink', value: '#000000', role: 'text' }],
      fonts: [{ family: 'GlobexSans', role: 'body' }],
      componentTokens: [{ name: 'globex-button', kind: 'class' }],
    }));
    b.siteUrl = site.url('/');
    const scan = ok(await callTool(s2.url, B, 'dashboard_scan_site', { siteUrl: b.siteUrl, scanMode: 'site', maxPages: 10 }));
    b.scanId = scan.scanId;
    for (let i = 0; i < 1200; i++) {
      const p = ok(await callTool(s2.url, B, 'dashboard_get_scan_progress', { scanId: b.scanId }));
      if (p.finished) {
        // The fixture site has a broken link (/x): a page that could not be checked, so not plain completed.
        expect(p.status).toBe('completed_with_errors');
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const fleet = ok(await callTool(s2.url, B, 'dashboard_list_fleet', {}));
    b.siteId = fleet.sites[0].siteId;
    const issues = ok(await callTool(s2.url, B, 'dashboard_query_issues', { scanId: b.scanId, limit: 50 }));
    b.fingerprint = issues.issues[0].fingerprint;
    b.criterion = issues.issues.map((i: { wcagCriterion: string }) => i.wcagCriterion).find((c: string) => /^\d\.\d\.\d+$/.test(c)) ?? '1.1.1';
    b.prId = ok(await callTool(s2.url, B, 'dashboard_queue_bulk_fix', { wcagCriterion: b.criterion, summary: 'Globex secret remediation plan' })).pr.id;
    // B's monitoring: a weekly schedule of its site, and a webhook (its secret shown once, to B).
    b.scheduleId = ok(await callTool(s2.url, B, 'dashboard_set_schedule', { siteUrl: b.siteUrl, cron: '0 6 * * 1' })).scheduleId;
    b.webhookUrl = `${servicesUrl}/globex-hook`;
    const hook = ok(await callTool(s2.url, B, 'dashboard_create_webhook', { url: b.webhookUrl }));
    b.webhookId = hook.webhook.webhookId;
    webhookSecretOfB = hook.secret;
    for (const [k, v] of Object.entries(b)) expect(v, `org B's ${k}`).toMatch(/./);
    ok(await callTool(s2.url, B, 'dashboard_get_brand_score', { scanId: b.scanId }));
    expect(ok(await callTool(s2.url, B, 'dashboard_list_regulations', { jurisdiction: 'EU' })).source).toBe('compliance-service');
  }, 180_000);

  afterAll(async () => {
    await site?.close();
    await new Promise((r) => services?.close(r));
  });

  it("never lets org A's admin reach org B's data", async () => {
    // What identifies org B; none of it may reach A (unless A itself sent it in that request).
    const needles: Record<string, string> = {
      "B's org id": bId, "B's slug": 'globex-corp', "B's name": 'Globex Corporation', "B's user id": b.userId, "B's username": 'globex-grace',
      "B's scan id": b.scanId, "B's site id": b.siteId, "B's site": b.siteUrl, "B's coordinated PR": b.prId, "B's PR summary": 'Globex secret remediation plan',
      "B's connection client": 'globex-compliance-client', "B's llm client": 'globex-llm-client', "B's service URL": servicesUrl,
      "B's brand colour": 'Globex Vault Teal', "B's font": 'GlobexSans', "B's component": 'globex-button', "B's llm draft": 'globex llm draft',
      "B's schedule": b.scheduleId, "B's webhook": b.webhookId, "B's webhook URL": b.webhookUrl,
      "B's compliance secret": CLIENT_SECRETS.compliance, "B's llm secret": CLIENT_SECRETS.llm, "B's user password": PASSWORDS.grace,
    };
    const hitsBefore = serviceHits;
    type Expect = 'refused' | 'scoped';
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tool results, read like helpers/http.ts json
    const plan: [ToolName, Record<string, unknown>, Expect, ((result: any) => string | null)?][] = [
      ['dashboard_coordinated_pr_status', { id: b.prId }, 'refused'],
      ['dashboard_create_org', { name: 'Globex Corporation', slug: 'globex-corp' }, 'refused'],
      ['dashboard_create_org', { name: 'Globex Two', slug: 'globex-two', targetOrgId: bId }, 'refused'],
      ['dashboard_create_service_connection', { serviceId: 'compliance', url: 'https://compliance.acme.invalid', clientId: 'acme-client', clientSecret: CLIENT_SECRETS.acme, targetOrgId: bId }, 'scoped'],
      ['dashboard_create_user', { username: 'acme-intruder', password: PASSWORDS.intruder, role: 'member', targetOrgId: bId }, 'refused'],
      ['dashboard_create_user', { username: 'acme-intruder2', password: PASSWORDS.intruder, role: 'system_admin' }, 'refused'],
      ['dashboard_create_user', { username: 'acme-user', password: PASSWORDS.acmeUser, role: 'member' }, 'scoped', (r) => (r.orgId === aId ? null : `created in ${r.orgId}`)],
      ['dashboard_generate_fix', { wcagCriterion: '1.1.1', issueMessage: 'Images must have alternative text', htmlContext: '<img src="/a.png">', targetOrgId: bId }, 'scoped', (r) => (r.engine === 'deterministic' ? null : `engine ${r.engine}`)],
      ['dashboard_get_brand_guideline', { targetOrgId: bId }, 'refused'],
      ['dashboard_get_brand_score', { scanId: b.scanId }, 'refused'],
      ['dashboard_get_brand_score', { siteUrl: b.siteUrl }, 'refused'],
      ['dashboard_get_org', { targetOrgId: bId }, 'refused'],
      ['dashboard_get_proposal', { proposalId: 'prp_01jdq3v8k2m5n7p9r1s3t5v7x9', targetOrgId: bId }, 'refused'],
      ['dashboard_get_regulation', { regulationId: 'EU-EAA', targetOrgId: bId }, 'scoped', (r) => (r.source === 'compliance-service' ? "answered from B's compliance service" : null)],
      ['dashboard_get_report', { scanId: b.scanId }, 'refused'],
      // B's scan ran on jsdom and has no screenshots: A is told exactly what a missing one gets.
      ['dashboard_get_screenshot', { scanId: b.scanId, screenshotId: '0f8a5c2e9b7d41a3c6e5f4d3b2a19087' }, 'refused'],
      ['dashboard_get_scan_progress', { scanId: b.scanId }, 'refused'],
      ['dashboard_get_service_connection', { serviceId: 'llm' }, 'refused'],
      ['dashboard_get_service_connection', { serviceId: 'llm', targetOrgId: bId }, 'refused'],
      ['dashboard_get_user', { userId: b.userId }, 'refused'],
      ['dashboard_list_brand_scores', { siteUrl: b.siteUrl }, 'scoped', (r) => (r.scores.length ? `${r.scores.length} scores` : null)],
      ['dashboard_list_brand_scores', { targetOrgId: bId }, 'scoped', (r) => (r.scores.length ? `${r.scores.length} scores` : null)],
      ['dashboard_list_fleet', { targetOrgId: bId }, 'scoped', (r) => (r.sites.length ? `${r.sites.length} sites` : null)],
      ['dashboard_list_jurisdictions', { targetOrgId: bId }, 'scoped'],
      ['dashboard_list_orgs', { query: 'globex' }, 'scoped', (r) => (r.orgs.length ? `${r.orgs.length} orgs` : null)],
      ['dashboard_list_orgs', {}, 'scoped', (r) => (r.orgs.every((o: { id: string }) => o.id === aId) ? null : 'other orgs listed')],
      ['dashboard_list_proposals', { targetOrgId: bId }, 'scoped'],
      ['dashboard_list_regulations', { jurisdiction: 'EU', targetOrgId: bId }, 'scoped', (r) => (r.source === 'compliance-service' ? "answered from B's compliance service" : null)],
      ['dashboard_list_reports', { siteUrl: b.siteUrl }, 'scoped', (r) => (r.reports.length ? `${r.reports.length} reports` : null)],
      ['dashboard_list_reports', { targetOrgId: bId }, 'scoped', (r) => (r.reports.length ? `${r.reports.length} reports` : null)],
      ['dashboard_list_service_connections', { targetOrgId: bId }, 'scoped', (r) => (r.connections.every((c: { serviceId: string }) => c.serviceId === 'compliance') ? null : 'connections of B listed')],
      ['dashboard_list_user_tokens', { userId: b.userId }, 'refused'],
      ['dashboard_revoke_user_token', { userId: b.userId, token: 'git-lfs' }, 'refused'],
      // B's user's OAuth grants: not A's to see or end, whatever the grant id guessed.
      ['dashboard_list_oauth_grants', { userId: b.userId }, 'refused'],
      ['dashboard_revoke_oauth_grant', { userId: b.userId, grantId: 'grant-guessed-by-acme' }, 'refused'],
      ['dashboard_revoke_oauth_grant', { grantId: 'grant-guessed-by-acme' }, 'refused'],
      ['dashboard_list_users', { targetOrgId: bId }, 'refused'],
      ['dashboard_list_users', {}, 'scoped', (r) => (r.users.every((u: { orgId: string }) => u.orgId === aId) ? null : 'users of another org listed')],
      ['dashboard_list_wcag_criteria', { targetOrgId: bId }, 'scoped'],
      ['dashboard_query_issues', { scanId: b.scanId }, 'refused'],
      ['dashboard_list_findings', { scanId: b.scanId }, 'refused'],
      ['dashboard_mark_finding', { scanId: b.scanId, fingerprint: b.fingerprint, mark: 'false_positive', reason: 'not ours to judge' }, 'refused'],
      ['dashboard_review_finding', { scanId: b.scanId, fingerprint: b.fingerprint, outcome: 'pass', note: 'not ours to judge' }, 'refused'],
      ['dashboard_verify_fixes', { scanId: b.scanId }, 'refused'],
      // B's ACR: neither read nor assessed by A.
      ['dashboard_get_acr', { scanId: b.scanId }, 'refused'],
      ['dashboard_assess_criterion', { scanId: b.scanId, criterion: '1.1.1', conformance: 'Supports', remarks: 'not ours to judge' }, 'refused'],
      ['dashboard_verify_fixes', { scanId: b.scanId, againstScanId: b.scanId }, 'refused'],
      ['dashboard_queue_bulk_fix', { wcagCriterion: b.criterion, siteIds: [b.siteId] }, 'refused'],
      ['dashboard_queue_bulk_fix', { wcagCriterion: b.criterion, targetOrgId: bId }, 'refused'],
      ['dashboard_scan_page', { url: b.siteUrl, targetOrgId: bId }, 'scoped'],
      ['dashboard_scan_summary_for_fleet', { top: 10, targetOrgId: bId }, 'scoped', (r) => (r.sites || r.totalIssues ? `sites ${r.sites}, issues ${r.totalIssues}` : null)],
      // A link to B's report would publish it: refused as a missing scan; and B's links cannot be revoked.
      ['dashboard_share_report', { scanId: b.scanId }, 'refused'],
      ['dashboard_revoke_report_share', { scanId: b.scanId }, 'refused'],
      ['dashboard_set_brand_guideline', { colors: [{ name: 'Acme Red', value: '#aa0000' }], fonts: [{ family: 'AcmeSans' }], componentTokens: [], targetOrgId: bId }, 'scoped'],
      ['dashboard_test_service_connection', { serviceId: 'llm' }, 'refused'],
      ['dashboard_test_service_connection', { serviceId: 'compliance', targetOrgId: bId }, 'scoped', (r) => (r.ok ? "reached B's service" : null)],
      ['dashboard_update_org', { targetOrgId: bId, name: 'Pwned by Acme' }, 'refused'],
      ['dashboard_update_org', { targetOrgId: aId, slug: 'globex-corp' }, 'refused'],
      ['dashboard_update_service_connection', { serviceId: 'llm', url: 'https://evil.example' }, 'refused'],
      ['dashboard_update_service_connection', { serviceId: 'llm', clientSecret: 'x'.repeat(12), targetOrgId: bId }, 'refused'],
      ['dashboard_update_user', { userId: b.userId, active: false }, 'refused'],
      ['dashboard_update_user', { userId: b.userId, role: 'viewer' }, 'refused'],
      ['dashboard_update_user', { userId: b.userId, password: PASSWORDS.intruder }, 'refused'],
      // Monitoring: B's schedule and webhook are not found; what A sets up is A's own.
      ['dashboard_list_schedules', { targetOrgId: bId }, 'scoped', (r) => (r.schedules.length ? `${r.schedules.length} schedules` : null)],
      ['dashboard_delete_schedule', { scheduleId: b.scheduleId }, 'refused'],
      ['dashboard_set_schedule', { siteUrl: b.siteUrl, cron: '0 7 * * 2', targetOrgId: bId }, 'scoped', (r) => (r.scheduleId === b.scheduleId ? "changed B's schedule" : null)],
      ['dashboard_list_webhooks', { targetOrgId: bId }, 'scoped', (r) => (r.webhooks.length ? `${r.webhooks.length} webhooks` : null)],
      ['dashboard_delete_webhook', { webhookId: b.webhookId }, 'refused'],
      ['dashboard_list_webhook_deliveries', { webhookId: b.webhookId }, 'refused'],
      ['dashboard_create_webhook', { url: 'https://hooks.acme.invalid/pactum', targetOrgId: bId }, 'scoped', (r) => (r.webhook.url.startsWith('https://hooks.acme.invalid') ? null : `created ${r.webhook.url}`)],
      // Last: a scan of B's site by A is A's own scan, in A's org.
      ['dashboard_scan_site', { siteUrl: b.siteUrl, scanMode: 'single', targetOrgId: bId }, 'scoped', (r) => (r.orgId === aId ? null : `scan created in ${r.orgId}`)],
    ];
    // Every tool of the catalogue is attacked at least once.
    const covered = new Set(plan.map(([name]) => name));
    expect(Object.keys(tools).filter((t) => !covered.has(t as ToolName)), 'tools of the catalogue without a cross-org attack').toEqual([]);

    for (const [tool, args, want, check] of plan) {
      const a = await callTool(s2.url, A, tool, args);
      const sent = JSON.stringify(args);
      const leaks = Object.entries(needles).filter(([, v]) => v && a.text.includes(v) && !sent.includes(v)).map(([k]) => k);
      const refusedNow = isRefusal(a);
      let problem: string | null = null;
      if (a.status !== 200) problem = `HTTP ${a.status}`;
      else if (leaks.length) problem = `leaked ${leaks.join(', ')}`;
      else if (want === 'refused' && !refusedNow) problem = `not refused: ${a.text.slice(0, 300)}`;
      else if (want === 'scoped' && !refusedNow && check) problem = check(a.message.result.structuredContent);
      attack(`cross-org ${tool} ${sent.slice(0, 120)}`, problem === null, problem ?? '');
    }
    attack("cross-org: B's services were not called on A's behalf", serviceHits === hitsBefore, `${serviceHits - hitsBefore} requests`);

    // Org B's data is as it was.
    const org = ok(await callTool(s2.url, B, 'dashboard_get_org', { targetOrgId: bId }));
    attack("cross-org: B's org unchanged", org.name === 'Globex Corporation' && org.slug === 'globex-corp', JSON.stringify(org));
    const grace = ok(await callTool(s2.url, B, 'dashboard_get_user', { userId: b.userId }));
    attack("cross-org: B's user unchanged", grace.active === true && grace.role === 'member' && grace.orgId === bId, JSON.stringify(grace));
    const login = await fetch(`${s2.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ username: 'globex-grace', password: PASSWORDS.grace }) });
    const cookie = /session=([^;]*)/.exec(login.headers.get('set-cookie') ?? '')?.[1];
    if (cookie) addSecret('a session cookie of org B', cookie);
    await login.body?.cancel();
    attack("cross-org: B's user's password unchanged", login.status === 200, `login answered ${login.status}`);
    const llm = ok(await callTool(s2.url, B, 'dashboard_get_service_connection', { serviceId: 'llm' }));
    attack("cross-org: B's llm connection unchanged", llm.url === servicesUrl && llm.clientId === 'globex-llm-client', JSON.stringify(llm));
    const guideline = ok(await callTool(s2.url, B, 'dashboard_get_brand_guideline', {}));
    attack("cross-org: B's brand guideline unchanged", guideline.colors.some((c: { name: string }) => c.name === 'Globex Vault Teal'), JSON.stringify(guideline).slice(0, 200));
    const bReports = ok(await callTool(s2.url, B, 'dashboard_list_reports', {}));
    attack("cross-org: B's scans unchanged", bReports.reports.length === 1 && bReports.reports[0].scanId === b.scanId, JSON.stringify(bReports).slice(0, 300));
    const aPrs = await s2.services.db('coordinated_prs').where({ org_id: aId });
    attack("cross-org: no coordinated PR was queued for A over B's sites", aPrs.length === 0, `${aPrs.length} PRs`);
    const bLegs = await s2.services.db('coordinated_pr_legs').where({ site_id: b.siteId });
    attack("cross-org: B's site is in B's PR only", bLegs.every((l: { coordinated_pr_id: string }) => l.coordinated_pr_id === b.prId), JSON.stringify(bLegs).slice(0, 300));
    const assessed = await s2.services.db('acr_assessments').where({ scan_id: b.scanId });
    attack("cross-org: no ACR assessment of B's scan was written by A", assessed.length === 0, JSON.stringify(assessed).slice(0, 200));
    const aUsers = await s2.services.db('users').where({ username: 'acme-intruder' });
    attack('cross-org: no user was created in B by A', aUsers.length === 0, JSON.stringify(aUsers).slice(0, 200));
    const bSchedules = ok(await callTool(s2.url, B, 'dashboard_list_schedules', {}));
    attack("cross-org: B's schedule unchanged", bSchedules.schedules.length === 1 && bSchedules.schedules[0].scheduleId === b.scheduleId && bSchedules.schedules[0].cron === '0 6 * * 1', JSON.stringify(bSchedules).slice(0, 300));
    const bHooks = ok(await callTool(s2.url, B, 'dashboard_list_webhooks', {}));
    attack("cross-org: B's webhooks unchanged", bHooks.webhooks.length === 1 && bHooks.webhooks[0].webhookId === b.webhookId, JSON.stringify(bHooks).slice(0, 300));
  });
});

describe('oids and lock ids with path traversal and bad shapes', () => {
  it('answers 4xx in the spec shape on every object endpoint, never 5xx, and writes nothing outside the store', async () => {
    const before = listFiles(s1.dataDir);
    const valid = 'a'.repeat(64);
    const bad = [
      '../../../../etc/passwd', '..%2F..%2F..%2F..%2Fetc%2Fpasswd', '%2e%2e%2f%2e%2e%2fetc%2fpasswd', '%2e%2e', '..', '.', '%2E', 'a%2fb', '..%5c..%5cwindows',
      '%252e%252e%252f', '%c0%ae%c0%ae%c0%af', `${valid.slice(0, 62)}%2f..`, `..%2f${valid.slice(0, 61)}`, `${valid}%00`, `${valid}%00.txt`, `%00${valid.slice(1)}`,
      valid.slice(1), `${valid}a`, valid.toUpperCase(), `${valid.slice(0, 32)}${'A'.repeat(32)}`, 'g'.repeat(64), 'z'.repeat(64), '%20'.repeat(64), '-'.repeat(64),
      `${'ab/'.repeat(21)}a`, `${valid.slice(0, 63)}%0a`, '%D9%A0'.repeat(64), '0x' + valid.slice(2), 'a'.repeat(4096),
    ];
    const lfs = '/acme/site.git/info/lfs';
    // A real tus token (for another object), so the tus endpoints get past authentication.
    const other = content(100);
    const batch = await fetch(`${s1.url}${lfs}/objects/batch`, { method: 'POST', headers: { authorization: wallyAuth, accept: GIT_LFS, 'content-type': GIT_LFS }, body: JSON.stringify({ operation: 'upload', transfers: ['tus'], objects: [{ oid: other.oid, size: 100 }] }) });
    const tusHeader = (await batch.json()).objects[0].actions.upload.header as Record<string, string>;
    const endpoints: [string, (oid: string) => { method: string; path: string; headers: Record<string, string>; body?: Buffer }][] = [
      ['legacy GET /objects/{oid}', (oid) => ({ method: 'GET', path: `${lfs}/objects/${oid}`, headers: { authorization: wallyAuth, accept: GIT_LFS } })],
      ['GET /content/{oid}', (oid) => ({ method: 'GET', path: `${lfs}/content/${oid}`, headers: { authorization: wallyAuth } })],
      ['PUT /content/{oid}', (oid) => ({ method: 'PUT', path: `${lfs}/content/${oid}`, headers: { authorization: wallyAuth, 'content-type': 'application/octet-stream' }, body: Buffer.from('root:x:0:0\n') })],
      ['HEAD /tus/{oid}', (oid) => ({ method: 'HEAD', path: `${lfs}/tus/${oid}`, headers: { ...tusHeader, 'tus-resumable': '1.0.0' } })],
      ['PATCH /tus/{oid}', (oid) => ({ method: 'PATCH', path: `${lfs}/tus/${oid}`, headers: { ...tusHeader, 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: Buffer.from('root:x:0:0\n') })],
      ['OPTIONS /tus/{oid}', (oid) => ({ method: 'OPTIONS', path: `${lfs}/tus/${oid}`, headers: {} })],
      ['POST /locks/{id}/unlock', (oid) => ({ method: 'POST', path: `${lfs}/locks/${oid}/unlock`, headers: { authorization: wallyAuth, accept: GIT_LFS, 'content-type': GIT_LFS }, body: Buffer.from('{"force":true}') })],
    ];
    for (const oid of bad) {
      for (const [name, make] of endpoints) {
        const r = make(oid);
        const res = await rawRequest(s1.url, r);
        attack(`oid ${JSON.stringify(oid.slice(0, 60))} on ${name}`, res.status >= 400 && res.status < 500, `answered ${res.status} ${res.body.toString().slice(0, 200)}`);
      }
      // And in request bodies: the batch API's per-object error, the legacy API's and verify's 422.
      const unescaped = decodeURIComponentSafe(oid);
      const bodyRes = await fetch(`${s1.url}${lfs}/objects/batch`, { method: 'POST', headers: { authorization: wallyAuth, accept: GIT_LFS, 'content-type': GIT_LFS }, body: JSON.stringify({ operation: 'upload', objects: [{ oid: unescaped, size: 10 }] }) });
      const bodyJson = await bodyRes.json();
      attack(`oid ${JSON.stringify(unescaped.slice(0, 60))} in a batch`, (bodyRes.status === 200 && bodyJson.objects?.[0]?.error?.code === 422 && !bodyJson.objects[0].actions) || (bodyRes.status >= 400 && bodyRes.status < 500), `answered ${bodyRes.status} ${JSON.stringify(bodyJson).slice(0, 200)}`);
      for (const path of ['/objects', '/verify']) {
        const res = await fetch(`${s1.url}${lfs}${path}`, { method: 'POST', headers: { authorization: wallyAuth, accept: GIT_LFS, 'content-type': GIT_LFS }, body: JSON.stringify({ oid: unescaped, size: 10 }) });
        await res.body?.cancel();
        attack(`oid ${JSON.stringify(unescaped.slice(0, 60))} in POST ${path}`, res.status >= 400 && res.status < 500, `answered ${res.status}`);
      }
    }
    // Nothing appeared outside the store, and the store holds only objects named by their hash.
    const after = listFiles(s1.dataDir).filter((f) => !before.includes(f));
    const outside = after.filter((f) => !f.startsWith('lfs/') && !/^[^/]*\.(sqlite|db)(-wal|-shm|-journal)?$/.test(f) && !f.startsWith('keys/'));
    attack('no file written outside the object store', outside.length === 0, outside.join(', '));
    const strays = after.filter((f) => f.startsWith('lfs/') && !f.startsWith('lfs/tmp/') && !f.startsWith('lfs/partials/') && !/\/[0-9a-f]{64}$/.test(f));
    attack('no file in the store under a name that is not an oid', strays.length === 0, strays.join(', '));
  });
});

describe('scans aimed at private addresses', () => {
  it('refuses them at once, and nothing connects to a canary on loopback', async () => {
    let canaryHits = 0;
    const canary = createServer((req, res) => {
      canaryHits++;
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>canary</title><p>private</p>');
    });
    canary.on('connection', () => canaryHits++);
    await new Promise<void>((r) => canary.listen(0, '127.0.0.1', () => r()));
    const port = (canary.address() as AddressInfo).port;
    const admin = bearer(await s1.token({ orgId: acmeId, perms: ['admin.system'] }));
    const targets = [
      `http://127.0.0.1:${port}/`, `http://localhost:${port}/`, `http://LOCALHOST:${port}/`, `http://localhost.:${port}/`, `http://[::1]:${port}/`, `http://127.1:${port}/`,
      `http://2130706433:${port}/`, `http://0x7f000001:${port}/`, `http://0177.0.0.1:${port}/`, `http://127.000.000.001:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`,
      `http://[::ffff:7f00:1]:${port}/`, `http://[0:0:0:0:0:ffff:127.0.0.1]:${port}/`, `http://0.0.0.0:${port}/`, `http://[::]:${port}/`, `http://user:pw@127.0.0.1:${port}/`,
      `http://example.com@127.0.0.1:${port}/`, 'http://10.0.0.1/', 'http://10.255.255.254/', 'http://172.16.0.1/', 'http://172.31.255.254/', 'http://192.168.0.1/',
      'http://100.64.0.1/', 'http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/latest/meta-data/', 'http://[fe80::1]/', 'http://[fc00::1]/',
      'http://224.0.0.1/', 'http://255.255.255.255/', `https://127.0.0.1:${port}/`, `file:///etc/passwd`, `ftp://127.0.0.1:${port}/`, `gopher://127.0.0.1:${port}/_x`,
      'javascript:alert(1)', 'data:text/html,<h1>x</h1>', `ws://127.0.0.1:${port}/`,
    ];
    for (const url of targets) {
      for (const [tool, args] of [
        ['dashboard_scan_site', { siteUrl: url, scanMode: 'single' }],
        ['dashboard_scan_page', { url }],
      ] as const) {
        const a = await callTool(s1.url, admin, tool, args);
        const text = a.message?.result?.content?.[0]?.text ?? '';
        attack(`${tool} ${url}`, a.status === 200 && (a.message?.result?.isError === true || Boolean(a.message?.error)), `answered ${a.status} ${text.slice(0, 200)}`);
      }
    }
    // Scans run in the background: give a wrongly queued one time to reach out, then look.
    await new Promise((r) => setTimeout(r, 500));
    attack('no connection reached the canary on loopback', canaryHits === 0, `${canaryHits} connections/requests`);
    const queued = await s1.services.db('scans').whereIn('status', ['queued', 'running', 'completed', 'completed_with_errors']);
    attack('no scan of a private address was queued', queued.length === 0, queued.map((q: { site_url: string }) => q.site_url).join(', '));
    await new Promise((r) => canary.close(r));
  });
});

describe('transfer tokens and action hrefs', () => {
  it('refuses altered, swapped, misapplied, expired and forged tokens, and no object changes', async () => {
    const lfs = `${s1.url}/acme/site.git/info/lfs`;
    const batch = async (operation: string, objects: { oid: string; size: number }[], transfers?: string[], base = lfs, auth = wallyAuth) => {
      const res = await fetch(`${base}/objects/batch`, { method: 'POST', headers: { authorization: auth, accept: GIT_LFS, 'content-type': GIT_LFS }, body: JSON.stringify({ operation, objects: objects.map(({ oid, size }) => ({ oid, size })), ...(transfers ? { transfers } : {}) }) });
      const body = await res.json();
      for (const o of body.objects ?? []) for (const act of Object.values<{ header: Record<string, string> }>(o.actions ?? {})) transferTokens.add(act.header.Authorization!.slice('Bearer '.length));
      return body.objects[0].actions as Record<string, { href: string; header: Record<string, string> }>;
    };
    const stored = content(2048);
    const up = await batch('upload', [stored], ['basic']);
    expect((await fetch(up.upload!.href, { method: 'PUT', headers: up.upload!.header, body: new Uint8Array(stored.bytes) })).status).toBe(200);
    const victim = content(2048);
    const download = (await batch('download', [stored])).download!;
    const upload = (await batch('upload', [victim], ['basic'])).upload!;
    const verify = (await batch('upload', [victim], ['basic'])).verify!;
    const tus = (await batch('upload', [victim], ['tus'])).upload!;
    const token = (a: { header: Record<string, string> }) => a.header.Authorization!.slice('Bearer '.length);
    // Format 3: <batch claims>.<oid>.<size>.<tag> (objects/transfer-tokens.ts).
    const [payload, oidSeg, sizeSeg, mac] = token(download).split('.') as [string, string, string, string];
    const object = `${oidSeg}.${sizeSeg}`;
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as unknown[];
    const withClaims = (change: (c: unknown[]) => void) => {
      const c = structuredClone(claims);
      change(c);
      return `${Buffer.from(JSON.stringify(c)).toString('base64url')}.${object}.${mac}`;
    };
    const globexRepo = await s1.services.db('repos').where({ name: 'vault' }).first();
    const expired = s1.services.objects.tokens.batchSigner({ repoId: claims[1] as string, op: 'download', subject: claims[3] as string, username: 'wally', orgId: acmeId, exp: Math.floor(Date.now() / 1000) - 5 })(stored.oid, stored.size);
    const forgedMac = createHmac('sha256', randomBytes(32)).update(object).digest('base64url');
    const dashboardJwt = await s1.token({ orgId: acmeId, perms: ['admin.system'] });
    addSecret('a dashboard JWT', dashboardJwt);

    const get = (href: string, auth: string, headers: Record<string, string> = {}) => fetch(href, { headers: { authorization: auth, ...headers } });
    const cases: [string, () => Promise<Response>][] = [
      ['download: signature altered', () => get(download.href, `Bearer ${payload}.${object}.${mac.slice(0, 5)}${mac[5] === 'A' ? 'B' : 'A'}${mac.slice(6)}`)],
      ['download: signature truncated', () => get(download.href, `Bearer ${payload}.${object}.${mac.slice(0, -2)}`)],
      ['download: signature of zeros', () => get(download.href, `Bearer ${payload}.${object}.${Buffer.alloc(32).toString('base64url')}`)],
      ['download: signed with another key', () => get(download.href, `Bearer ${payload}.${object}.${forgedMac}`)],
      ['download: expiry pushed a year ahead', () => get(download.href, `Bearer ${withClaims((c) => (c[6] = Number(c[6]) + 365 * 86400))}`)],
      ['download: operation changed to upload', () => get(download.href, `Bearer ${withClaims((c) => (c[2] = 'upload'))}`)],
      ['download: oid changed', () => get(`${lfs}/content/${victim.oid}`, `Bearer ${payload}.${victim.oid}.${sizeSeg}.${mac}`)],
      ['download: size changed', () => get(download.href, `Bearer ${payload}.${oidSeg}.1.${mac}`)],
      ["download: repository changed to globex's", () => get(`${s1.url}/globex/vault.git/info/lfs/content/${stored.oid}`, `Bearer ${withClaims((c) => (c[1] = globexRepo.id))}`)],
      ['download: version changed (to format 2)', () => get(download.href, `Bearer ${withClaims((c) => (c[0] = 2))}`)],
      ['download: the claims of a batch with a tag as a format 2 token', () => get(download.href, `Bearer ${payload}.${mac}`)],
      ['download: payload only', () => get(download.href, `Bearer ${payload}`)],
      ['download: three segments', () => get(download.href, `Bearer ${payload}.${mac}.${mac}`)],
      ['download: five segments', () => get(download.href, `Bearer ${payload}.${object}.${mac}.${mac}`)],
      ['download: expired token, genuinely signed', () => get(download.href, `Bearer ${expired}`)],
      ['download token on another oid (swapped in the href)', () => get(`${lfs}/content/${victim.oid}`, download.header.Authorization!)],
      ["download token on globex's repository", () => get(`${s1.url}/globex/vault.git/info/lfs/content/${stored.oid}`, download.header.Authorization!)],
      ['download token for an upload (PUT)', () => fetch(download.href, { method: 'PUT', headers: { ...download.header, 'content-type': 'application/octet-stream' }, body: new Uint8Array(stored.bytes) })],
      ['upload token for a download (GET)', () => get(`${lfs}/content/${victim.oid}`, upload.header.Authorization!)],
      ['upload token on another oid (swapped in the href)', () => fetch(upload.href.replace(victim.oid, stored.oid), { method: 'PUT', headers: upload.header, body: new Uint8Array(victim.bytes) })],
      ['verify token for a download', () => get(`${lfs}/content/${stored.oid}`, verify.header.Authorization!)],
      ['tus token on another oid', () => fetch(tus.href.replace(victim.oid, stored.oid), { method: 'HEAD', headers: { ...tus.header, 'tus-resumable': '1.0.0' } })],
      ['download token on a tus upload', () => fetch(tus.href, { method: 'PATCH', headers: { ...download.header, 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: new Uint8Array(victim.bytes) })],
      ['a dashboard JWT as a transfer token', () => get(download.href, `Bearer ${dashboardJwt}`)],
      ['a dashboard JWT on a tus upload', () => fetch(tus.href, { method: 'HEAD', headers: { authorization: `Bearer ${dashboardJwt}`, 'tus-resumable': '1.0.0' } })],
      ['a transfer token as the MCP bearer', () => fetch(`${s1.url}/api/v1/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, ...download.header }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) })],
    ];
    for (const [name, run] of cases) {
      const res = await run();
      const body = Buffer.from(await res.arrayBuffer());
      const shown = (res.headers.get('content-type') ?? '').includes('json') ? body.toString().slice(0, 200) : `(${body.length} bytes of ${res.headers.get('content-type')})`;
      attack(`transfer token ${name}`, [401, 403, 404].includes(res.status), `answered ${res.status} ${shown}`);
    }
    // The objects are as they were: the victim was never stored, the stored one is intact.
    const check = await batch('download', [victim]);
    attack('no upload went through with a misapplied token', check === undefined, JSON.stringify(check));
    const dl = (await batch('download', [stored])).download!;
    const bytes = Buffer.from(await (await fetch(dl.href, { headers: dl.header })).arrayBuffer());
    attack('the stored object is intact', sha256(bytes) === stored.oid);
    // The genuine actions still work: the refusals were about the tokens, not the server.
    expect((await fetch(upload.href, { method: 'PUT', headers: upload.header, body: new Uint8Array(victim.bytes) })).status).toBe(200);
  });
});

describe('transfer tokens that expire while held', () => {
  it(FULL ? 'refuses a genuine action of a server with LFS_ACTION_TTL_SECONDS=60 once it has expired' : 'refuses a token that expires two seconds after it was signed, once it has', async () => {
    const ttl = sized(2, 60);
    const srv = FULL ? await startTestServer({ LFS_ACTION_TTL_SECONDS: String(ttl) }) : s1;
    try {
      if (FULL) await lfsFixture(srv.services.db, { org: 'acme', repo: 'site', username: 'wally', password: PASSWORDS.wally, access: 'write' });
      const lfs = `${srv.url}/acme/site.git/info/lfs`;
      const c = content(512);
      const res = await fetch(`${lfs}/objects/batch`, { method: 'POST', headers: { authorization: wallyAuth, accept: GIT_LFS, 'content-type': GIT_LFS }, body: JSON.stringify({ operation: 'upload', transfers: ['basic'], objects: [{ oid: c.oid, size: c.size }] }) });
      let upload = (await res.json()).objects[0].actions.upload as { href: string; header: Record<string, string>; expires_in: number };
      if (FULL) expect(upload.expires_in).toBe(ttl);
      else {
        // The same action, signed by the server's own key to expire in two seconds.
        const [payload, oid, size] = upload.header.Authorization!.slice('Bearer '.length).split('.') as [string, string, string];
        const [, repoId, op, subject, username, orgId, , credentialVersion] = JSON.parse(Buffer.from(payload, 'base64url').toString()) as [number, string, 'upload', string, string, string, number, number];
        const token = srv.services.objects.tokens.batchSigner({ repoId, op, subject, username, orgId, credentialVersion, exp: Math.floor(Date.now() / 1000) + ttl })(oid, Number(size));
        upload = { ...upload, header: { Authorization: `Bearer ${token}` } };
      }
      transferTokens.add(upload.header.Authorization!.slice('Bearer '.length));
      // Wait until the token's expiry has passed (whole seconds, plus one).
      await new Promise((r) => setTimeout(r, (ttl + 2) * 1000));
      const late = await fetch(upload.href, { method: 'PUT', headers: upload.header, body: new Uint8Array(c.bytes) });
      const text = await late.text();
      attack(`an upload action used after its expiry (${ttl} s)`, late.status === 401 && /expired/.test(text), `answered ${late.status} ${text.slice(0, 200)}`);
      const check = await fetch(`${lfs}/objects/${c.oid}`, { headers: { authorization: wallyAuth, accept: GIT_LFS } });
      await check.body?.cancel();
      attack('nothing was stored through the expired action', check.status === 404, `answered ${check.status}`);
      if (FULL) srv.expectConformant();
    } finally {
      if (FULL) await srv.stop();
    }
  });
});

describe('secrets', () => {
  it('appear in no response body and no log line; passwords and client secrets not in the audit trail', async () => {
    for (const srv of [s1, s2]) {
      for (const dir of ['keys']) {
        const d = join(srv.dataDir, dir);
        if (!existsSync(d)) continue;
        for (const f of readdirSync(d)) {
          const text = readFileSync(join(d, f), 'utf8').trim();
          addSecret(`generated key ${f}`, text);
          addSecret(`generated key ${f} (hex)`, Buffer.from(text, 'base64').toString('hex'));
          addSecret(`generated key ${f} (base64url)`, Buffer.from(text, 'base64').toString('base64url'));
        }
      }
    }
    const places: [string, string[]][] = [
      ['a response body of server 1', s1.bodies],
      ['a log line of server 1', s1.logLines],
      ['a response body of server 2', s2.bodies],
      ['a log line of server 2', s2.logLines],
    ];
    for (const [where, texts] of places) {
      for (const [secret, what] of secrets) {
        const found = texts.find((t) => t.includes(secret));
        attack(`${what} in ${where}`, !found, found?.slice(0, 300));
      }
    }
    if (webhookSecretOfB) {
      const shown = s2.bodies.filter((t) => t.includes(webhookSecretOfB));
      attack("B's webhook secret in a response body other than its creation's", shown.length === 1, `${shown.length} bodies`);
      attack("B's webhook secret in a log line of server 2", !s2.logLines.some((l) => l.includes(webhookSecretOfB)), '');
      attack("B's webhook secret in the audit trail of server 2", !JSON.stringify(await s2.services.db('audit_log').select()).includes(webhookSecretOfB), '');
    }
    for (const [where, texts] of [['a log line of server 1', s1.logLines], ['a log line of server 2', s2.logLines]] as const) {
      const leaked = [...transferTokens].filter((t) => texts.some((l) => l.includes(t)));
      attack(`transfer tokens in ${where}`, leaked.length === 0, `${leaked.length} tokens`);
    }
    for (const [name, srv] of [['server 1', s1], ['server 2', s2]] as const) {
      const rows = JSON.stringify(await srv.services.db('audit_log').select());
      const inAudit = [...Object.values(PASSWORDS), ...Object.values(CLIENT_SECRETS)].filter((p) => rows.includes(p));
      attack(`passwords or client secrets in the audit trail of ${name}`, inAudit.length === 0, `${inAudit.length} found`);
    }

    report(`security: ${attacks} attacks tried, ${refused} refused, ${failures.length} not refused; ${secrets.size} secrets and ${transferTokens.size} transfer tokens searched in ${s1.bodies.length + s2.bodies.length} response bodies and ${s1.logLines.length + s2.logLines.length} log lines`);
    for (const f of failures.slice(0, 40)) report(`security failure: ${f.slice(0, 500)}`);
    const violations = [...s1.violations, ...s2.violations];
    for (const v of violations.slice(0, 20)) report(`security violation: ${v.method} ${v.path.slice(0, 120)} -> ${v.status} (${v.operationId}): ${v.problem.slice(0, 300)}`);
    const errors = [...s1.logLines, ...s2.logLines].filter((l) => /"level":(50|60)/.test(l) || (/"msg":"request"/.test(l) && /"status":5\d\d/.test(l)));
    for (const l of errors.slice(0, 10)) report(`security server log: ${l.slice(0, 500)}`);
    expect(failures, 'attacks that were not refused').toEqual([]);
    expect(errors, 'errors or 5xx in the server logs').toEqual([]);
    expect(violations.map((v) => `${v.method} ${v.path.slice(0, 120)} -> ${v.status}: ${v.problem.slice(0, 200)}`), 'responses that break the specs').toEqual([]);
  });
});

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Every file under `root`, as paths relative to it. */
function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const r = rel ? `${rel}/${name}` : name;
      if (statSync(path).isDirectory()) walk(path, r);
      else out.push(r);
    }
  };
  walk(root, '');
  return out;
}
