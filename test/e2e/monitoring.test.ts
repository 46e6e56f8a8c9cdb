/**
 * Monitoring as an org uses it, through the MCP SDK Client, with the jsdom engine: a site is
 * scanned on a schedule; after each run its findings are compared with the previous run's; a
 * release that brings a new finding makes a findings.new delivery, signed with the webhook's
 * secret, naming the finding; a receiver that answers 500 sees the same delivery again (a retry),
 * and a receiver that keeps failing gets its webhook disabled, which the tools, the audit trail
 * and the log say. A cron expression more frequent than the minimum interval and a webhook to a
 * private address are refused. On PostgreSQL, two instances sharing the database start each run
 * exactly once. Everything waits on events (deliveries, runs), never on durations.
 */
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PAIR_SECRETS, startTestServer, type TestServer } from '../helpers/server.js';
import { databaseUrlFor, ensureDatabase, TEST_DB_PREFIX } from '../helpers/backends.js';
import { bearer, failure, mcpClient, ok } from '../helpers/mcp.js';
import { page } from '../helpers/changing-site.js';
import { insertOrg } from '../../src/db/users.js';

/** A site whose home page the test sets; in `churn` mode every request gets a new image without alt text (a new finding each scan). */
interface Site { url: string; html: string; churn: boolean; close(): Promise<void> }
async function startSite(html: string): Promise<Site> {
  let n = 0;
  const server = createServer((req, res) => {
    if (req.url !== '/') return void res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><title>Not found</title>');
    const body = site.churn ? page('Home', `<p>Release ${++n}</p><img src="/release-${n}.png">`) : site.html;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const site: Site = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, html, churn: false, close: () => new Promise((r) => server.close(() => r())) };
  return site;
}

/** A webhook receiver: answers each request with the next status of `answers` (the last one repeats). */
interface Received { headers: Record<string, string | string[] | undefined>; body: string; answered: number }
interface Receiver { url: string; answers: number[]; received: Received[]; close(): Promise<void> }
async function startReceiver(answers: number[]): Promise<Receiver> {
  const rx: Receiver = { url: '', answers, received: [], close: () => new Promise((r) => server.close(() => r())) };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const answered = rx.answers.length > 1 ? rx.answers.shift()! : rx.answers[0]!;
      rx.received.push({ headers: req.headers, body, answered });
      res.writeHead(answered, { 'content-type': 'text/plain' }).end(answered < 300 ? 'thanks' : 'receiver failure');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  rx.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/pactum`;
  return rx;
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, seconds = 120): Promise<T> {
  for (let i = 0; i < seconds * 10; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** How the docs tell a receiver to verify Pactum-Signature. */
function verified(secret: string, header: string, body: string): boolean {
  const fields = Object.fromEntries(header.split(',').map((kv) => kv.split('=') as [string, string]));
  const expected = createHmac('sha256', secret).update(`${fields.t}.${body}`).digest('hex');
  return Math.abs(Date.now() / 1000 - Number(fields.t)) < 300 && fields.v1 === expected;
}

const FAST = {
  SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'jsdom', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
  MONITOR_MIN_INTERVAL_SECONDS: '2', MONITOR_TICK_SECONDS: '1', WEBHOOK_RETRY_BASE_MS: '100', WEBHOOK_MAX_ATTEMPTS: '3', WEBHOOK_DISABLE_AFTER: '2', WEBHOOK_TIMEOUT_MS: '3000',
};
const EVERY_2S = '*/2 * * * * *';

interface Run { runId: string; tickAt: string; scanId: string | null; previousScanId: string | null; status: string; error: string | null; counts: { new: number; fixed: number; still_present: number } | null }

describe('scheduled scans and findings.new webhooks', () => {
  let s: TestServer;
  let site: Site;
  let rx: Receiver;
  let admin: Client;
  let orgId: string;

  beforeAll(async () => {
    site = await startSite(page('Home', '<img src="/logo.png">\n<p>Welcome</p>'));
    rx = await startReceiver([500, 200]);
    s = await startTestServer(FAST);
    orgId = (await insertOrg(s.services.db, { name: 'Monitoring team', slug: 'monitoring-team' })).id;
    admin = await mcpClient(s.url, bearer(await s.token({ sub: 'usr_mon_admin', orgId, role: 'org_admin', perms: [] })));
  });
  afterAll(async () => {
    await admin?.close();
    await s?.stop();
    await site?.close();
    await rx?.close();
  });
  afterEach(() => s.expectConformant());

  const call = (name: string, args: Record<string, unknown>) => admin.callTool({ name, arguments: args });
  const runsOf = async (scheduleId: string): Promise<Run[]> =>
    (ok(await call('dashboard_list_schedules', {})).schedules as { scheduleId: string; recentRuns: Run[] }[]).find((x) => x.scheduleId === scheduleId)!.recentRuns;

  it('refuses a cron expression more frequent than MONITOR_MIN_INTERVAL_SECONDS, and one that is not cron', async () => {
    const tooOften = failure(await call('dashboard_set_schedule', { siteUrl: site.url, cron: '* * * * * *' }));
    expect(tooOften.error).toBe('invalid_arguments');
    expect(tooOften.message).toMatch(/1 s apart.*at least 2 s apart \(MONITOR_MIN_INTERVAL_SECONDS\)/);
    expect(failure(await call('dashboard_set_schedule', { siteUrl: site.url, cron: 'every monday' })).error).toBe('invalid_arguments');
    expect(ok(await call('dashboard_list_schedules', {})).schedules).toEqual([]);
  });

  it('compares each run with the previous one and posts the new findings, signed, retrying after a 500', { timeout: 180_000 }, async () => {
    const created = ok(await call('dashboard_create_webhook', { url: rx.url }));
    const secret = created.secret as string;
    expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    const hookId = created.webhook.webhookId as string;
    // The secret is never shown again.
    const listed = await call('dashboard_list_webhooks', {});
    expect(JSON.stringify(listed)).not.toContain(secret);
    expect(ok(listed).webhooks).toEqual([created.webhook]);

    const schedule = ok(await call('dashboard_set_schedule', { siteUrl: site.url, cron: EVERY_2S, scanMode: 'single' }));
    expect(schedule).toMatchObject({ siteUrl: site.url, cron: EVERY_2S, enabled: true, recentRuns: [] });
    expect(Date.parse(schedule.nextRunAt)).toBeGreaterThan(Date.parse(schedule.createdAt) - 1000);
    // The first run has nothing to compare with.
    await until('a first run', async () => ((await runsOf(schedule.scheduleId)).some((r) => r.status === 'first') ? true : undefined));
    expect(rx.received).toEqual([]);

    // The release: a button without a name arrives; the image without alt text stays.
    site.html = page('Home', '<img src="/logo.png">\n<p>Welcome</p>\n<button></button>');
    await until('a delivery answered 200', () => (rx.received.some((r) => r.answered === 200) ? true : undefined));
    // Stop the schedule: no further runs while the rest is checked.
    expect(ok(await call('dashboard_set_schedule', { siteUrl: site.url, cron: EVERY_2S, scanMode: 'single', enabled: false })).nextRunAt).toBeNull();

    // The first attempt was answered 500, and the same delivery came again.
    const [first, second] = rx.received;
    expect(first!.answered).toBe(500);
    expect(second!.answered).toBe(200);
    expect(first!.headers['pactum-delivery']).toBe(second!.headers['pactum-delivery']);
    expect(first!.body).toBe(second!.body);
    for (const r of [first!, second!]) {
      expect(r.headers['pactum-event']).toBe('findings.new');
      expect(verified(secret, String(r.headers['pactum-signature']), r.body), 'Pactum-Signature verifies with the secret').toBe(true);
      expect(verified('whsec_another', String(r.headers['pactum-signature']), r.body)).toBe(false);
    }
    const body = JSON.parse(second!.body);
    expect(body).toMatchObject({ id: first!.headers['pactum-delivery'], event: 'findings.new', orgId, schedule: { scheduleId: schedule.scheduleId, siteUrl: site.url, cron: EVERY_2S } });
    expect(body.counts.new).toBe(1);
    expect(body.counts.still_present).toBeGreaterThanOrEqual(1);
    expect(body.findings).toEqual([expect.objectContaining({ rule: 'button-name', page: site.url, level: 'error', fingerprint: expect.stringMatching(/^[0-9a-f]{32}$/) })]);
    expect(body.findingsTruncated).toBe(false);

    // The run that found it: compared with the run before, its counts stored.
    const runs = await runsOf(schedule.scheduleId);
    const found = runs.find((r) => r.scanId === body.scanId)!;
    expect(found).toMatchObject({ status: 'compared', previousScanId: body.previousScanId, counts: { new: 1, fixed: 0, still_present: body.counts.still_present } });
    // Each run compares with the one before it.
    const compared = runs.filter((r) => r.status === 'compared');
    for (const r of compared) expect(runs.some((p) => p.scanId === r.previousScanId && p.tickAt < r.tickAt)).toBe(true);
    // The run's scan went through the org's queue like any scan: it is the org's, of the site.
    const scan = ok(await call('dashboard_get_scan_progress', { scanId: body.scanId }));
    expect(scan.finished).toBe(true);

    // The delivery log: the 500, then the 200, each with its duration; no secret.
    const log = await call('dashboard_list_webhook_deliveries', { webhookId: hookId });
    expect(JSON.stringify(log)).not.toContain(secret);
    const delivery = ok(log).deliveries.find((d: { deliveryId: string }) => d.deliveryId === body.id);
    expect(delivery).toMatchObject({ event: 'findings.new', scheduleId: schedule.scheduleId, scanId: body.scanId, status: 'delivered', nextAttemptAt: null });
    expect(delivery.attempts).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'failed', httpStatus: 500, errorClass: 'http_status', durationMs: expect.any(Number) }),
      expect.objectContaining({ attempt: 2, outcome: 'delivered', httpStatus: 200, errorClass: null }),
    ]);
    expect(s.logLines.some((l) => l.includes(secret))).toBe(false);
    // Every change is an audit row.
    const audited = (await s.services.db('audit_log').where({ org_id: orgId }).select('tool')).map((r: { tool: string }) => r.tool);
    expect(audited).toEqual(expect.arrayContaining(['dashboard_create_webhook', 'dashboard_set_schedule']));
    expect(JSON.stringify(await s.services.db('audit_log').select())).not.toContain(secret);
  });

  it('disables a webhook whose deliveries keep failing, and says so', { timeout: 180_000 }, async () => {
    const hookId = ok(await call('dashboard_list_webhooks', {})).webhooks[0].webhookId as string;
    rx.answers = [503];
    const before = rx.received.length;
    // Every scan now sees a new image without alt text: each run posts a delivery, which fails.
    site.churn = true;
    ok(await call('dashboard_set_schedule', { siteUrl: site.url, cron: EVERY_2S, scanMode: 'single', enabled: true }));
    const hook = await until('the webhook disabled', async () => {
      const h = ok(await call('dashboard_list_webhooks', {})).webhooks[0];
      return h.enabled ? undefined : h;
    });
    ok(await call('dashboard_set_schedule', { siteUrl: site.url, cron: EVERY_2S, scanMode: 'single', enabled: false }));
    expect(hook).toMatchObject({ webhookId: hookId, enabled: false, consecutiveFailures: 2, disabledAt: expect.any(String) });
    expect(hook.disabledReason).toMatch(/2 deliveries in a row failed every attempt \(WEBHOOK_DISABLE_AFTER=2\)/);
    // Two deliveries, three attempts each, every one answered 503.
    const deliveries = ok(await call('dashboard_list_webhook_deliveries', { webhookId: hookId })).deliveries as { status: string; attempts: { httpStatus: number; errorClass: string }[] }[];
    const failedAll = deliveries.filter((d) => d.status === 'failed' && d.attempts.length === 3);
    expect(failedAll.length).toBeGreaterThanOrEqual(2);
    for (const d of failedAll) expect(d.attempts.every((a) => a.httpStatus === 503 && a.errorClass === 'http_status')).toBe(true);
    expect(rx.received.slice(before).every((r) => r.answered === 503)).toBe(true);
    // Said in the audit trail and the log.
    const rows = await s.services.db('audit_log').where({ org_id: orgId, tool: 'monitoring.webhook_disabled' });
    expect(rows).toHaveLength(1);
    expect(rows[0].arguments).toContain(hookId);
    expect(s.logLines.some((l) => l.includes('"webhook disabled"') && l.includes(hookId))).toBe(true);
    // Nothing more is posted to it.
    const count = rx.received.length;
    await s.services.monitor.tick();
    expect(rx.received.length).toBe(count);
  });

  it('refuses another org\'s schedules and webhooks as not found', async () => {
    const other = (await insertOrg(s.services.db, { name: 'Other team', slug: 'other-team' })).id;
    const stranger = await mcpClient(s.url, bearer(await s.token({ sub: 'usr_other_admin', orgId: other, role: 'org_admin', perms: [] })));
    const scheduleId = (await runsOfAll())[0]!;
    const hookId = ok(await call('dashboard_list_webhooks', {})).webhooks[0].webhookId as string;
    for (const [name, args] of [
      ['dashboard_delete_schedule', { scheduleId }], ['dashboard_delete_webhook', { webhookId: hookId }], ['dashboard_list_webhook_deliveries', { webhookId: hookId }],
    ] as const) {
      expect(failure(await stranger.callTool({ name, arguments: args })).error, name).toBe('not_found');
    }
    expect(ok(await stranger.callTool({ name: 'dashboard_list_schedules', arguments: {} })).schedules).toEqual([]);
    expect(ok(await stranger.callTool({ name: 'dashboard_list_webhooks', arguments: {} })).webhooks).toEqual([]);
    // A viewer may list schedules but not change them, nor see webhooks.
    const viewer = await mcpClient(s.url, bearer(await s.token({ sub: 'usr_mon_viewer', orgId, role: 'viewer', perms: [] })));
    expect(ok(await viewer.callTool({ name: 'dashboard_list_schedules', arguments: {} })).schedules).toHaveLength(1);
    expect(failure(await viewer.callTool({ name: 'dashboard_delete_schedule', arguments: { scheduleId } })).error).toBe('forbidden');
    expect(failure(await viewer.callTool({ name: 'dashboard_list_webhooks', arguments: {} })).error).toBe('forbidden');
    await stranger.close();
    await viewer.close();
    // The owner deletes both.
    expect(ok(await call('dashboard_delete_schedule', { scheduleId }))).toEqual({ scheduleId, deleted: true });
    expect(ok(await call('dashboard_delete_webhook', { webhookId: hookId }))).toEqual({ webhookId: hookId, deleted: true });
    expect(failure(await call('dashboard_list_webhook_deliveries', { webhookId: hookId })).error).toBe('not_found');
  });

  async function runsOfAll(): Promise<string[]> {
    return (ok(await call('dashboard_list_schedules', {})).schedules as { scheduleId: string }[]).map((x) => x.scheduleId);
  }
});

describe('webhooks to private addresses', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ SCAN_ENGINE: 'jsdom' });
  });
  afterAll(async () => s?.stop());
  afterEach(() => s.expectConformant());

  it('are refused when private networks are not allowed, naming the setting', async () => {
    const client = await mcpClient(s.url, bearer(await s.token()));
    for (const url of ['http://127.0.0.1:9/hook', 'http://localhost:9/hook', 'http://10.1.2.3/hook', 'http://[::1]:9/hook', 'http://169.254.169.254/latest/meta-data']) {
      const refused = failure(await client.callTool({ name: 'dashboard_create_webhook', arguments: { url } }));
      expect(refused.error, url).toBe('invalid_arguments');
      expect(refused.message, url).toMatch(/OUTBOUND_ALLOW_PRIVATE_NETWORKS/);
    }
    expect(failure(await client.callTool({ name: 'dashboard_create_webhook', arguments: { url: 'https://user:pw@hooks.example.com/x' } })).error).toBe('invalid_arguments');
    expect(ok(await client.callTool({ name: 'dashboard_list_webhooks', arguments: {} })).webhooks).toEqual([]);
    await client.close();
  });
});

describe('two PostgreSQL instances', () => {
  let one: TestServer;
  let two: TestServer;
  let site: Site;
  beforeAll(async () => {
    // Always on PostgreSQL (its own database), whatever backend the other tests use.
    const name = `${TEST_DB_PREFIX}monitor_pair`;
    await ensureDatabase(name);
    const env = { ...FAST, ...PAIR_SECRETS, DATABASE_URL: databaseUrlFor(name), SCAN_QUEUE_POLL_SECONDS: '1', SCAN_QUEUE_MAINTENANCE_SECONDS: '1', MONITOR_MIN_INTERVAL_SECONDS: '1' };
    site = await startSite(page('Home', '<img src="/logo.png">'));
    one = await startTestServer(env);
    two = await startTestServer(env);
  });
  afterAll(async () => {
    await one?.stop();
    await two?.stop();
    await site?.close();
  });

  it('start each run exactly once', { timeout: 180_000 }, async () => {
    const db = one.services.db;
    const orgId = (await insertOrg(db, { name: 'Pair team', slug: 'pair-team' })).id;
    const client = await mcpClient(one.url, bearer(await one.token({ sub: 'usr_pair_admin', orgId, role: 'org_admin', perms: [] })));
    const schedule = ok(await client.callTool({ name: 'dashboard_set_schedule', arguments: { siteUrl: site.url, cron: '* * * * * *', scanMode: 'single' } }));
    // Both instances' loops tick every second; meanwhile both are also made to tick at the same moment, with the run due.
    for (let round = 0; round < 4; round++) {
      await db('monitor_schedules').where({ id: schedule.scheduleId }).update({ next_run_at: new Date(Date.now() - 1000 * (10 + round)).toISOString() });
      await Promise.all([one.services.monitor.tick(), two.services.monitor.tick(), one.services.monitor.tick(), two.services.monitor.tick()]);
    }
    await until('ten runs', async () => ((await db('monitor_runs').where({ schedule_id: schedule.scheduleId })).length >= 10 ? true : undefined));
    ok(await client.callTool({ name: 'dashboard_set_schedule', arguments: { siteUrl: site.url, cron: '* * * * * *', scanMode: 'single', enabled: false } }));
    // Let any tick under way finish before counting.
    await Promise.all([one.services.monitor.tick(), two.services.monitor.tick()]);
    const runs = await db('monitor_runs').where({ schedule_id: schedule.scheduleId });
    const scans = await db('scans').where({ org_id: orgId });
    // One run per tick, one scan per run, no scan without its run.
    expect(new Set(runs.map((r: { tick_at: string }) => r.tick_at)).size).toBe(runs.length);
    const scanIds = runs.map((r: { scan_id: string | null }) => r.scan_id).filter(Boolean);
    expect(new Set(scanIds).size).toBe(scanIds.length);
    expect(scans.map((x: { id: string }) => x.id).sort()).toEqual([...scanIds].sort());
    // The instances' logs agree: each run started once, by one of them.
    const started = [...one.logLines, ...two.logLines].filter((l) => l.includes('"scheduled run started"') && l.includes(schedule.scheduleId));
    expect(started).toHaveLength(scanIds.length);
    await client.close();
  });
});

describe('a scheduled run when the org\'s queue is full', () => {
  let s: TestServer;
  let server: Server;
  let url = '';
  const held: (() => void)[] = [];
  beforeAll(async () => {
    // A site that answers only when the test lets it: the org's scans stay running and waiting.
    server = createServer((_req, res) => held.push(() => res.writeHead(200, { 'content-type': 'text/html' }).end(page('Slow', '<p>Hello</p>'))));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    s = await startTestServer({ ...FAST, SCAN_CONCURRENCY: '1', SCAN_MAX_RUNNING_PER_ORG: '1', SCAN_MAX_QUEUED_PER_ORG: '1', MONITOR_TICK_SECONDS: '3600' });
  });
  afterAll(async () => {
    for (const release of held.splice(0)) release();
    await s?.stop();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  afterEach(() => s.expectConformant());

  it('is refused, with the reason, and the schedule goes on', { timeout: 120_000 }, async () => {
    const orgId = (await insertOrg(s.services.db, { name: 'Busy team', slug: 'busy-team' })).id;
    const client = await mcpClient(s.url, bearer(await s.token({ sub: 'usr_busy_admin', orgId, role: 'org_admin', perms: [] })));
    ok(await client.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: url, scanMode: 'single' } }));
    await until('the first scan to fetch the page', () => (held.length ? true : undefined));
    ok(await client.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: url, scanMode: 'single' } }));
    const schedule = ok(await client.callTool({ name: 'dashboard_set_schedule', arguments: { siteUrl: url, cron: '0 6 * * *', scanMode: 'single' } }));
    const due = new Date(Date.now() - 1000).toISOString();
    await s.services.db('monitor_schedules').where({ id: schedule.scheduleId }).update({ next_run_at: due });
    await s.services.monitor.tick();
    const [listed] = ok(await client.callTool({ name: 'dashboard_list_schedules', arguments: {} })).schedules;
    expect(listed.recentRuns).toEqual([expect.objectContaining({ tickAt: due, scanId: null, status: 'refused', counts: null, error: expect.stringMatching(/SCAN_MAX_QUEUED_PER_ORG=1/) })]);
    expect(Date.parse(listed.nextRunAt)).toBeGreaterThan(Date.now());
    // The two scans asked for; the run queued none.
    expect(Number((await s.services.db('scans').where({ org_id: orgId }).count<{ n: number | string }[]>({ n: '*' }).first())?.n)).toBe(2);
    await client.close();
  });
});
