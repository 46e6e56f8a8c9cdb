/**
 * One org's flood of scans does not hold every other org's: orgs take turns for the scanners, an
 * org never has more than SCAN_MAX_RUNNING_PER_ORG scans running (across instances: run this file
 * with PACTUM_TEST_BACKEND=postgres-s3 PACTUM_TEST_TOPOLOGY=pair), and past
 * SCAN_MAX_QUEUED_PER_ORG waiting scans dashboard_scan_site is refused with rate_limited and
 * retryAfterSeconds while other orgs are not. Assertions are on the order scans started and on
 * counts, never on durations.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { backendMode } from '../helpers/backends.js';
import { bearer, failure, mcpClient, ok } from '../helpers/mcp.js';
import { startFixtureSite, type FixtureSite } from '../helpers/site.js';
import { insertOrg } from '../../src/db/users.js';
import type { ScanRow } from '../../src/db/scans.js';
import { JOB_SCHEMA } from '../../src/scans/runner.js';

let site: FixtureSite;
beforeAll(async () => {
  site = await startFixtureSite(100);
});
afterAll(async () => {
  await site?.close();
});

const BASE = { SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'jsdom' };

interface Org { id: string; client: Client }

async function org(s: TestServer, slug: string): Promise<Org> {
  const id = (await insertOrg(s.services.db, { name: slug, slug })).id;
  return { id, client: await mcpClient(s.url, bearer(await s.token({ sub: `svc_${slug}`, orgId: id, role: 'member', perms: [] }))) };
}

const scan = async (o: Org, args: Record<string, unknown>) => ok(await o.client.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/'), ...args } })) as { scanId: string };
const flood = { scanMode: 'site', maxPages: 2 };
const single = { scanMode: 'single' };

async function until<T>(what: string, probe: () => Promise<T | undefined>, seconds = 240): Promise<T> {
  for (let i = 0; i < seconds * 20; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const rows = (s: TestServer, ids: string[]) => s.services.db<ScanRow>('scans').whereIn('id', ids);
const allFinished = (s: TestServer, ids: string[]) =>
  until('every scan to finish', async () => {
    const r = await rows(s, ids);
    return r.every((x) => x.finished_at) ? r : undefined;
  });

describe('orgs take turns', () => {
  let s: TestServer;
  beforeAll(async () => {
    // One scanner per instance: who goes next is all that decides the order.
    s = await startTestServer({ ...BASE, SCAN_CONCURRENCY: '1' });
  });
  afterAll(async () => s?.stop());
  afterEach(() => s.expectConformant());

  it("starts other orgs' scans before the rest of a flood queued earlier", { timeout: 300_000 }, async () => {
    const [a, b, c] = [await org(s, 'flood-a'), await org(s, 'bystander-b'), await org(s, 'bystander-c')];
    const floodIds: string[] = [];
    for (let i = 0; i < 4; i++) floodIds.push((await scan(a, flood)).scanId);
    const bId = (await scan(b, single)).scanId;
    const cId = (await scan(c, single)).scanId;
    const done = await allFinished(s, [...floodIds, bId, cId]);
    expect(done.every((r) => r.status === 'completed' || r.status === 'completed_with_errors')).toBe(true);
    const byStart = [...done].sort((x, y) => x.started_at!.localeCompare(y.started_at!));
    const who = (r: ScanRow) => (r.org_id === a.id ? 'A' : r.org_id === b.id ? 'B' : 'C');
    // First come, first served would be A A A A B C.
    expect(byStart.map(who)).toEqual(['A', 'B', 'C', 'A', 'A', 'A']);
    // The flood itself still runs in the order it was queued.
    expect(byStart.filter((r) => r.org_id === a.id).map((r) => r.id)).toEqual(floodIds);
    for (const o of [a, b, c]) await o.client.close();
  });
});

describe('the running cap', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ ...BASE, SCAN_CONCURRENCY: '3', SCAN_MAX_RUNNING_PER_ORG: '2' });
  });
  afterAll(async () => s?.stop());
  afterEach(() => s.expectConformant());

  it('never lets one org run more than SCAN_MAX_RUNNING_PER_ORG scans, and gives the free scanner to another org', { timeout: 300_000 }, async () => {
    const [a, b] = [await org(s, 'capped-a'), await org(s, 'other-b')];
    const floodIds: string[] = [];
    for (let i = 0; i < 5; i++) floodIds.push((await scan(a, flood)).scanId);
    const bId = (await scan(b, single)).scanId;
    const samples: number[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const [row] = await s.services.db('scans').where({ org_id: a.id, status: 'running' }).count<{ n: number | string }[]>({ n: '*' });
        samples.push(Number(row!.n));
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const done = await allFinished(s, [...floodIds, bId]);
    sampling = false;
    await sampler;
    expect(Math.max(...samples), `running scans of the flooding org, sampled ${samples.length} times`).toBe(2);
    // The same from the recorded intervals: at no start were two others of the org still running.
    const flooded = done.filter((r) => r.org_id === a.id);
    for (const r of flooded) {
      const overlapping = flooded.filter((o) => o.id !== r.id && o.started_at! <= r.started_at! && o.finished_at! > r.started_at!);
      expect(overlapping.length, `scans of the org running when ${r.id} started`).toBeLessThanOrEqual(1);
    }
    // The third scanner went to the other org, before the flood's third scan.
    const third = [...flooded].sort((x, y) => x.started_at!.localeCompare(y.started_at!))[2]!;
    expect(done.find((r) => r.id === bId)!.started_at! < third.started_at!).toBe(true);
    // Waiting for the org's turn cost no scan an attempt, and (PostgreSQL) no queue job a retry.
    expect(done.map((r) => r.attempts)).toEqual(done.map(() => 1));
    if (backendMode !== 'embedded') {
      const { rows } = await s.services.db.raw<{ rows: { retried: number | string }[] }>(`select count(*) as retried from ${JOB_SCHEMA}.job where name = 'scans' and retry_count > 0`);
      expect(Number(rows[0]!.retried)).toBe(0);
    }
    for (const o of [a, b]) await o.client.close();
  });
});

describe('the queued cap', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ ...BASE, SCAN_CONCURRENCY: '1', SCAN_MAX_QUEUED_PER_ORG: '3' });
  });
  afterAll(async () => s?.stop());
  afterEach(() => s.expectConformant());

  it('refuses the scan past SCAN_MAX_QUEUED_PER_ORG with rate_limited and retryAfterSeconds, storing nothing, and leaves other orgs alone', { timeout: 120_000 }, async () => {
    const [a, b] = [await org(s, 'queued-a'), await org(s, 'queued-b')];
    // Slow pages keep the first scan running (its first page takes 5 s to arrive) while the rest queue.
    site.delayMs = 5000;
    try {
      const first = (await scan(a, single)).scanId;
      await until('the first scan to run', async () => ((await rows(s, [first]))[0]!.status === 'running' ? true : undefined));
      for (let i = 0; i < 3; i++) await scan(a, single);
      const refused = await a.client.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/contrast.html'), scanMode: 'single' } });
      const err = failure(refused) as { error: string; message: string; retryAfterSeconds?: number };
      expect(err.error).toBe('rate_limited');
      expect(err.message).toMatch(/SCAN_MAX_QUEUED_PER_ORG=3/);
      expect(Number.isInteger(err.retryAfterSeconds) && err.retryAfterSeconds! >= 1).toBe(true);
      // Nothing stored: not the scan, not its site.
      expect(await s.services.db('scans').where({ org_id: a.id }).count<{ n: number | string }[]>({ n: '*' }).then((r) => Number(r[0]!.n))).toBe(4);
      expect(await s.services.db('sites').where({ org_id: a.id }).where('url', 'like', '%contrast.html').first()).toBeUndefined();
      // Another org is not affected by the first one's queue.
      ok(await b.client.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/'), scanMode: 'single' } }));
    } finally {
      site.delayMs = 100;
      for (const o of [a, b]) await o.client.close();
    }
  });
});
