/**
 * The signed-in landing page's list of scans, as a person reads it: dates and times in words (the
 * ISO time only in <time datetime>), and each run of a site numbered, so that scans of the same
 * site are told apart.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { insertOrg } from '../../src/db/users.js';
import { newId } from '../../src/ground/ids.js';

let s: TestServer;
let cookie: string;
const times = ['2026-12-05T09:15:00.000Z', '2026-12-06T16:40:00.000Z', '2026-12-07T08:05:00.000Z'];

beforeAll(async () => {
  s = await startTestServer();
  const org = await insertOrg(s.services.db, { name: 'Acme', slug: 'acme-landing' });
  // The landing page lists scans to a signed-in browser (its session cookie).
  const admin = await s.token({ sub: 'usr_landing_admin', orgId: org.id, role: 'org_admin', perms: [] });
  const created = await fetch(`${s.url}/api/v1/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dashboard_create_user', arguments: { username: 'lena', password: 'lena-password-123', role: 'member' } } }),
  });
  expect(created.status).toBe(200);
  await created.body?.cancel();
  const login = await fetch(`${s.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'lena', password: 'lena-password-123' }) });
  expect(login.status).toBe(200);
  cookie = /session=[^;]+/.exec(login.headers.get('set-cookie') ?? '')![0];
  const siteId = newId('site');
  await s.services.db('sites').insert({ id: siteId, org_id: org.id, url: 'https://www.example.com/', created_at: times[0] });
  for (const [i, at] of times.entries()) {
    await s.services.db('scans').insert({
      id: newId('scn'), org_id: org.id, site_id: siteId, site_url: 'https://www.example.com/', standard: 'WCAG2AA', scan_mode: i === 1 ? 'single' : 'site', max_pages: 50, concurrency: 1,
      jurisdictions: '[]', status: 'completed', pages_scanned: i === 1 ? 1 : 12, total_pages: 12, total_issues: 7, summary: null, error: null, attempts: 1, engine: 'chromium',
      created_at: at, started_at: at, finished_at: at, last_updated: at,
    });
    // Ids order by time: the next scan is newer.
    await new Promise((r) => setTimeout(r, 5));
  }
});
afterAll(async () => {
  s.expectConformant();
  await s?.stop();
});

it('lists scans with dates a person reads, each run of a site numbered, no two rows alike', async () => {
  const html = await (await fetch(`${s.url}/`, { headers: { cookie, accept: 'text/html' } })).text();
  const rows = [...html.matchAll(/<tr><td><a href="reports\/[^"]+">[\s\S]*?<\/tr>/g)].map((m) => m[0]);
  expect(rows).toHaveLength(3);
  expect(new Set(rows.map((r) => r.replace(/<[^>]+>/g, ''))).size).toBe(3);
  expect(rows.map((r) => /run (\d+)/.exec(r)?.[1])).toEqual(['3', '2', '1']);
  expect(rows[0]).toContain('finished <time datetime="2026-12-07T08:05:00.000Z">Mon 7 Dec 2026, 08:05 UTC</time>');
  expect(rows[1]).toContain('one page, WCAG2AA, chromium');
  expect(rows[2]).toContain('12 pages of the site');
  // The ISO time is for machines: no cell shows it as text.
  for (const r of rows) expect(r.replace(/<[^>]+>/g, ' ')).not.toMatch(/\d{4}-\d\d-\d\dT/);
});
