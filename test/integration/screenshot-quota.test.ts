/**
 * Screenshots share the disk with everyone: one org keeps at most SCREENSHOTS_BYTES_PER_ORG of
 * them (reserved atomically before a byte is written, so shots stored at once cannot pass it), an
 * image leaves LFS_MIN_FREE_BYTES free on the store like a Git LFS upload, and images go
 * SCREENSHOTS_RETENTION_DAYS after they were taken. A shot refused says why, naming the setting.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertOrg } from '../../src/db/users.js';
import { newId } from '../../src/ground/ids.js';
import type { ElementShot } from '../../src/domain/scan/types.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { backendMode } from '../helpers/backends.js';

const QUOTA = 10_000;
const shot = (bytes: number): ElementShot => ({ issues: [0], mime: 'image/png', width: 10, height: 10, bytes: Buffer.alloc(bytes, 7) });

let s: TestServer;
const orgs: string[] = [];
const scans: string[] = [];

/** A scan row of `orgId` (on `server`, by default the shared one) for the screenshots to belong to. */
async function scanOf(orgId: string, server: TestServer = s): Promise<string> {
  const db = server.services.db;
  const id = newId('scn');
  const now = new Date().toISOString();
  const site = newId('site');
  await db('sites').insert({ id: site, org_id: orgId, url: `https://${site}.example/`, created_at: now });
  await db('scans').insert({ id, org_id: orgId, site_id: site, site_url: `https://${site}.example/`, standard: 'WCAG2AA', scan_mode: 'single', max_pages: 1, concurrency: 1, jurisdictions: '[]', status: 'running', pages_scanned: 0, attempts: 1, created_at: now, last_updated: now });
  return id;
}

const used = async (orgId: string) => Number((await s.services.db('scan_screenshots').where({ org_id: orgId }).sum({ n: 'bytes' }).first<{ n: number | string | null }>())?.n ?? 0);

beforeAll(async () => {
  s = await startTestServer({ SCREENSHOTS_BYTES_PER_ORG: String(QUOTA), SCREENSHOTS_RETENTION_DAYS: '30' });
  for (const slug of ['shots-a', 'shots-b']) {
    const id = (await insertOrg(s.services.db, { name: slug, slug })).id;
    orgs.push(id);
    scans.push(await scanOf(id));
  }
});
afterAll(() => s.stop());

describe('the per-org quota', () => {
  it('stores shots until the org reaches its quota, then skips them naming SCREENSHOTS_BYTES_PER_ORG', async () => {
    const store = s.services.screenshots;
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await store.put(orgs[0]!, scans[0]!, shot(3000)));
    expect(outcomes.filter((o) => 'id' in o)).toHaveLength(3);
    const last = outcomes[3]!;
    expect('skipped' in last && last.skipped).toMatch(/SCREENSHOTS_BYTES_PER_ORG/);
    expect(await used(orgs[0]!)).toBe(9000);
    // Another org's quota is its own.
    expect('id' in (await store.put(orgs[1]!, scans[1]!, shot(3000)))).toBe(true);
  });

  it('lets shots stored at once pass the quota by no more than one per writer (none on SQLite)', async () => {
    const store = s.services.screenshots;
    const org = (await insertOrg(s.services.db, { name: 'burst', slug: 'shots-burst' })).id;
    const scan = await scanOf(org);
    const outcomes = await Promise.all(Array.from({ length: 30 }, () => store.put(org, scan, shot(1000))));
    const stored = outcomes.filter((o) => 'id' in o).length;
    if (backendMode === 'embedded') expect(stored).toBe(10);
    else expect(stored).toBeGreaterThanOrEqual(10);
    expect(await used(org)).toBe(stored * 1000);
    expect(await used(org)).toBeLessThanOrEqual(QUOTA + 30 * 1000);
  });

  it('is freed by a scan that starts again: its earlier images go', async () => {
    await s.services.screenshots.removeScan(scans[0]!);
    expect(await used(orgs[0]!)).toBe(0);
    expect('id' in (await s.services.screenshots.put(orgs[0]!, scans[0]!, shot(3000)))).toBe(true);
  });
});

describe('retention', () => {
  it('removes images older than SCREENSHOTS_RETENTION_DAYS, rows and bytes, and keeps newer ones', async () => {
    const store = s.services.screenshots;
    const org = (await insertOrg(s.services.db, { name: 'old', slug: 'shots-old' })).id;
    const scan = await scanOf(org);
    const old = await store.put(org, scan, shot(100));
    const fresh = await store.put(org, scan, shot(100));
    if (!('id' in old) || !('id' in fresh)) throw new Error('both shots should be stored');
    await s.services.db('scan_screenshots').where({ id: old.id }).update({ created_at: new Date(Date.now() - 31 * 86_400_000).toISOString() });
    expect(await store.expire()).toBe(1);
    expect(await store.get(scan, old.id)).toBeNull();
    expect(await store.get(scan, fresh.id)).not.toBeNull();
    if (backendMode !== 'postgres-s3') {
      const file = (id: string) => join(s.dataDir, 'screenshots', 'objects', id.slice(0, 2), id.slice(2, 4), id);
      expect(existsSync(file(old.id))).toBe(false);
      expect(existsSync(file(fresh.id))).toBe(true);
    }
    expect(await store.expire()).toBe(0);
  });

  it('answers 404 for an expired screenshot, through the report route', async () => {
    const token = await s.token({ sub: 'svc_shots', orgId: orgs[1]!, role: 'org_admin', perms: [] });
    const outcome = await s.services.screenshots.put(orgs[1]!, scans[1]!, shot(100));
    if (!('id' in outcome)) throw new Error('stored');
    const url = `${s.url}/reports/${scans[1]}/screenshots/${outcome.id}`;
    expect((await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    await s.services.db('scan_screenshots').where({ id: outcome.id }).update({ created_at: '2020-01-01T00:00:00.000Z' });
    await s.services.screenshots.expire();
    const gone = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    expect(gone.status).toBe(404);
    await gone.body?.cancel();
  });
});

describe('the store\'s free space', () => {
  it('skips a shot that would leave less than LFS_MIN_FREE_BYTES free, naming it (S3 reports no free space: stored there)', async () => {
    const tight = await startTestServer({ LFS_MIN_FREE_BYTES: String(Number.MAX_SAFE_INTEGER) });
    try {
      const org = (await insertOrg(tight.services.db, { name: 'full', slug: 'shots-full' })).id;
      const outcome = await tight.services.screenshots.put(org, await scanOf(org, tight), shot(10));
      if (backendMode === 'postgres-s3') return expect('id' in outcome).toBe(true);
      expect('skipped' in outcome && outcome.skipped).toMatch(/LFS_MIN_FREE_BYTES/);
      expect(Number((await tight.services.db('scan_screenshots').count({ n: '*' }).first<{ n: number | string }>()).n)).toBe(0);
    } finally {
      await tight.stop();
    }
  });
});
