/**
 * The fixture corpus (test/fixtures/corpus, each page a known failure or a known pass) scanned
 * with both engines, summed up by the accessibility requirement or the check it covers: for each
 * engine, how many known failures were found, how many known passes stayed clean, and how many
 * expected codes were listed as not evaluated instead (what jsdom cannot decide). The corpus test
 * (test/unit/scan/corpus.test.ts) asserts these; this prints them.
 *
 *   npx tsx scripts/corpus-report.ts        (needs Debian's chromium, or CHROMIUM_PATH)
 */
import { createChromiumEngine } from '../src/domain/scan/chromium/engine.js';
import type { CheckSession } from '../src/domain/scan/engine.js';
import { createJsdomEngine } from '../src/domain/scan/jsdom-engine.js';
import { createCheckPool } from '../src/compute/check-pool.js';
import type { CheckedPage } from '../src/domain/scan/types.js';
import { corpusInput, corpusManifest, startCorpusSite, type CorpusPage } from '../test/helpers/corpus-site.js';

interface Tally { found: number; fails: number; clean: number; passes: number; notEvaluated: number; errors: number }
const tally = (): Tally => ({ found: 0, fails: 0, clean: 0, passes: 0, notEvaluated: 0, errors: 0 });

function count(t: Tally, page: CorpusPage, result: CheckedPage | Error): void {
  if (result instanceof Error) {
    t.errors++;
    return;
  }
  const found = new Set(result.issues.map((i) => i.code));
  const unknown = new Set(result.notEvaluated.map((n) => n.code));
  for (const code of page.fails) {
    t.fails++;
    if (found.has(code)) t.found++;
    // A page whose content its scripts build says, in jsdom, that they did not run (scripted-content).
    else if (unknown.has(code) || (page.row === 'scripted' && unknown.has('scripted-content'))) t.notEvaluated++;
  }
  for (const code of page.passes) {
    t.passes++;
    if (!found.has(code)) t.clean++;
  }
}

const site = await startCorpusSite();
const pages = await corpusManifest();
const chromium = createChromiumEngine({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', pageTimeoutMs: 60_000 });
const pool = createCheckPool(2, { jobTimeoutMs: 60_000 });
const fetch = { allowPrivateNetworks: true };
const engines: [string, CheckSession][] = [['chromium', chromium.openSession(fetch)], ['jsdom', createJsdomEngine(pool).openSession(fetch)]];
const rows = new Map<string, Record<string, Tally>>();
try {
  await Promise.all(pages.map(async (page) => {
    const input = await corpusInput(site, page, fetch);
    const row = rows.get(page.row) ?? Object.fromEntries(engines.map(([name]) => [name, tally()]));
    rows.set(page.row, row);
    await Promise.all(engines.map(async ([name, session]) => count(row[name]!, page, await session.check(input).catch((err: Error) => err))));
  }));
} finally {
  await Promise.all(engines.map(([, session]) => session.close()));
  await chromium.close();
  await pool.close();
  await site.close();
}

const cell = (t: Tally) => `${t.found}/${t.fails} found, ${t.clean}/${t.passes} clean${t.notEvaluated ? `, ${t.notEvaluated} not evaluated` : ''}${t.errors ? `, ${t.errors} pages failed` : ''}`;
console.log(`corpus: ${pages.length} pages; per row, known failures found and known passes clean`);
console.log('| row | pages | chromium | jsdom |\n|---|---|---|---|');
const total = Object.fromEntries(engines.map(([name]) => [name, tally()]));
for (const [row, byEngine] of [...rows].sort(([a], [b]) => a.localeCompare(b))) {
  for (const [name] of engines) for (const key of Object.keys(total[name]!) as (keyof Tally)[]) total[name]![key] += byEngine[name]![key];
  console.log(`| ${row} | ${pages.filter((p) => p.row === row).length} | ${cell(byEngine.chromium!)} | ${cell(byEngine.jsdom!)} |`);
}
console.log(`| all | ${pages.length} | ${cell(total.chromium!)} | ${cell(total.jsdom!)} |`);
