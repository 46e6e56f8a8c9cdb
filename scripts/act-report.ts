/**
 * The ACT implementation report: pactum's engines held against the W3C ACT Rules' test cases.
 *
 *   make act ACT_RULES=/path/to/act-rules.github.io [ACT_ENGINES=chromium,jsdom] [ACT_RULE=id,id] [ACT_OUT=act-report]
 *
 * ACT_RULES is a local checkout of the public ACT rules repository (act-rules/act-rules.github.io);
 * nothing of it is copied into pactum. The script reads each WCAG rule's test cases (the "Passed",
 * "Failed" and "Inapplicable" examples of its markdown), serves them and the checkout's test assets
 * on loopback, checks each example with pactum's engines and with axe-core alone in the same
 * Chromium (the baseline), and writes into ACT_OUT:
 *   - earl-<tool>.json: the EARL JSON-LD implementation report W3C's ACT pages read, one per tool;
 *   - act-report.md: per rule, each example's outcome and the tool's consistency; the examples each
 *     tool flags (failed and passed, on the rules axe-core implements and on those it does not);
 *     each check beyond axe's flags on failed and passed examples and its precision; and each
 *     tool's wall time per page, p50 and p90 (printed too);
 *   - results.json: every finding per example, for looking into one rule.
 * Each tool's procedures for a rule come from the checks themselves: axe-core rules by their
 * `actIds`, pactum's own checks by `actRules` in the check catalogue.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, mkdir, writeFile, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, resolve } from 'node:path';
import axe from 'axe-core';
import { chromium, type Browser } from 'playwright-core';
import { axeRunOptions } from '../src/domain/scan/axe-results.js';
import { CHROMIUM_FLAGS, createChromiumEngine } from '../src/domain/scan/chromium/engine.js';
import { DESKTOP } from '../src/domain/scan/chromium/browser-checks.js';
import { AXE_RULE_ACT_RULES, CHECKS } from '../src/domain/scan/checks/catalogue.js';
import type { CheckSession } from '../src/domain/scan/engine.js';
import { createJsdomEngine } from '../src/domain/scan/jsdom-engine.js';
import { createCheckPool } from '../src/compute/check-pool.js';
import type { CheckedPage, WcagStandard } from '../src/domain/scan/types.js';
import { checkPrecision, consistencyOf, flagCounts, outcomeOf, percentile, type Consistency, type Outcome, type Expected } from './act-consistency.js';

const STANDARD: WcagStandard = 'WCAG2AAA';
const PAGE_TIMEOUT_MS = 60_000;
/** Pages checked at once: the machine's cores are shared. */
const CONCURRENCY = 2;

interface Rule { id: string; name: string; criteria: string[]; file: string; testcases: TestCase[] }
interface TestCase { ruleId: string; expected: Expected; title: string; code: string; ext: string; id: string; path: string; url: string }
interface Finding { code: string; type: string; selector: string; message: string }
interface ToolResult { findings: Finding[]; notEvaluated: string[]; error?: string; scripted?: boolean; outsideScope?: boolean; /** Wall time of the check, ms. */ ms?: number }

const root = process.env.ACT_RULES;
if (!root) {
  console.error('ACT_RULES must name a checkout of https://github.com/act-rules/act-rules.github.io (git clone it, then make act ACT_RULES=DIR)');
  process.exit(2);
}
const engines = (process.env.ACT_ENGINES || 'chromium,jsdom').split(',').map((e) => e.trim()).filter(Boolean);
for (const e of engines) if (e !== 'chromium' && e !== 'jsdom') { console.error(`ACT_ENGINES: unknown engine "${e}" (chromium, jsdom)`); process.exit(2); }
const only = process.env.ACT_RULE ? new Set(process.env.ACT_RULE.split(',').map((r) => r.trim())) : null;
const outDir = resolve(process.env.ACT_OUT || 'act-report');
const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

// ---- rules and their test cases, from the checkout's markdown ----

/** The frontmatter facts the report needs: id, name, WCAG criteria (any, primary or secondary), deprecation. */
function frontmatter(text: string): { id: string; name: string; criteria: string[]; deprecated: boolean } | null {
  const fm = /^---\n([\s\S]*?)\n---/.exec(text)?.[1];
  if (!fm) return null;
  const id = /^id:\s*(\S+)/m.exec(fm)?.[1];
  const name = /^name:\s*['"]?(.*?)['"]?\s*$/m.exec(fm)?.[1];
  if (!id || !name) return null;
  const criteria = [...fm.matchAll(/^ {2}wcag2\d:([\d.]+):/gm)].map((m) => m[1]!);
  return { id, name, criteria: [...new Set(criteria)], deprecated: /^deprecated:/m.test(fm) };
}

const EXT: Record<string, string> = { html: 'html', svg: 'svg', xml: 'xml', xhtml: 'xhtml' };

function testcasesOf(ruleId: string, text: string): TestCase[] {
  const section = text.slice(text.search(/^## Test Cases/m));
  const cases: TestCase[] = [];
  const heading = /^#### (Passed|Failed|Inapplicable) Example (\d+)[^\n]*\n([\s\S]*?)^```(\w*)\n([\s\S]*?)^```/gm;
  for (const m of section.matchAll(heading)) {
    const ext = EXT[m[4] || 'html'] ?? 'html';
    const code = m[5]!;
    const id = createHash('sha1').update(code).digest('hex');
    const path = `/testcases/${ruleId}/${id}.${ext}`;
    cases.push({ ruleId, expected: m[1]!.toLowerCase() as Expected, title: `${m[1]} Example ${m[2]}`, code, ext, id, path, url: `https://act-rules.github.io${path}` });
  }
  return cases;
}

async function readRules(dir: string): Promise<Rule[]> {
  const files = (await readdir(join(dir, '_rules'))).filter((f) => f.endsWith('.md')).sort();
  const rules: Rule[] = [];
  for (const file of files) {
    const text = await readFile(join(dir, '_rules', file), 'utf8');
    const fm = frontmatter(text);
    // WCAG rules: those with a WCAG 2 requirement; deprecated rules are left out.
    if (!fm || fm.deprecated || fm.criteria.length === 0) continue;
    if (only && !only.has(fm.id)) continue;
    rules.push({ id: fm.id, name: fm.name, criteria: fm.criteria, file, testcases: testcasesOf(fm.id, text) });
  }
  return rules;
}

// ---- the examples and the checkout's assets on loopback ----

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.xhtml': 'application/xhtml+xml', '.svg': 'image/svg+xml', '.xml': 'application/xml',
  '.css': 'text/css', '.js': 'text/javascript', '.json': 'application/json', '.png': 'image/png', '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.mp4': 'video/mp4', '.webm': 'video/webm', '.mp3': 'audio/mpeg',
  '.ogg': 'audio/ogg', '.wav': 'audio/wav', '.vtt': 'text/vtt', '.txt': 'text/plain', '.woff': 'font/woff', '.woff2': 'font/woff2',
};

async function startSite(dir: string, cases: Map<string, TestCase>) {
  const base = resolve(dir);
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://act').pathname);
    const testcase = cases.get(path);
    if (testcase) return void res.writeHead(200, { 'content-type': TYPES[`.${testcase.ext}`] ?? 'text/html' }).end(testcase.code);
    const file = normalize(join(base, path));
    if (file.startsWith(`${base}/`) && !path.includes('/.')) {
      try {
        if ((await stat(file)).isFile()) return void res.writeHead(200, { 'content-type': TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream' }).end(await readFile(file));
      } catch {
        // a 404 below
      }
    }
    res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><html lang="en"><title>Not found</title><p>Not found</p></html>');
  };
  const server = createServer((req, res) => void serve(req, res));
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, close: () => new Promise<void>((ok) => { server.closeAllConnections(); server.close(() => ok()); }) };
}

// ---- the tools ----

type Tool = 'pactum-chromium' | 'pactum-jsdom' | 'axe-core';

function fromChecked(page: CheckedPage): ToolResult {
  return {
    findings: page.issues.map((i) => ({ code: i.code, type: i.type, selector: i.selector, message: i.message })),
    notEvaluated: page.notEvaluated.map((n) => n.code),
    scripted: page.notEvaluated.some((n) => n.code === 'scripted-content'),
  };
}

/** axe-core alone in the same Chromium: injected into every frame, run with the engine's options. */
async function axeAlone(browser: Browser, url: string, origin: string): Promise<ToolResult> {
  const context = await browser.newContext({ viewport: DESKTOP });
  try {
    const page = await context.newPage();
    // The example stays on screen: navigations it starts itself (meta refresh, scripts) and anything off loopback are refused.
    let loaded = false;
    await page.route('**/*', (route) => {
      const request = route.request();
      const away = loaded && request.isNavigationRequest() && request.frame() === page.mainFrame();
      if (away) return route.abort('aborted');
      return request.url().startsWith(origin) ? route.continue() : route.abort('blockedbyclient');
    });
    await page.goto(url, { waitUntil: 'load', timeout: PAGE_TIMEOUT_MS });
    loaded = true;
    for (const frame of page.frames()) await frame.evaluate(axe.source).catch(() => undefined);
    const results = await page.evaluate<axe.AxeResults>(`axe.run(document, ${JSON.stringify(axeRunOptions(STANDARD, 'browser'))})`);
    const errored = (node: axe.NodeResult) => [...node.any, ...node.all, ...node.none].some((c) => c.id === 'error-occurred');
    const target = (t: axe.UnlabelledFrameSelector) => t.map((part) => (Array.isArray(part) ? part.join(' >>> ') : part)).join(' ');
    const list = (rules: axe.Result[], type: string) => rules.flatMap((r) => r.nodes.filter((n) => !errored(n)).map((n) => ({ code: r.id, type, selector: target(n.target), message: r.help })));
    return {
      findings: [...list(results.violations, 'error'), ...list(results.incomplete, 'warning')],
      notEvaluated: [...results.violations, ...results.incomplete].filter((r) => r.nodes.some(errored)).map((r) => r.id),
    };
  } finally {
    await context.close();
  }
}

// ---- procedures: what implements each ACT rule, read from the checks ----

const axeRules = axe.getRules(axeRunOptions(STANDARD, 'browser').runOnly ? (axeRunOptions(STANDARD, 'browser').runOnly as { values: string[] }).values : undefined);
const alsoEnabled = Object.keys(axeRunOptions(STANDARD, 'browser').rules ?? {});
// Experimental and deprecated rules do not run on a tag selection unless enabled by name.
const selectedAxe = [...axeRules.filter((r) => !r.tags.includes('experimental') && !r.tags.includes('deprecated')), ...axe.getRules().filter((r) => alsoEnabled.includes(r.ruleId))];
function proceduresFor(tool: Tool, ruleId: string): string[] {
  const fromAxe = selectedAxe.filter((r) => (r as { actIds?: string[] }).actIds?.includes(ruleId)).map((r) => r.ruleId);
  if (tool === 'axe-core') return [...new Set(fromAxe)];
  const mappedByPactum = selectedAxe.filter((r) => AXE_RULE_ACT_RULES[r.ruleId]?.includes(ruleId)).map((r) => r.ruleId);
  const ours = [...mappedByPactum, ...Object.values(CHECKS).filter((c) => c.actRules.includes(ruleId)).map((c) => c.id)];
  return [...new Set([...fromAxe, ...ours])];
}

// ---- the run ----

const rules = await readRules(root);
const cases = new Map<string, TestCase>();
for (const rule of rules) for (const tc of rule.testcases) cases.set(tc.path, tc);
if (rules.length === 0) {
  console.error(only ? `ACT_RULE: no WCAG rule with id ${[...only].join(', ')} in ${root}/_rules` : `no rules found in ${root}/_rules`);
  process.exit(2);
}
console.error(`${rules.length} WCAG rules, ${cases.size} test cases; engines: ${engines.join(', ')} and axe-core alone; at most ${CONCURRENCY} pages at once`);

const site = await startSite(root, cases);
const fetch = { allowPrivateNetworks: true };
const chromiumEngine = engines.includes('chromium') ? createChromiumEngine({ executablePath, pageTimeoutMs: PAGE_TIMEOUT_MS, maxPages: CONCURRENCY }) : null;
const pool = engines.includes('jsdom') ? createCheckPool(CONCURRENCY, { jobTimeoutMs: PAGE_TIMEOUT_MS }) : null;
const sessions: [Tool, CheckSession][] = [];
if (chromiumEngine) sessions.push(['pactum-chromium', chromiumEngine.openSession(fetch)]);
if (pool) sessions.push(['pactum-jsdom', createJsdomEngine(pool).openSession(fetch)]);
const baseline = await chromium.launch({ executablePath, args: [...CHROMIUM_FLAGS] });
const tools: Tool[] = [...sessions.map(([t]) => t), 'axe-core'];
const results = new Map<string, Partial<Record<Tool, ToolResult>>>();

const queue = [...cases.values()];
let done = 0;
async function worker(): Promise<void> {
  for (let tc = queue.shift(); tc; tc = queue.shift()) {
    const url = `${site.origin}${tc.path}`;
    const byTool: Partial<Record<Tool, ToolResult>> = {};
    for (const [tool, session] of sessions) {
      // pactum checks HTML pages (its crawler fetches nothing else): an SVG or XML document is outside every check.
      if (tc.ext !== 'html') { byTool[tool] = { findings: [], notEvaluated: [], outsideScope: true }; continue; }
      const started = performance.now();
      byTool[tool] = await session.check({ url, html: tc.code, standard: STANDARD }).then(fromChecked, (err: Error) => ({ findings: [], notEvaluated: [], error: err.message }));
      byTool[tool].ms = performance.now() - started;
    }
    const started = performance.now();
    byTool['axe-core'] = await axeAlone(baseline, url, site.origin).catch((err: Error) => ({ findings: [], notEvaluated: [], error: err.message.split('\n')[0]! }));
    byTool['axe-core'].ms = performance.now() - started;
    results.set(tc.path, byTool);
    if (++done % 25 === 0) console.error(`${done}/${cases.size} test cases`);
  }
}
try {
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
} finally {
  for (const [, session] of sessions) await session.close();
  await chromiumEngine?.close();
  await pool?.close();
  await baseline.close();
  await site.close();
}

// ---- outcomes, consistency, and the reports ----

interface RuleRow { rule: Rule; byTool: Record<Tool, { procedures: string[]; outcomes: Outcome[]; consistency: Consistency }> }
const rows: RuleRow[] = rules.map((rule) => {
  const byTool = {} as RuleRow['byTool'];
  for (const tool of tools) {
    const procedures = proceduresFor(tool, rule.id);
    const outcomes = rule.testcases.map((tc) => outcomeOf(results.get(tc.path)?.[tool], procedures, tool === 'pactum-jsdom'));
    byTool[tool] = { procedures, outcomes, consistency: consistencyOf(rule.testcases.map((tc, i) => ({ expected: tc.expected, outcome: outcomes[i]! })), procedures.length > 0) };
  }
  return { rule, byTool };
});

const vendor = { 'pactum-chromium': 'pactum (Chromium engine)', 'pactum-jsdom': 'pactum (jsdom engine)', 'axe-core': `axe-core ${axe.version} alone in Chromium` } as const;
await mkdir(outDir, { recursive: true });
for (const tool of tools) {
  const graph = rules.flatMap((rule) => rule.testcases.map((tc) => {
    const result = results.get(tc.path)?.[tool];
    const procedures = proceduresFor(tool, rule.id);
    return {
      '@type': 'TestSubject',
      source: tc.url,
      assertions: procedures.map((procedure) => ({
        '@type': 'Assertion',
        mode: 'earl:automatic',
        test: { '@type': 'TestCase', title: procedure, isPartOf: [rule.id] },
        result: { '@type': 'TestResult', outcome: `earl:${outcomeOf(result, [procedure], tool === 'pactum-jsdom')}` },
      })),
    };
  })).filter((subject) => subject.assertions.length > 0);
  const earl = {
    '@context': 'https://act-rules.github.io/earl-context.json',
    '@graph': graph.map((subject) => ({ ...subject, assertions: subject.assertions.map((a) => ({ ...a, assertedBy: { '@id': `https://github.com/pactum#${tool}`, '@type': 'Software', title: vendor[tool] } })) })),
  };
  await writeFile(join(outDir, `earl-${tool}.json`), `${JSON.stringify(earl, null, 1)}\n`);
}
await writeFile(join(outDir, 'results.json'), `${JSON.stringify(rules.map((rule) => ({
  rule: rule.id, name: rule.name,
  testcases: rule.testcases.map((tc) => ({ title: tc.title, expected: tc.expected, url: `${tc.path}`, results: results.get(tc.path) })),
})), null, 1)}\n`);
await writeFile(join(outDir, 'act-report.md'), markdown(rows));
console.log([summaryTable(rows), flagTable(rows), checkTable(rows), timingTable()].join('\n\n'));
console.error(`written: ${outDir}/act-report.md, ${outDir}/earl-*.json, ${outDir}/results.json`);

function letter(o: Outcome): string {
  return { passed: 'p', failed: 'f', inapplicable: 'i', cantTell: '?', untested: '–' }[o];
}

function summaryTable(all: RuleRow[]): string {
  const axeRuleIds = new Set(all.filter((r) => r.byTool['axe-core'].procedures.length > 0).map((r) => r.rule.id));
  const groups: [string, RuleRow[]][] = [
    [`all ${all.length} WCAG rules`, all],
    [`the ${axeRuleIds.size} rules axe-core implements`, all.filter((r) => axeRuleIds.has(r.rule.id))],
    [`the ${all.length - axeRuleIds.size} rules axe-core does not implement`, all.filter((r) => !axeRuleIds.has(r.rule.id))],
  ];
  const lines = ['| rules | tool | implemented | consistent | partially consistent | inconsistent | not evaluated |', '|---|---|---|---|---|---|---|'];
  for (const [label, group] of groups) {
    for (const tool of tools) {
      const count = (c: Consistency) => group.filter((r) => r.byTool[tool].consistency === c).length;
      lines.push(`| ${label} | ${tool} | ${group.length - count('not implemented')} | ${count('consistent')} | ${count('partially consistent')} | ${count('inconsistent')} | ${count('not evaluated')} |`);
    }
  }
  return lines.join('\n');
}

function axeImplemented(all: RuleRow[]): Set<string> {
  return new Set(all.filter((r) => r.byTool['axe-core'].procedures.length > 0).map((r) => r.rule.id));
}

function pct(n: number, of: number): string {
  return of === 0 ? '–' : `${Math.round((100 * n) / of)}%`;
}

/**
 * Examples flagged, by the rules' own procedures: on the rules axe-core does not implement, the
 * failed examples pactum flags (fails or says needs review) and the passed examples it flags or
 * fails; on the rules axe-core implements, the failed examples each tool detects, and the passed
 * examples it fails.
 */
function flagTable(all: RuleRow[]): string {
  const axeIds = axeImplemented(all);
  const lines = [
    '| rules | tool | failed examples flagged | of which failed | passed examples flagged | passed examples failed |',
    '|---|---|---|---|---|---|',
  ];
  const groups: [string, RuleRow[]][] = [
    [`the ${axeIds.size} rules axe-core implements`, all.filter((r) => axeIds.has(r.rule.id))],
    [`the ${all.length - axeIds.size} rules axe-core does not implement`, all.filter((r) => !axeIds.has(r.rule.id))],
  ];
  for (const [label, group] of groups) {
    for (const tool of tools) {
      const counts = flagCounts(group.flatMap((r) => r.rule.testcases.map((tc, i) => ({ expected: tc.expected, outcome: r.byTool[tool].outcomes[i]! }))));
      const { failed: f, passed: p } = counts;
      lines.push(`| ${label} | ${tool} | ${f.flagged} of ${f.examples} (${pct(f.flagged, f.examples)}) | ${f.failed} | ${p.flagged} of ${p.examples} (${pct(p.flagged, p.examples)}) | ${p.failed} |`);
    }
  }
  return lines.join('\n');
}

/**
 * Each check beyond axe-core: on the examples of the ACT rules it implements (a check that
 * implements none: of the rules that test one of its WCAG criteria), on how many of the failed,
 * passed and inapplicable examples it reported something, and its precision (flags on failed
 * examples over all its flags).
 */
function checkTable(all: RuleRow[]): string {
  const pactumTools = tools.filter((t) => t !== 'axe-core');
  const lines = [
    `| check | rules | ${pactumTools.map((t) => `${t}: flags on failed / passed / inapplicable examples | precision`).join(' | ')} |`,
    `|---|---|${pactumTools.map(() => '---|---').join('|')}|`,
  ];
  for (const check of Object.values(CHECKS)) {
    const own = all.filter((r) => check.actRules.includes(r.rule.id));
    const answersFor = own.length > 0 ? own : all.filter((r) => r.rule.criteria.some((c) => check.criteria.includes(c)));
    if (answersFor.length === 0) continue;
    const cells = pactumTools.map((tool) => {
      const examples = answersFor.flatMap((r) => r.rule.testcases.map((tc) => ({ expected: tc.expected, codes: (results.get(tc.path)?.[tool]?.findings ?? []).map((f) => f.code) })));
      const c = checkPrecision(examples, check.id);
      return `${c.failed} / ${c.passed} / ${c.inapplicable} | ${c.precision === null ? '–' : `${Math.round(100 * c.precision)}%`}`;
    });
    lines.push(`| ${check.id} | ${answersFor.map((r) => r.rule.id).join(', ')}${own.length > 0 ? '' : ' (by criterion)'} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/** Each tool's wall time per example page it checked (pactum: HTML pages), p50 and p90. */
function timingTable(): string {
  const lines = ['| tool | pages | p50 ms a page | p90 ms a page |', '|---|---|---|---|'];
  for (const tool of tools) {
    const ms = [...results.values()].map((r) => r[tool]).filter((r) => r && !r.outsideScope && !r.error && r.ms !== undefined).map((r) => r!.ms!);
    const p50 = percentile(ms, 50);
    const p90 = percentile(ms, 90);
    lines.push(`| ${tool} | ${ms.length} | ${p50 === null ? '–' : Math.round(p50)} | ${p90 === null ? '–' : Math.round(p90)} |`);
  }
  return lines.join('\n');
}

function markdown(all: RuleRow[]): string {
  const out = [
    '# ACT implementation report',
    '',
    `The W3C ACT Rules' test cases for ${all.length} WCAG rules (${cases.size} examples), checked with ${tools.join(', ')} (standard ${STANDARD}).`,
    'Outcomes per example, in the order of the rule\'s examples: p passed (nothing found), f failed, ? cannot tell (needs review), – not evaluated.',
    'Consistency as in W3C\'s ACT implementation reports: consistent (every failed example failed or needs review, no passed or inapplicable example failed, at least one failed example failed);',
    'partially consistent (no passed or inapplicable example failed, and a failed example failed, or needs review without failing an inapplicable one); inconsistent (otherwise).',
    '',
    summaryTable(all),
    '',
    flagTable(all),
    '',
    checkTable(all),
    '',
    timingTable(),
    '',
    `| rule | examples | ${tools.map((t) => `${t} | consistency`).join(' | ')} |`,
    `|---|---|${tools.map(() => '---|---').join('|')}|`,
  ];
  for (const row of all) {
    const examples = row.rule.testcases.map((tc) => `${tc.expected[0]!.toUpperCase()}${/\d+$/.exec(tc.title)![0]}`).join(' ');
    const cells = tools.map((t) => {
      const r = row.byTool[t];
      return r.procedures.length === 0 ? '— | not implemented' : `\`${r.outcomes.map(letter).join(' ')}\` (${r.procedures.join(', ')}) | ${r.consistency}`;
    });
    out.push(`| ${row.rule.id} ${row.rule.name} | \`${examples}\` | ${cells.join(' | ')} |`);
  }
  return `${out.join('\n')}\n`;
}
