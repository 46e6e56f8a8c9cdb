/**
 * Exports against a server shared by several orgs: a member whose scan found tens of thousands of
 * issues opens many connections that request its SARIF export and never read the answer. A build
 * that wrote each export as one string held one whole document per waiting connection (the first
 * replay of this attack, 72,100 issues and 64 connections, took the server from 0.9 to 8 GB and
 * then killed it for every tenant); here it is scaled down (ATTACK_ISSUES issues, ATTACK_CONNECTIONS
 * connections) so it stays affordable to run and still shows that growth.
 *
 * Printed: the server's RSS (VmRSS of its process) idle and at its peak under the attack, whether
 * it survived, what the attacker's connections were answered, and beside it another org's report
 * page and /healthz (p50/p99 of sequential probes) idle and under the attack. A second round, where
 * the build has the per-user and per-org caps, raises them to the attack's size: what streaming
 * alone holds.
 */
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { alive, report, withPactum, type Replay } from './harness.js';

const ATTACK_ISSUES = 32_000;
const ATTACK_PAGES = 160;
const ATTACK_CONNECTIONS = 32;
/** How long the attacker's connections are given to be answered (an old build builds each whole document first). */
const ANSWER_BUDGET_MS = 120_000;

type Sqlite = new (file: string) => { prepare: (sql: string) => { run: (...args: unknown[]) => unknown }; transaction: <T>(fn: () => T) => () => T; close: () => void };

const RULES = ['image-alt', 'color-contrast', 'link-name', 'label', 'button-name', 'heading-order', 'region', 'list'] as const;

/** A completed scan of `pages` pages of `perPage` issues each, written into the build's SQLite as a scan stores it. */
function plantReport(dataDir: string, orgId: string, host: string, pages: number, perPage: number): string {
  const Database = createRequire(import.meta.url)('better-sqlite3') as Sqlite;
  const db = new Database(join(dataDir, 'pactum.sqlite'));
  const now = new Date().toISOString();
  const scanId = `scn_01replay${host.replace(/[^a-z]/g, '').slice(0, 8)}${String(pages).padStart(6, '0')}`.slice(0, 30);
  const siteId = `site_01replay${host.replace(/[^a-z]/g, '').slice(0, 8)}`;
  const siteUrl = `https://${host}/`;
  const total = pages * perPage;
  const summary = { pagesScanned: pages, pagesFailed: 0, totalIssues: total, byLevel: { error: total, warning: 0, notice: 0 }, byCriterion: {}, notEvaluated: [] };
  const issue = (p: number, n: number) => {
    const code = RULES[(p + n) % RULES.length]!;
    const selector = `main > section:nth-child(${p % 9 + 1}) > div.grid > article:nth-child(${n + 1}) > a.card`;
    const html = `<a class="card" href="/catalogue/item-${p}-${n}?ref=listing"><img src="/media/${p}/${n}.jpg" width="320" height="240"></a>`;
    return {
      code, wcagCriterion: '1.1.1', wcagCriteria: ['1.1.1'], type: 'error', impact: 'critical',
      message: `Images must have alternative text: Element does not have an alt attribute, at ${selector} (${html.slice(0, 60)}); see https://dequeuniversity.com/rules/axe/4.14/${code}`,
      selector, context: html, helpUrl: `https://dequeuniversity.com/rules/axe/4.14/${code}`,
    };
  };
  try {
    db.prepare('insert into sites (id, org_id, url, created_at) values (?, ?, ?, ?)').run(siteId, orgId, siteUrl, now);
    db.prepare(`insert into scans (id, org_id, site_id, site_url, standard, scan_mode, max_pages, concurrency, jurisdictions, status, pages_scanned, total_pages, total_issues, summary, error, attempts, engine, created_at, started_at, finished_at, last_updated)
      values (?, ?, ?, ?, 'WCAG2AA', 'site', 1000, 1, '[]', 'completed', ?, ?, ?, ?, null, 1, 'jsdom', ?, ?, ?, ?)`).run(scanId, orgId, siteId, siteUrl, pages, pages, total, JSON.stringify(summary), now, now, now, now);
    const page = db.prepare('insert into scan_pages (scan_id, seq, url, title, issue_count, error, issues, style, not_evaluated) values (?, ?, ?, ?, ?, null, ?, null, ?)');
    db.transaction(() => {
      for (let p = 0; p < pages; p++) page.run(scanId, p, `${siteUrl}catalogue/${p}`, `Catalogue ${p}`, perPage, JSON.stringify(Array.from({ length: perPage }, (_, n) => issue(p, n))), '[]');
    })();
  } finally {
    db.close();
  }
  return scanId;
}

const rssMb = (pid: number) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
};

interface Probed { p50: number; p99: number; failed: number; n: number }

/** Sequential probes of `url`, `n` of them at least and on until `until` (when given) has settled: p50 and p99 of their times, and how many failed (an error status, a timeout, no answer). */
async function probe(url: string, n: number, headers: Record<string, string> = {}, until?: Promise<unknown>): Promise<Probed> {
  let settled = !until;
  void until?.finally(() => (settled = true));
  const times: number[] = [];
  let failed = 0;
  while (times.length < n || !settled) {
    const t0 = performance.now();
    try {
      const res = await fetch(url, { headers, signal: AbortSignal.timeout(30_000) });
      await res.arrayBuffer();
      if (res.status !== 200) failed++;
    } catch {
      failed++;
    }
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  return { p50: at(0.5), p99: at(0.99), failed, n: times.length };
}
const line = (p: Probed) => `p50 ${p.p50.toFixed(1)} ms, p99 ${p.p99.toFixed(1)} ms (${p.n} probes${p.failed ? `, ${p.failed} failed` : ''})`;

/** A connection that asks for `path` and reads nothing past the first bytes: what it was answered (status), or null. */
function stalled(url: string, path: string, token: string, budget: AbortSignal): Promise<{ socket: Socket; status: number | null }> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(u.port), u.hostname);
    let settled = false;
    const done = (status: number | null) => {
      if (settled) return;
      settled = true;
      budget.removeEventListener('abort', timeout);
      resolve({ socket, status });
    };
    const timeout = () => done(null);
    budget.addEventListener('abort', timeout, { once: true });
    socket.on('error', () => done(null));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${token}\r\nAccept: application/sarif+json\r\n\r\n`);
    socket.once('data', (d: Buffer) => {
      socket.pause(); // never read again: the kernel's buffers fill, then the server's writes wait
      done(Number(/^HTTP\/1\.1 (\d{3})/.exec(d.subarray(0, 20).toString('latin1'))?.[1] ?? 0));
    });
  });
}

/** `goals`: the round is the attack on the build as configured by default, which the goals are about. */
async function round(dist: string, label: string, env: Record<string, string>, goals: boolean) {
  await withPactum(dist, env, async ({ run, start, dataDir }: Replay) => {
    const acme = /\((org_[a-z0-9]+)\)/i.exec(run(['org', 'create', 'acme']))![1]!;
    const globex = /\((org_[a-z0-9]+)\)/i.exec(run(['org', 'create', 'globex']))![1]!;
    run(['user', 'create', 'mallory', '--org', 'acme', '--role', 'member', '--password-stdin'], 'mallory-password-123\n');
    run(['user', 'create', 'grace', '--org', 'globex', '--role', 'member', '--password-stdin'], 'grace-password-123\n');
    const big = plantReport(dataDir, acme, 'noisy.example', ATTACK_PAGES, ATTACK_ISSUES / ATTACK_PAGES);
    const theirs = plantReport(dataDir, globex, 'calm.example', 20, 50);
    const mallory = run(['token', '--user', 'mallory']);
    const grace = run(['token', '--user', 'grace']);
    const { url, child } = await start();
    const pid = child.pid!;
    const page = `${url}/reports/${theirs}`;
    const asGrace = { authorization: `Bearer ${grace}`, accept: 'text/html' };
    // Warm-up: the report view's script is bundled on first use, the compute thread starts on the first task.
    await probe(page, 3, asGrace);
    await probe(`${url}/healthz`, 20);
    const idleRss = rssMb(pid);
    // Beside each other, as under the attack.
    const [idlePage, idleHealth] = await Promise.all([probe(page, 50, asGrace), probe(`${url}/healthz`, 200)]);

    let peak = idleRss;
    let answered = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 200);
    const budget = AbortSignal.timeout(ANSWER_BUDGET_MS);
    const t0 = performance.now();
    const attack = Promise.all(Array.from({ length: ATTACK_CONNECTIONS }, () => stalled(url, `/reports/${big}.sarif`, mallory, budget)));
    // The bystander's probes run from the attack's first request until every connection has its answer, and on while they are held.
    const [held, underPage, underHealth] = await Promise.all([
      attack.then((h) => ((answered = performance.now() - t0), h)),
      probe(page, 50, asGrace, attack),
      probe(`${url}/healthz`, 200, {}, attack),
    ]);
    const statuses = new Map<string, number>();
    for (const h of held) statuses.set(String(h.status ?? 'none'), (statuses.get(String(h.status ?? 'none')) ?? 0) + 1);
    const underRss = rssMb(pid);
    clearInterval(sampler);
    peak = Math.max(peak, underRss);
    const survived = child.exitCode === null && (await alive(url));
    for (const h of held) h.socket.destroy();

    const answers = [...statuses].map(([s, n]) => `${n}×${s}`).join(', ');
    report(`${label}: ${ATTACK_CONNECTIONS} unread SARIF exports of ${ATTACK_ISSUES} issues`, `${survived ? 'server up' : 'SERVER GONE (hole)'}; answered ${answers} within ${(answered / 1000).toFixed(1)} s`);
    report(`${label}: server RSS (load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores)`, `idle ${idleRss.toFixed(0)} MB, under the attack ${underRss.toFixed(0)} MB, peak ${peak.toFixed(0)} MB (idle + ${(peak - idleRss).toFixed(0)} MB${goals ? '; goal + 200' : ''})`);
    const ratio = survived ? ` (p50 ${(underPage.p50 / idlePage.p50).toFixed(2)}× idle${goals ? '; goal ≤ 2×' : ''})` : '';
    report(`${label}: another org's report page`, `idle ${line(idlePage)}; under the attack ${survived ? line(underPage) : 'no answer'}${ratio}`);
    report(`${label}: /healthz`, `idle ${line(idleHealth)}; under the attack ${survived ? line(underHealth) : 'no answer'}${goals ? ' (goal p99 ≤ 100 ms)' : ''}`);
  });
}

export default async function sharedServiceExports(dist: string) {
  await round(dist, 'default settings', {}, true);
  // Builds with the caps: the same attack with them raised to its size shows what streaming alone holds.
  // The settings module of the build (src/ground/config.js, or src/config.js in older ones).
  const config = [join(dist, 'src', 'ground', 'config.js'), join(dist, 'src', 'config.js')].find((f) => existsSync(f));
  const capped = config !== undefined && readFileSync(config, 'utf8').includes('REPORT_EXPORTS_PER_USER');
  if (capped) {
    const n = String(ATTACK_CONNECTIONS);
    await round(dist, `caps raised to ${n}`, { REPORT_EXPORTS_PER_USER: n, REPORT_EXPORTS_PER_ORG: n }, false);
  } else {
    report(`caps raised to ${ATTACK_CONNECTIONS}`, 'this build has no per-user or per-org export caps: the round above is the same attack');
  }
}
