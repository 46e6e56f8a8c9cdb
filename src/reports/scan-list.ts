/**
 * The signed-in landing page's list of the org's latest scans, as a person reads it: each run of
 * a site numbered among that site's runs (so repeated scans of one site are told apart), what it
 * checked, its outcome in words, and when, as a date and time a person reads (the ISO time stays
 * in the element's datetime attribute).
 */
import type { Db } from '../db/knex.js';
import type { ScanRow } from '../db/scans.js';
import { escapeHtml } from '../http/notice-page.js';

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => String(n).padStart(2, '0');

/** "Mon 7 Dec 2026, 14:03 UTC": the same for every reader, whatever the server's locale or ICU data. */
export function readableTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${WEEKDAYS[d.getUTCDay()]} ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${two(d.getUTCHours())}:${two(d.getUTCMinutes())} UTC`;
}

const STATUS: Record<ScanRow['status'], string> = {
  queued: 'waiting to start',
  running: 'running',
  completed: 'completed',
  completed_with_errors: 'completed; some pages could not be checked',
  failed: 'failed',
};

function checked(scan: ScanRow): string {
  const pages = scan.scan_mode === 'single' ? 'one page' : `${scan.pages_scanned} page${scan.pages_scanned === 1 ? '' : 's'} of the site`;
  return `${pages}, ${scan.standard}${scan.engine ? `, ${scan.engine}` : ''}`;
}

/**
 * The run number of each listed scan among its site's runs. The list is the org's newest scans,
 * so a site's listed scans are its newest ones: with n runs in all, the newest listed is run n.
 */
async function runNumbers(db: Db, orgId: string, scans: readonly ScanRow[]): Promise<Map<string, number>> {
  const sites = [...new Set(scans.map((s) => s.site_id))];
  const totals = new Map<string, number>();
  if (sites.length) {
    const rows = await db('scans').where({ org_id: orgId }).whereIn('site_id', sites).groupBy('site_id').select('site_id').count<{ site_id: string; n: number | string }[]>({ n: '*' });
    for (const r of rows) totals.set(r.site_id, Number(r.n));
  }
  const seen = new Map<string, number>();
  const numbers = new Map<string, number>();
  for (const scan of scans) {
    const before = seen.get(scan.site_id) ?? 0;
    seen.set(scan.site_id, before + 1);
    numbers.set(scan.id, (totals.get(scan.site_id) ?? before + 1) - before);
  }
  return numbers;
}

/** The table of `scans` (newest first), or a sentence when there are none. */
export async function latestScansHtml(db: Db, orgId: string, scans: readonly ScanRow[]): Promise<string> {
  if (!scans.length) return '<p>No scans yet: start one with the MCP tool dashboard_scan_site, or <code>pactum scan &lt;url&gt;</code>.</p>';
  const runs = await runNumbers(db, orgId, scans);
  const rows = scans.map((scan) => {
    const at = scan.finished_at ?? scan.started_at ?? scan.created_at;
    const verb = scan.finished_at ? 'finished' : scan.started_at ? 'started' : 'queued';
    return `<tr><td><a href="reports/${encodeURIComponent(scan.id)}">${escapeHtml(scan.site_url)}</a> <span class="run">run ${runs.get(scan.id)}</span></td>`
      + `<td>${escapeHtml(checked(scan))}</td><td>${escapeHtml(STATUS[scan.status] ?? scan.status)}</td><td>${scan.total_issues ?? '–'}</td>`
      + `<td>${verb} <time datetime="${escapeHtml(at)}">${escapeHtml(readableTime(at))}</time></td></tr>`;
  });
  return `<table><thead><tr><th scope="col">Site</th><th scope="col">Checked</th><th scope="col">Status</th><th scope="col">Issues</th><th scope="col">When</th></tr></thead><tbody>\n${rows.join('\n')}\n</tbody></table>`;
}
