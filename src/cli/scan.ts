/**
 * `pactum scan <url>`: a client of a running pactum for CI (what pa11y-ci and axe-cli do, on
 * pactum's engine): starts a scan through the MCP endpoint, waits for it with a progress bar on a
 * terminal (plain lines otherwise), prints a summary, writes the chosen export, and exits 1 when
 * issues at or above --fail-on remain. With --baseline <scanId> it compares the scan with that
 * earlier one finding by finding (dashboard_verify_fixes) and --fail-on counts only the new
 * findings: a CI job fails on regressions, not on known debt. The server and token come from --server/--token or
 * PACTUM_SERVER/PACTUM_TOKEN (a token with scans.create and reports.view: `pactum token`).
 */
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { parseArgs } from 'node:util';
import { UsageError } from './args.js';
import { EXPORT_EXTENSIONS } from '../domain/report/exports.js';
import { parseSourceMapping, SourceMappingError } from '../domain/report/locations.js';

const LEVELS = ['error', 'warning', 'notice'] as const;
type Level = (typeof LEVELS)[number];
const FORMATS = EXPORT_EXTENSIONS;

interface Options { server: string; token: string; url: string; mode: 'single' | 'site'; maxPages: number; standard: string; format?: keyof typeof FORMATS; output?: string; failOn: Level | 'none'; sourceMap: string[]; baseline?: string }

/** Tries a busy export (429: the token's user or org has its most exports under way, as parallel CI jobs sharing a token may) again after Retry-After, a few times. */
async function exportOf(o: Options, format: keyof typeof FORMATS, scanId: string): Promise<Response> {
  const query = format === 'sarif' && o.sourceMap.length ? `?${new URLSearchParams(o.sourceMap.map((m) => ['sourceMap', m])).toString()}` : '';
  const url = `${o.server}/reports/${encodeURIComponent(scanId)}.${FORMATS[format]}${query}`;
  for (let tries = 1; ; tries++) {
    const res = await fetch(url, { headers: { authorization: `Bearer ${o.token}` } });
    if (res.status !== 429 || tries >= EXPORT_TRIES) return res;
    const wait = Math.min(60, Math.max(1, Number(res.headers.get('retry-after')) || 5));
    console.error(`the ${format} export is busy (${(await res.text()).slice(0, 200)}); trying again in ${wait} s`);
    await new Promise((r) => setTimeout(r, wait * 1000));
  }
}

const EXPORT_TRIES = 10;

function options(args: string[]): Options {
  const { values, positionals } = parseArgs({
    args, allowPositionals: true, strict: true,
    options: {
      server: { type: 'string' }, token: { type: 'string' }, mode: { type: 'string', default: 'site' }, 'max-pages': { type: 'string', default: '50' },
      standard: { type: 'string', default: 'WCAG2AA' }, format: { type: 'string' }, output: { type: 'string' }, 'fail-on': { type: 'string', default: 'error' },
      'source-map': { type: 'string', multiple: true, default: [] }, baseline: { type: 'string' },
    },
  });
  if (positionals.length !== 1) throw new UsageError('name one URL to scan');
  const server = values.server ?? process.env.PACTUM_SERVER;
  const token = values.token ?? process.env.PACTUM_TOKEN;
  if (!server) throw new UsageError('no server: give --server URL or set PACTUM_SERVER');
  if (!token) throw new UsageError('no token: give --token T or set PACTUM_TOKEN (pactum token --sub svc_ci --org ORG --perm scans.create,reports.view)');
  if (values.mode !== 'single' && values.mode !== 'site') throw new UsageError('--mode is single or site');
  const maxPages = Number(values['max-pages']);
  if (!Number.isInteger(maxPages) || maxPages < 1) throw new UsageError('--max-pages is a whole number of at least 1');
  if (values.format !== undefined && !Object.hasOwn(FORMATS, values.format)) throw new UsageError('--format is sarif, junit, csv or pa11y (GitLab\'s accessibility report)');
  const sourceMap = values['source-map'];
  if (sourceMap.length && values.format !== 'sarif') throw new UsageError('--source-map places pages in the repository for SARIF: use it with --format sarif');
  for (const m of sourceMap) {
    try {
      parseSourceMapping(m);
    } catch (err) {
      if (err instanceof SourceMappingError) throw new UsageError(`--source-map ${err.message}`);
      throw err;
    }
  }
  if ((values.format === undefined) !== (values.output === undefined)) throw new UsageError('--format and --output go together');
  const failOn = values['fail-on'] as Options['failOn'];
  if (![...LEVELS, 'none'].includes(failOn)) throw new UsageError('--fail-on is error, warning, notice or none');
  const baseline = values.baseline;
  if (baseline !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(baseline)) throw new UsageError('--baseline is the id of an earlier scan of the site (scn_…), as pactum scan printed it');
  return { server: server.replace(/\/+$/, ''), token, url: positionals[0]!, mode: values.mode, maxPages, standard: values.standard, format: values.format as Options['format'], output: values.output, failOn, sourceMap, ...(baseline ? { baseline } : {}) };
}

class ScanFailed extends Error {}

/** One tools/call through the MCP endpoint (JSON, no session): the tool's structured result, or its error message. */
async function tool(o: Options, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await fetch(`${o.server}/api/v1/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${o.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const text = await res.text();
  if (!res.ok) throw new ScanFailed(`${o.server} answered ${res.status}: ${text.slice(0, 300)}`);
  const answer = JSON.parse(text) as { result?: { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { text?: string }[] }; error?: { message: string } };
  if (answer.error) throw new ScanFailed(`${name}: ${answer.error.message}`);
  if (answer.result?.isError) throw new ScanFailed(`${name}: ${(JSON.parse(answer.result.content?.[0]?.text ?? '{}') as { message?: string }).message ?? 'failed'}`);
  return answer.result!.structuredContent!;
}

function progressLine(p: Record<string, unknown>, tty: boolean): string {
  const done = Number(p.pagesScanned ?? 0);
  const total = p.totalPages === null || p.totalPages === undefined ? null : Number(p.totalPages);
  const eta = typeof p.etaSeconds === 'number' ? `, about ${Math.max(1, Math.round(p.etaSeconds))} s left` : '';
  const text = `${String(p.status)}: ${done} of ${total ?? '?'} pages${eta}`;
  if (!tty || !total) return text;
  const width = 30;
  const filled = Math.min(width, Math.round((done / total) * width));
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${text}`;
}

interface Verified { verdict: 'fixed' | 'still_present' | 'new'; issue: { code: string; type: Level; pageUrl: string; selector: string } }

/** The scan compared with the baseline, printed; the new findings by level. */
async function compareWithBaseline(o: Options, baseline: string, scanId: string): Promise<Record<Level, number>> {
  const result = await tool(o, 'dashboard_verify_fixes', { scanId: baseline, againstScanId: scanId });
  const summary = result.summary as { fixed: number; still_present: number; new: number; newByLevel: Record<Level, number> };
  console.log(`compared with baseline ${baseline}: ${summary.fixed} fixed, ${summary.still_present} still present, ${summary.new} new`);
  for (const f of result.findings as Verified[]) {
    if (f.verdict === 'new') console.log(`  new ${f.issue.type.padEnd(7)} ${f.issue.code} at ${f.issue.selector} on ${f.issue.pageUrl}`);
  }
  return summary.newByLevel;
}

export async function scan(args: string[]): Promise<number> {
  const o = options(args);
  const tty = Boolean(process.stderr.isTTY);
  try {
    const started = await tool(o, 'dashboard_scan_site', { siteUrl: o.url, scanMode: o.mode, maxPages: o.maxPages, standard: o.standard });
    const scanId = String(started.scanId);
    console.error(`scan ${scanId} of ${o.url} started on ${o.server}`);
    let last = '';
    let progress: Record<string, unknown>;
    for (;;) {
      progress = await tool(o, 'dashboard_get_scan_progress', { scanId });
      const line = progressLine(progress, tty);
      if (tty) process.stderr.write(`\r${line}\x1b[K`);
      else if (line !== last) console.error(line);
      last = line;
      if (progress.finished) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    if (tty) process.stderr.write('\n');
    if (progress.status === 'failed') throw new ScanFailed(`the scan failed: ${typeof progress.error === 'string' ? progress.error : 'no reason given'}`);
    const report = await tool(o, 'dashboard_get_report', { scanId, view: 'digest', top: 10 });
    const digest = report.digest as { summary: { pagesScanned: number; pagesFailed: number; totalIssues: number; byLevel: Record<Level, number> }; rules: { code: string; type: string; issues: number; pages: number }[] };
    const s = digest.summary;
    console.log(`${o.url}: ${s.pagesScanned} pages checked${s.pagesFailed ? `, ${s.pagesFailed} could not be checked` : ''}; ${s.byLevel.error} errors, ${s.byLevel.warning} warnings, ${s.byLevel.notice} notices`);
    for (const r of digest.rules) console.log(`  ${r.type.padEnd(7)} ${r.code}: ${r.issues} on ${r.pages} page${r.pages === 1 ? '' : 's'}`);
    console.log(`report: ${o.server}/reports/${scanId}`);
    if (o.format && o.output) {
      const res = await exportOf(o, o.format, scanId);
      if (!res.ok || !res.body) throw new ScanFailed(`the ${o.format} export answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
      // Streamed to the file as it arrives; a body cut short fails the write (and the run).
      await pipeline(Readable.fromWeb(res.body as WebReadableStream), createWriteStream(o.output));
      console.error(`wrote ${o.output} (${o.format})`);
    }
    // With a baseline, only what is new counts against the run: known findings are the debt it started from.
    const counted = o.baseline ? await compareWithBaseline(o, o.baseline, scanId) : s.byLevel;
    if (o.failOn === 'none') return 0;
    const at = LEVELS.slice(0, LEVELS.indexOf(o.failOn) + 1);
    const count = at.reduce((n, level) => n + counted[level], 0);
    if (count > 0) {
      console.error(`failing: ${count} ${o.baseline ? 'new ' : ''}issue${count === 1 ? '' : 's'} at or above ${o.failOn}${o.baseline ? ` (not in baseline ${o.baseline})` : ''}`);
      return 1;
    }
    if (s.pagesFailed > 0) {
      console.error(`failing: ${s.pagesFailed} page${s.pagesFailed === 1 ? '' : 's'} could not be checked`);
      return 1;
    }
    return 0;
  } catch (err) {
    if (!(err instanceof ScanFailed) && !(err instanceof TypeError)) throw err;
    if (tty) process.stderr.write('\n');
    console.error(`pactum scan: ${err.message}${err instanceof TypeError ? ` (is ${o.server} reachable?)` : ''}`);
    return 3;
  }
}
