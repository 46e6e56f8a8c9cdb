/**
 * What follows a completed scan: its brand score, against the org's guideline as it is at that
 * moment (so a later change of guideline does not rewrite history).
 */
import type { ScanRow } from '../db/scans.js';
import type { Services } from '../app/services.js';
import { computeBrandScore } from '../db/brand.js';

export async function afterScan(services: Services, scan: ScanRow): Promise<void> {
  await computeBrandScore(services.db, services.compute, scan);
}
