/**
 * Tools whose cost grows with their input run in the compute pool, off the event loop, and are
 * refused in the spec's error shape past its limits: an input over its cap is too_large (naming
 * the setting), markup nested or populated past the fix budget is invalid_arguments before any
 * drafting, a task past COMPUTE_TIMEOUT_MS is timed_out (and the next call is answered by a new
 * thread), a full queue is rate_limited with retryAfterSeconds, and a thread that dies fails its
 * call cleanly while the next call succeeds. Organizations take turns for the threads: one that
 * floods them is refused past its share, another's report keeps being answered, a call waits for
 * its turn at most COMPUTE_WAIT_MS, and a client that goes away withdraws its task.
 */
import { threadId as mainThreadId } from 'node:worker_threads';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCompute, type Compute } from '../../src/compute/compute.js';
import { insertOrg } from '../../src/db/users.js';
import { findScan, readReport } from '../../src/db/scans.js';
import { digest as digestOf } from '../../src/domain/scan/summary.js';
import type { Report } from '../../src/domain/scan/types.js';
import { seedLargeReport } from '../helpers/large-report.js';
import { newId } from '../../src/ground/ids.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, failure, mcpClient, ok } from '../helpers/mcp.js';

/** 2,900 images without alt, 40 kB (within FIX_MAX_ELEMENTS): drafting their alt placeholders takes a while. */
const HEAVY_HTML = Array.from({ length: 2900 }, (_, i) => `<img src=${i}>`).join('');
/** 16,000 images, one a line: every line changes, so the diff alone takes far longer than any limit here. */
const ENDLESS_HTML = '<img>\n'.repeat(16_000);
const fix = (htmlContext: string) => ({ wcagCriterion: '1.1.1', issueMessage: 'Images must have alternative text', htmlContext });
const SMALL = fix('<img src="/hero.jpg">');

const orgOf = new WeakMap<Client, string>();

async function member(s: TestServer, slug: string): Promise<Client> {
  const orgId = (await insertOrg(s.services.db, { name: slug, slug })).id;
  const client = await mcpClient(s.url, bearer(await s.token({ sub: `usr_${slug}_member`, orgId, role: 'member' })));
  orgOf.set(client, orgId);
  return client;
}

const call = (c: Client, name: string, args: Record<string, unknown>) => c.callTool({ name, arguments: args }) as Promise<CallToolResult>;

/** A tool error's JSON exactly as the spec's tool-error schema allows it. */
function toolError(result: CallToolResult) {
  const e = failure(result);
  expect(Object.keys(e).every((k) => ['error', 'message', 'retryAfterSeconds', 'details'].includes(k))).toBe(true);
  return e as { error: string; message: string; retryAfterSeconds?: number };
}

/** A completed scan of two pages with three issues, stored as a scan stores it. */
async function storedScan(s: TestServer, c: Client): Promise<string> {
  const org = orgOf.get(c)!;
  const db = s.services.db;
  const now = new Date().toISOString();
  const siteId = newId('site');
  await db('sites').insert({ id: siteId, org_id: org, url: 'https://stored.example/', created_at: now });
  const scanId = newId('scn');
  const issue = (code: string, type: string) => ({ code, wcagCriterion: '1.1.1', wcagCriteria: ['1.1.1'], type, impact: 'critical', message: `${code} help: why, at img`, selector: 'img', context: '<img>', helpUrl: 'https://example/rule' });
  const pages = [
    { url: 'https://stored.example/', issues: [issue('image-alt', 'error'), issue('image-alt', 'error')] },
    { url: 'https://stored.example/b', issues: [issue('image-redundant-alt', 'warning')] },
  ];
  const summary = { pagesScanned: 2, pagesFailed: 0, totalIssues: 3, byLevel: { error: 2, warning: 1, notice: 0 }, byCriterion: { '1.1.1': 3 }, notEvaluated: [] };
  await db('scans').insert({
    id: scanId, org_id: org, site_id: siteId, site_url: 'https://stored.example/', standard: 'WCAG2AA', scan_mode: 'site', max_pages: 2, concurrency: 1,
    jurisdictions: '[]', status: 'completed', pages_scanned: 2, total_pages: 2, total_issues: 3, summary: JSON.stringify(summary), error: null, attempts: 1,
    engine: 'jsdom', created_at: now, started_at: now, finished_at: now, last_updated: now,
  });
  await db('scan_pages').insert(pages.map((p, seq) => ({ scan_id: scanId, seq, url: p.url, title: null, issue_count: p.issues.length, error: null, issues: JSON.stringify(p.issues), style: null, not_evaluated: '[]' })));
  return scanId;
}

describe('compute in worker threads', () => {
  let s: TestServer;
  let c: Client;
  beforeAll(async () => {
    s = await startTestServer();
    c = await member(s, 'offload');
  });
  afterAll(() => s.stop());
  afterEach(() => s.expectConformant());

  /** Records, for each compute task, the thread that ran it and whether a timer set when it was submitted fired before it returned. */
  function watch(compute: Compute) {
    const runs: { kind: string; threadId: number; timerFired: boolean }[] = [];
    const run = compute.run.bind(compute);
    s.services.compute = {
      ...compute,
      retryAfterSeconds: () => compute.retryAfterSeconds(),
      close: () => compute.close(),
      run: async (task, options) => {
        let timerFired = false;
        const timer = setTimeout(() => (timerFired = true), 0);
        const ran = await run(task, options);
        clearTimeout(timer);
        runs.push({ kind: task.kind, threadId: ran.threadId, timerFired });
        return ran;
      },
    };
    return runs;
  }

  it('drafts fixes, digests large reports and queries issues on worker threads, with the event loop free meanwhile; a small report\'s digest on the loop', async () => {
    const original = s.services.compute;
    const runs = watch(original);
    try {
      const heavy = ok(await call(c, 'dashboard_generate_fix', fix(HEAVY_HTML)));
      expect(heavy.placeholders).toEqual(['TODO: describe the image']);
      expect(heavy.fixedHtml.match(/alt="TODO: describe the image"/g)).toHaveLength(2900);
      expect(heavy.diff).toMatch(/^--- original\/snippet\.html\n\+\+\+ fixed\/snippet\.html\n@@ -1,1 \+1,1 @@\n-<img/);
      const scanId = await storedScan(s, c);
      const digest = ok(await call(c, 'dashboard_get_report', { scanId, view: 'digest' }));
      expect(digest.digest.rules.map((r: { code: string; issues: number }) => [r.code, r.issues])).toEqual([['image-alt', 2], ['image-redundant-alt', 1]]);
      // Over 500 issues, the digest is grouped in the pool, and reads as it would on the loop.
      const large = await seedLargeReport(s.services.db, (await s.services.db('orgs').where({ slug: 'offload' }).first<{ id: string }>()).id, { pages: 12, issuesPerPage: 50 });
      const pooled = ok(await call(c, 'dashboard_get_report', { scanId: large.scanId, view: 'digest', top: 5 })).digest;
      const { report } = await readReport(s.services.db, (await findScan(s.services.db, large.scanId))!);
      expect(pooled).toEqual(JSON.parse(JSON.stringify(digestOf(report as Report, 5))));
      expect(pooled.summary.totalIssues).toBe(600);
      const page = ok(await call(c, 'dashboard_query_issues', { scanId, type: 'error', limit: 1 }));
      expect(page).toMatchObject({ total: 2, issues: [{ code: 'image-alt', pageUrl: 'https://stored.example/' }] });
      expect(page.nextCursor).toEqual(expect.any(String));
    } finally {
      s.services.compute = original;
    }
    // The digest in the pool is the large report's: the small one's never reached it.
    expect(runs.map((r) => r.kind)).toEqual(['fix', 'digest', 'query-issues']);
    for (const r of runs) expect(r.threadId).not.toBe(mainThreadId);
    // The large draft took its second elsewhere: a timer set as it began fired before it was done.
    // (The small digest and query may well be answered within the timer's first millisecond.)
    expect(runs[0]!.timerFired).toBe(true);
  });

  it('fails a call cleanly when its thread dies, and answers the next one', async () => {
    const original = s.services.compute;
    const crashing = createCompute(s.services.config, { module: new URL('./crash-compute-tasks.ts', import.meta.url) });
    s.services.compute = crashing;
    try {
      const e = toolError(await call(c, 'dashboard_generate_fix', fix('<img src="/a.png"><!-- crash the compute thread -->')));
      expect(e.error).toBe('failed');
      expect(e.message).toMatch(/^Drafting the fix failed: the thread doing it stopped and was replaced; the request id \w+ identifies it/);
      expect(e.message).not.toMatch(/simulated crash/); // the reason is logged, not told
      expect(s.logLines.some((l) => l.includes('simulated crash of a compute thread'))).toBe(true);
      const next = ok(await call(c, 'dashboard_generate_fix', SMALL));
      expect(next.fixedHtml).toBe('<img src="/hero.jpg" alt="TODO: describe the image">');
    } finally {
      s.services.compute = original;
      await crashing.close();
    }
  });
});

describe('compute limits', () => {
  let s: TestServer;
  let c: Client;
  beforeAll(async () => {
    s = await startTestServer({ FIX_MAX_CONTEXT_CHARS: '1000', REPORT_MAX_ISSUES: '2' });
    c = await member(s, 'capped');
  });
  afterAll(() => s.stop());
  afterEach(() => s.expectConformant());

  it('refuses htmlContext or cssContext over FIX_MAX_CONTEXT_CHARS as too_large, and drafts what fits', async () => {
    const html = toolError(await call(c, 'dashboard_generate_fix', fix(`<img src="/a.png">${' '.repeat(1000)}`)));
    expect(html).toEqual({ error: 'too_large', message: expect.stringMatching(/^htmlContext has 1018 characters; this server drafts fixes for at most 1000 \(FIX_MAX_CONTEXT_CHARS\)/) });
    const css = toolError(await call(c, 'dashboard_generate_fix', { ...SMALL, cssContext: 'a{}'.repeat(400) }));
    expect(css).toMatchObject({ error: 'too_large', message: expect.stringMatching(/^cssContext has 1200 characters; .* at most 1000 \(FIX_MAX_CONTEXT_CHARS\)/) });
    expect(ok(await call(c, 'dashboard_generate_fix', SMALL)).engine).toBe('deterministic');
  });

  it('refuses the pages view of a report over REPORT_MAX_ISSUES as too_large, and still gives its digest and issues', async () => {
    const scanId = await storedScan(s, c);
    const e = toolError(await call(c, 'dashboard_get_report', { scanId }));
    expect(e).toEqual({ error: 'too_large', message: `Scan ${scanId} has 3 issues; the pages view returns at most 2 (REPORT_MAX_ISSUES). Read it as view digest, and its issues with dashboard_query_issues, a page at a time.` });
    expect(ok(await call(c, 'dashboard_get_report', { scanId, view: 'digest' })).digest.summary.totalIssues).toBe(3);
    expect(ok(await call(c, 'dashboard_query_issues', { scanId })).total).toBe(3);
  });
});

describe('a strained compute pool', () => {
  let s: TestServer;
  let c: Client;
  /**
   * A small draft takes milliseconds, but a test process starved of CPU by other test files may
   * still pass the 3 s limit (a fresh thread's first draft warms jsdom up), so a timeout there is
   * tried again. A thread never replaced (still busy with the large one) would leave every later
   * call waiting, never answered.
   */
  async function smallDraft(): Promise<CallToolResult> {
    let result: CallToolResult | undefined;
    for (let tries = 0; tries < 3; tries++) {
      result = await call(c, 'dashboard_generate_fix', SMALL);
      if (!result.isError || toolError(result).error !== 'timed_out') break;
    }
    expect(ok(result).fixedHtml).toBe('<img src="/hero.jpg" alt="TODO: describe the image">');
    return result!;
  }

  beforeAll(async () => {
    // The runaway diff has more elements than drafting takes by default.
    s = await startTestServer({ COMPUTE_THREADS: '1', COMPUTE_QUEUE: '1', COMPUTE_TIMEOUT_MS: '3000', FIX_MAX_ELEMENTS: '20000' });
    c = await member(s, 'strained');
    await smallDraft(); // the thread is up
  });
  afterAll(() => s.stop());
  afterEach(() => s.expectConformant());

  it('answers rate_limited with retryAfterSeconds once the queue is full', async () => {
    // One runs (until its time limit), one waits (COMPUTE_QUEUE 1): the others are refused at once.
    const results = await Promise.all(Array.from({ length: 4 }, () => call(c, 'dashboard_generate_fix', fix(ENDLESS_HTML))));
    const errors = results.map(toolError);
    const limited = errors.filter((e) => e.error === 'rate_limited');
    expect(limited).toHaveLength(2);
    expect(errors.filter((e) => e.error === 'timed_out')).toHaveLength(2);
    for (const e of limited) {
      expect(e.message).toMatch(/^The server is busy: 1 tasks already wait for its 1 compute thread\(s\) \(COMPUTE_QUEUE\); retry drafting the fix in \d+ s$/);
      expect(Number.isInteger(e.retryAfterSeconds) && e.retryAfterSeconds! >= 1).toBe(true);
    }
    await smallDraft();
  });

  it('answers timed_out past COMPUTE_TIMEOUT_MS, and the next call is answered by a new thread', async () => {
    const e = toolError(await call(c, 'dashboard_generate_fix', fix(ENDLESS_HTML)));
    expect(e).toEqual({ error: 'timed_out', message: 'Drafting the fix took longer than 3000 ms (COMPUTE_TIMEOUT_MS) and was stopped; a smaller input will do' });
    await smallDraft();
  });
});

describe('the fix budget', () => {
  let s: TestServer;
  let c: Client;
  beforeAll(async () => {
    s = await startTestServer({ FIX_MAX_DEPTH: '64', FIX_MAX_ELEMENTS: '1000' });
    c = await member(s, 'budgeted');
  });
  afterAll(() => s.stop());
  afterEach(() => s.expectConformant());

  const nested = (n: number) => `${'<div>'.repeat(n)}Opening hours${'</div>'.repeat(n)}`;

  it('refuses markup nested deeper than FIX_MAX_DEPTH as invalid_arguments, and drafts what fits', async () => {
    const deep = toolError(await call(c, 'dashboard_generate_fix', { wcagCriterion: '1.3.1', issueMessage: 'Heading markup should be used', htmlContext: nested(700) }));
    expect(deep).toEqual({
      error: 'invalid_arguments',
      message: 'htmlContext nests elements 702 deep (counting <html> and <body>); this server drafts fixes for at most 64 (FIX_MAX_DEPTH). Send the element and less of its surroundings.',
    });
    const fits = ok(await call(c, 'dashboard_generate_fix', { wcagCriterion: '1.3.1', issueMessage: 'Heading markup should be used', htmlContext: nested(60) }));
    expect(fits.engine).toBe('deterministic');
  });

  it('refuses markup with more elements than FIX_MAX_ELEMENTS as invalid_arguments', async () => {
    const inputs = Array.from({ length: 2000 }, (_, i) => `<input name="f${i}">`).join('');
    const wide = toolError(await call(c, 'dashboard_generate_fix', { wcagCriterion: '4.1.2', issueMessage: 'Form elements must have labels', htmlContext: inputs }));
    expect(wide).toEqual({
      error: 'invalid_arguments',
      message: 'htmlContext has more than 1000 elements; this server drafts fixes for at most 1000 (FIX_MAX_ELEMENTS). Send the element and less of its surroundings.',
    });
  });
});

describe('organizations sharing the compute threads', () => {
  let s: TestServer;
  let a: string;
  let b: Client;
  let bToken: string;
  beforeAll(async () => {
    // Two threads: one organization runs at most one task at once (COMPUTE_MAX_RUNNING_PER_ORG
    // defaults to one fewer than the threads) and may have two more waiting, each for at most 1.5 s.
    s = await startTestServer({ COMPUTE_THREADS: '2', COMPUTE_MAX_QUEUED_PER_ORG: '2', COMPUTE_WAIT_MS: '1500', COMPUTE_TIMEOUT_MS: '120000', FIX_MAX_ELEMENTS: '20000' });
    const orgA = (await insertOrg(s.services.db, { name: 'flooding', slug: 'flooding' })).id;
    a = await s.token({ sub: 'usr_flooding_member', orgId: orgA, role: 'member' });
    b = await member(s, 'bystander');
    bToken = await s.token({ sub: 'usr_bystander_member', orgId: orgOf.get(b)!, role: 'member' });
    ok(await call(b, 'dashboard_generate_fix', SMALL)); // the threads are up
  });
  afterAll(() => s.stop());
  afterEach(() => s.expectConformant());

  /** dashboard_generate_fix as plain JSON-RPC over fetch, so that its client can go away: the tool error's code and message, ok, or aborted. */
  async function rawDraft(token: string, htmlContext: string, signal?: AbortSignal): Promise<{ error: string; message: string }> {
    try {
      const res = await fetch(`${s.url}/api/v1/mcp`, {
        method: 'POST',
        headers: { ...bearer(token), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dashboard_generate_fix', arguments: fix(htmlContext) } }),
        signal,
      });
      const { result } = (await res.json()) as { result: CallToolResult };
      return result.isError ? toolError(result) : { error: 'ok', message: '' };
    } catch (err) {
      if (signal?.aborted) return { error: 'aborted', message: '' };
      throw err;
    }
  }

  it("keeps answering another organization's report while one floods the fix drafting; every call of the flood is answered", async () => {
    const scanId = await storedScan(s, b);
    const flooder = new AbortController();
    const answers: { error: string; message: string }[] = [];
    for (let i = 0; i < 6; i++) void rawDraft(a, ENDLESS_HTML, flooder.signal).then((r) => answers.push(r));
    // One of the flood runs, two wait for the organization's turn, three are refused at once.
    await expect.poll(() => answers.filter((r) => r.error === 'rate_limited').length, { timeout: 30_000 }).toBe(3);
    for (const r of answers) expect(r.message).toMatch(/^Your organization already has 3 compute tasks running or waiting \(COMPUTE_MAX_RUNNING_PER_ORG 1, COMPUTE_MAX_QUEUED_PER_ORG 2\); retry drafting the fix in \d+ s$/);

    // Meanwhile the bystander's report, over MCP and as the page, is answered on the other thread.
    const digest = ok(await call(b, 'dashboard_get_report', { scanId, view: 'digest' }));
    expect(digest.digest.summary.totalIssues).toBe(3);
    const page = await fetch(`${s.url}/reports/${scanId}`, { headers: { ...bearer(bToken), accept: 'text/html' } });
    expect(page.status).toBe(200);
    await page.arrayBuffer();
    expect(answers.some((r) => r.error === 'ok')).toBe(false); // the flood's first still runs

    // The two waiting past COMPUTE_WAIT_MS are answered timed_out, naming it.
    await expect.poll(() => answers.length, { timeout: 30_000 }).toBe(5);
    const waited = answers.filter((r) => r.error === 'timed_out');
    expect(waited).toHaveLength(2);
    for (const r of waited) expect(r.message).toMatch(/^Drafting the fix waited longer than 1500 ms \(COMPUTE_WAIT_MS\) for a compute thread and was withdrawn; the server is busy, retry in \d+ s$/);

    // The flooder goes away: its running task is withdrawn and its thread freed.
    flooder.abort();
    await expect.poll(() => s.services.compute.pending, { timeout: 30_000 }).toBe(0);
    ok(await call(b, 'dashboard_generate_fix', SMALL));
  });

  it('withdraws a waiting call whose client went away, before the task ahead of it ends', async () => {
    const first = new AbortController();
    const second = new AbortController();
    const running = rawDraft(a, ENDLESS_HTML, first.signal);
    await expect.poll(() => s.services.compute.pending, { timeout: 30_000 }).toBe(1);
    const waiting = rawDraft(a, ENDLESS_HTML, second.signal);
    await expect.poll(() => s.services.compute.pending, { timeout: 30_000 }).toBe(2);
    second.abort();
    expect(await waiting).toEqual({ error: 'aborted', message: '' });
    // Withdrawn from the organization's queue while the first still runs.
    await expect.poll(() => s.services.compute.pending, { timeout: 30_000 }).toBe(1);
    first.abort();
    expect(await running).toEqual({ error: 'aborted', message: '' });
    await expect.poll(() => s.services.compute.pending, { timeout: 30_000 }).toBe(0);
  });
});
