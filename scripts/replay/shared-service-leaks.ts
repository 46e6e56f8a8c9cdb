/**
 * The narrower leaks of a server shared by several orgs, and its missing browser hardening: a
 * service call to loopback written as an IPv4-translated IPv6 literal, a service URL carrying a
 * password, another org's coordinated PR told apart from a missing one, a username taken in
 * another org, an org admin reading a system admin's tokens, the landing page without its security
 * headers, and two session cookies in one request.
 */
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { call, mcp, reason, report, withPactum } from './harness.js';

type Sqlite = new (file: string) => { prepare: (sql: string) => { run: (...args: unknown[]) => unknown }; close: () => void };

/** A coordinated PR of `orgId`, written straight into the build's SQLite (making one through scans takes a site and a crawl). */
function plantCoordinatedPr(dataDir: string, orgId: string, prId: string) {
  const Database = createRequire(import.meta.url)('better-sqlite3') as Sqlite;
  const db = new Database(join(dataDir, 'pactum.sqlite'));
  const now = new Date().toISOString();
  try {
    db.prepare('insert into coordinated_prs (id, org_id, team_id, created_by, status, summary, wcag_criterion, created_at) values (?, ?, null, ?, ?, ?, ?, ?)')
      .run(prId, orgId, 'replay', 'draft', 'Globex remediation plan', '1.1.1', now);
  } finally {
    db.close();
  }
}

export default async function sharedServiceLeaks(dist: string) {
  await withPactum(dist, {}, async ({ run, start, dataDir }) => {
    run(['org', 'create', 'acme']);
    const globexId = /\((org_[a-z0-9]+)\)/.exec(run(['org', 'create', 'globex']))![1]!;
    run(['user', 'create', 'ada', '--org', 'acme', '--admin', '--password-stdin'], 'ada-password-123\n');
    run(['user', 'create', 'boss', '--org', 'acme', '--role', 'org_admin', '--password-stdin'], 'boss-password-123\n');
    run(['user', 'create', 'grace', '--org', 'globex', '--role', 'member', '--password-stdin'], 'grace-password-123\n');
    run(['user', 'token', 'ada', '--name', 'ada-laptop']);
    const bossToken = run(['token', '--user', 'boss']);
    const prId = 'cpr_01replayglobexplan0000000';
    plantCoordinatedPr(dataDir, globexId, prId);

    // Where a connection to this machine's loopback would land, on IPv4 and IPv6 alike.
    let canaryHits = 0;
    const canary = createServer((_req, res) => {
      canaryHits++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"t"}');
    });
    await new Promise<void>((r) => canary.listen(0, '::', r));
    const port = (canary.address() as { port: number }).port;

    const { url } = await start();
    try {
      const boss = await mcp(url, bossToken);

      // 1. Loopback as an IPv4-translated address (::ffff:0:a.b.c.d), which was classed public.
      const translated = `http://[::ffff:0:127.0.0.1]:${port}`;
      const made = await call(boss, 'dashboard_create_service_connection', { serviceId: 'compliance', url: translated, clientId: 'replay', clientSecret: 'replay-client-secret' });
      const tested = made.ok ? await call(boss, 'dashboard_test_service_connection', { serviceId: 'compliance' }) : made;
      const outcome = JSON.parse(tested.text) as { error?: string; message?: string };
      const refusedFirst = /loopback/.test(outcome.error ?? outcome.message ?? '');
      report('service call to [::ffff:0:127.0.0.1] (IPv4-translated loopback)', refusedFirst ? `refused before connecting: ${(outcome.error ?? '').slice(0, 60)}` : `connection attempted (hole): ${(outcome.error ?? outcome.message ?? '').slice(0, 50)}, canary ${canaryHits}`);
      const scan = await call(boss, 'dashboard_scan_site', { siteUrl: `${translated}/`, scanMode: 'single' });
      report('scan of [::ffff:0:127.0.0.1]', scan.ok ? 'QUEUED (hole: the scanner will connect)' : `refused: ${reason(scan.text)}`);

      // 2. A password in a service URL: stored in clear, shown to admins, audited.
      const withPassword = 'https://svc-user:url-password-1@svc.example';
      const stored = await call(boss, 'dashboard_create_service_connection', { serviceId: 'branding', url: withPassword, clientId: 'replay', clientSecret: 'replay-client-secret' });
      const echoed = stored.ok ? (await call(boss, 'dashboard_get_service_connection', { serviceId: 'branding' })).text.includes('url-password-1') : false;
      report('service URL with user:password@', stored.ok ? (echoed ? 'STORED and echoed (hole)' : 'stored, not echoed') : `refused: ${reason(stored.text)}`);

      // 3. Another org's coordinated PR against a missing one.
      const foreign = JSON.parse((await call(boss, 'dashboard_coordinated_pr_status', { id: prId })).text) as { error?: string; message?: string };
      const missing = JSON.parse((await call(boss, 'dashboard_coordinated_pr_status', { id: 'cpr_01replaymissing00000000000' })).text) as { error?: string; message?: string };
      const same = foreign.error === missing.error && foreign.message?.replace(prId, 'ID') === missing.message?.replace('cpr_01replaymissing00000000000', 'ID');
      report("another org's coordinated PR vs a missing one", same ? `the same answer: ${missing.error}` : `${foreign.error} vs ${missing.error} (hole: the PR exists)`);

      // 4. A username taken in another org, beside one taken in the own org.
      const elsewhere = await call(boss, 'dashboard_create_user', { username: 'grace', password: 'replay-password-1', role: 'member' });
      const here = await call(boss, 'dashboard_create_user', { username: 'ada', password: 'replay-password-1', role: 'member' });
      const namesOrg = /globex|org_/i.test(elsewhere.text);
      const alike = reason(elsewhere.text).replace('grace', 'X') === reason(here.text).replace('ada', 'X');
      report('create_user with a name taken in another org', elsewhere.ok ? 'CREATED (hole)' : `${namesOrg ? 'names the org (hole)' : alike ? 'as for a name taken here' : 'differs from a name taken here (hole)'}: ${reason(elsewhere.text)}`);

      // 5. An org admin reading a system admin's tokens.
      const users = JSON.parse((await call(boss, 'dashboard_list_users', {})).text) as { users: { id: string; username: string }[] };
      const adaId = users.users.find((u) => u.username === 'ada')!.id;
      const tokens = await call(boss, 'dashboard_list_user_tokens', { userId: adaId });
      report("org admin lists the system admin's tokens", tokens.ok ? `READ (hole): ${tokens.text.includes('ada-laptop') ? 'ada-laptop listed' : tokens.text.slice(0, 40)}` : `refused: ${reason(tokens.text)}`);
      await boss.close();

      // 6. The landing page's security headers.
      const home = await fetch(`${url}/`);
      await home.body?.cancel();
      const absent = ['content-security-policy', 'x-frame-options', 'x-content-type-options', 'referrer-policy'].filter((h) => !home.headers.get(h));
      const framing = /frame-ancestors 'none'/.test(home.headers.get('content-security-policy') ?? '');
      report('security headers on /', absent.length ? `missing ${absent.join(', ')} (hole)` : `all present${framing ? ", frame-ancestors 'none'" : ' (hole: framing allowed)'}`);

      // 7. Two session cookies, one valid, in one request.
      const login = await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ username: 'ada', password: 'ada-password-123' }) });
      await login.body?.cancel();
      const set = login.headers.getSetCookie().find((c) => /^(__Host-)?session=[^;]/.test(c)) ?? '';
      const [name, token] = [/^([^=]+)=/.exec(set)?.[1] ?? 'session', /=([^;]*)/.exec(set)?.[1] ?? ''];
      const other = name === 'session' ? '__Host-session' : 'session';
      const answers: number[] = [];
      for (const cookie of [`${name}=${token}; ${name}=planted-by-a-sibling-site`, `${other}=planted-by-a-sibling-site; ${name}=${token}`]) {
        const res = await fetch(`${url}/api/v1/mcp`, { method: 'POST', headers: { cookie, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
        await res.body?.cancel();
        answers.push(res.status);
      }
      report('two session cookies in one request (one valid)', answers.some((s) => s === 200) ? `ACCEPTED ${answers.join('/')} (hole)` : `refused ${answers.join('/')}`);
    } finally {
      canary.close();
    }
  });
}
