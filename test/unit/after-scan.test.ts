/**
 * A completed scan's brand score: a scan that gathered no page's style statistics (its org has no
 * guideline) is scored without the compute pool, whose threads would start for a constant's work;
 * a scan with them is scored in the pool.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Compute } from '../../src/compute/compute.js';
import { migrate, openDb, type Db } from '../../src/db/knex.js';
import { siteOf, type ScanRow } from '../../src/db/scans.js';
import { insertOrg } from '../../src/db/users.js';
import { computeBrandScore } from '../../src/scans/after-scan.js';

let dir: string;
let db: Db;
let scan: ScanRow;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pactum-after-scan-'));
  db = openDb({ databaseUrl: null, dataDir: dir });
  await migrate(db);
  const org = await insertOrg(db, { name: 'Brand', slug: 'brand' });
  const now = new Date().toISOString();
  const row = {
    id: 'scn_after_scan_test', org_id: org.id, site_id: await siteOf(db, org.id, 'https://example.com/'), site_url: 'https://example.com/', standard: 'WCAG2AA',
    scan_mode: 'site', max_pages: 5, concurrency: 1, jurisdictions: '[]', status: 'completed', pages_scanned: 1, total_pages: 1, total_issues: 0, created_at: now, last_updated: now,
  };
  await db('scans').insert(row);
  scan = (await db<ScanRow>('scans').where({ id: row.id }).first())!;
});
afterAll(async () => {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** A compute pool that records what it is asked and fails the test if it is asked at all. */
function refusingCompute(asked: string[]): Compute {
  return {
    run(task) {
      asked.push(task.kind);
      return Promise.reject(new Error('the compute pool was asked'));
    },
    retryAfterSeconds: () => 1,
    threads: 1,
    pending: 0,
    close: () => Promise.resolve(),
  };
}

describe('the brand score of a completed scan', () => {
  it('is computed and stored without the compute pool when no page gathered style statistics', async () => {
    const asked: string[] = [];
    const score = await computeBrandScore({ db, compute: refusingCompute(asked) }, scan);
    expect(asked).toEqual([]);
    expect(score.scanId).toBe(scan.id);
    const stored = await db('brand_scores').where({ scan_id: scan.id }).first<{ score: string }>();
    expect(JSON.parse(stored.score)).toEqual(score);
  });

  it('goes to the compute pool when pages carry style statistics', async () => {
    await db('scan_pages').insert({ scan_id: scan.id, seq: 0, url: 'https://example.com/', title: 'Home', issue_count: 0, issues: '[]', style: JSON.stringify({ colors: [] }) }).catch((err: unknown) => {
      throw new Error(`inserting a page failed (has scan_pages changed?): ${String(err)}`);
    });
    const asked: string[] = [];
    await expect(computeBrandScore({ db, compute: refusingCompute(asked) }, scan)).rejects.toThrow(/compute pool was asked/);
    expect(asked).toEqual(['brand-score']);
  });
});
