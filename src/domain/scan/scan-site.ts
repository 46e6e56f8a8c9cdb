/**
 * Scanning a site: one page, or a breadth-first same-origin crawl seeded with the site URL and its
 * sitemap, with a page budget, a bound on pages in flight, and progress events as pages finish.
 */
import { createHash } from 'node:crypto';
import { canonicalPageKey, crawlableUrl, normalizePageUrl } from './crawl-url.js';
import type { CheckSession, ScanEngine } from './engine.js';
import { fetchPage, fetchText, ScanFetchError, type FetchedPage, type FetchOptions } from './fetch-page.js';
import { parseSitemap } from './sitemap.js';
import { buildReport, tallyPage, type PageTally } from './summary.js';
import type { Issue, PageReport, Report, StyleStats, WcagStandard } from './types.js';
import type { ElementShot, ShotOptions } from './types.js';

export type ScanMode = 'single' | 'site';

export interface ScanInput {
  siteUrl: string;
  mode: ScanMode;
  maxPages: number;
  concurrency: number;
  standard: WcagStandard;
  /** Check exactly these pages (of siteUrl's origin), from the first, following no link: a rescan of known pages. */
  pages?: readonly string[];
}

export interface ScanDeps {
  fetch: FetchOptions;
  engine: ScanEngine;
  /** Gather brand-scoring style statistics of each page. */
  styles?: boolean;
  /** Screenshots of failing elements (Chromium): each page's share of the scan's budget. */
  screenshots?: ShotBudget;
  /** Whose scan it is (an org): owners take turns for the engine's page slots. */
  owner?: string;
  signal?: AbortSignal;
}

export interface ScanEvents {
  /** How many pages the scan will cover so far (bounded by maxPages); only ever grows. */
  onPagesFound: (total: number) => void | Promise<void>;
  /** Once per page, as it finishes; `error` is set when the page could not be scanned; `style` feeds brand scoring. */
  onPageDone: (page: PageReport & { issues: Issue[]; style?: StyleStats; screenshots?: ElementShot[] }) => void | Promise<void>;
}

/** A scan's screenshot budget: at most `perPage` a page, `perScan` in all, `perRule` of one rule's failures (0: no such limit). */
export interface ShotBudget extends Omit<ShotOptions, 'max' | 'claim'> {
  perPage: number;
  perScan: number;
  perRule?: number;
}

/** The claim of a scan's pages on its per-rule share of screenshots: a shot is wanted while one of its element's rules has shots left. */
function ruleShare(perRule: number): ShotOptions['claim'] {
  if (perRule <= 0) return undefined;
  const taken = new Map<string, number>();
  return (codes) => {
    const open = codes.filter((code) => (taken.get(code) ?? 0) < perRule);
    for (const code of open) taken.set(code, (taken.get(code) ?? 0) + 1);
    return open.length > 0;
  };
}

/** Nested sitemaps read from a sitemap index; enough for real sites, bounded for hostile ones. */
const MAX_NESTED_SITEMAPS = 20;

/**
 * The pages a crawl will visit, in visiting order, and every page already known, by canonical key
 * (crawl-url.ts), so `/`, `/index.html` and `/?utm_source=x` are one page; and the content hashes
 * seen, so a page reached under two addresses that serve the same bytes is scanned once.
 */
class Frontier {
  readonly planned: string[] = [];
  private readonly known = new Set<string>();
  private readonly hashes = new Set<string>();
  /** Planned pages that turned out to be another page's duplicate: they free their place in the budget. */
  duplicates = 0;

  constructor(private readonly limit: number) {}

  /** Pages the scan will report. */
  get total(): number {
    return this.planned.length - this.duplicates;
  }

  has(url: string): boolean {
    return this.known.has(canonicalPageKey(url) ?? url);
  }

  /** Remembers a URL without planning a visit (the site URL as typed, a redirect's target). */
  remember(url: string): void {
    this.known.add(canonicalPageKey(url) ?? url);
  }

  /** Plans a visit unless the page is known or the budget is spent. */
  offer(url: string): void {
    const key = canonicalPageKey(url) ?? url;
    if (this.known.has(key) || this.total >= this.limit) return;
    this.known.add(key);
    this.planned.push(url);
  }

  /** False when the same content was seen already (the caller drops the page as a duplicate). */
  firstContent(html: string): boolean {
    const hash = createHash('sha256').update(html).digest('base64');
    if (this.hashes.has(hash)) return false;
    this.hashes.add(hash);
    return true;
  }
}

interface PageOutcome {
  page: (PageReport & { issues: Issue[]; style?: StyleStats; screenshots?: ElementShot[] }) | null;
  links: string[];
}

/**
 * Throws ScanFetchError when the site URL itself cannot be fetched; any later page that fails is
 * reported with its `error` instead. Rejects with the signal's reason when aborted.
 */
export async function scanSite(input: ScanInput, deps: ScanDeps, events: ScanEvents): Promise<Report> {
  const signal = combine(deps.signal, deps.fetch.signal);
  const fetchOptions: FetchOptions = { ...deps.fetch, signal };
  signal?.throwIfAborted();

  const first = await fetchPage(input.pages?.[0] ?? input.siteUrl, fetchOptions);
  const firstUrl = normalizePageUrl(first.url)!;
  const origin = new URL(firstUrl).origin;
  const frontier = new Frontier(Math.max(1, Math.floor(input.maxPages)));
  frontier.offer(firstUrl);
  if (!input.pages) frontier.remember(normalizePageUrl(input.siteUrl) ?? firstUrl); // links back to the URL as typed are not a second page
  if (input.pages) {
    for (const page of input.pages) {
      const url = crawlableUrl(page, origin);
      if (url) frontier.offer(url);
    }
  } else if (input.mode === 'site') {
    for (const url of await sitemapPages(origin, fetchOptions)) frontier.offer(url);
  }

  const emit = serialized(signal);
  let reportedTotal = 0;
  const reportTotal = async () => {
    if (frontier.total === reportedTotal) return;
    reportedTotal = frontier.total;
    await emit(() => events.onPagesFound(reportedTotal));
  };
  await reportTotal();

  const session = deps.engine.openSession(fetchOptions, { owner: deps.owner });
  // Pages in flight reserve their share of the scan's screenshots and give back what they did not use.
  let shotsLeft = deps.engine.name === 'chromium' ? (deps.screenshots?.perScan ?? 0) : 0;
  const claim = ruleShare(deps.screenshots?.perRule ?? 0);
  const reserveShots = (): ShotOptions | undefined => {
    const budget = deps.screenshots;
    const max = budget ? Math.min(budget.perPage, shotsLeft) : 0;
    if (!budget || max <= 0) return undefined;
    shotsLeft -= max;
    return { max, maxWidth: budget.maxWidth, format: budget.format, quality: budget.quality, ...(claim ? { claim } : {}) };
  };
  const pages: PageReport[] = [];
  const tallies: PageTally[] = [];
  const visit = async (index: number) => {
    const url = frontier.planned[index]!;
    const shots = reserveShots();
    const outcome = await scanPage(url, index === 0 ? first : null, input.standard, origin, frontier, session, fetchOptions, deps.styles ?? false, shots);
    if (shots) shotsLeft += shots.max - (outcome.page?.screenshots?.length ?? 0);
    signal?.throwIfAborted();
    if (input.mode === 'site' && !input.pages) {
      for (const link of outcome.links) {
        const next = crawlableUrl(link, origin);
        if (next) frontier.offer(next);
      }
    }
    if (!outcome.page) frontier.duplicates++;
    await reportTotal();
    if (!outcome.page) return;
    const page = outcome.page;
    // The report kept for the summary holds no image bytes: those go to the store with the page.
    const { screenshots: _shots, ...kept } = page;
    pages[index] = kept;
    tallies[index] = tallyPage(page);
    await emit(() => events.onPageDone(page));
  };

  try {
    await runBounded(() => frontier.planned.length, Math.max(1, Math.floor(input.concurrency)), visit, signal);
  } finally {
    await session.close();
  }
  const done = pages.flatMap((page, index) => (page ? [index] : []));
  return buildReport(done.map((i) => pages[i]!), deps.engine.name, done.map((i) => tallies[i]!));
}

/** Fetches and checks one page; a failure becomes the page's `error` unless the scan is aborted. */
async function scanPage(
  url: string,
  prefetched: FetchedPage | null,
  standard: WcagStandard,
  origin: string,
  frontier: Frontier,
  session: CheckSession,
  fetchOptions: FetchOptions,
  styles: boolean,
  screenshots?: ShotOptions,
): Promise<PageOutcome> {
  try {
    const fetched = prefetched ?? (await fetchPage(url, fetchOptions));
    const landed = normalizePageUrl(fetched.url)!;
    if (landed !== url) {
      if (new URL(landed).origin !== origin) return failed(url, `${url} redirects off the site, to ${fetched.url}; it was not scanned.`);
      // Another address of a page this scan covers: the same page, scanned once.
      if (frontier.has(landed)) return { page: null, links: [] };
      frontier.remember(landed);
    }
    if (!frontier.firstContent(fetched.html)) return { page: null, links: [] };
    const checked = await session.check({ url: fetched.url, html: fetched.html, standard, styles, ...(screenshots ? { screenshots } : {}) }, fetchOptions.signal);
    const page = {
      url: checked.url, title: checked.title, issueCount: checked.issues.length, notEvaluated: checked.notEvaluated, issues: checked.issues,
      ...(checked.style ? { style: checked.style } : {}),
      ...(checked.screenshots?.length ? { screenshots: checked.screenshots } : {}),
    };
    return { page, links: checked.links };
  } catch (err) {
    if (fetchOptions.signal?.aborted) throw err;
    const message = err instanceof Error ? err.message : String(err);
    return failed(url, err instanceof ScanFetchError ? message : `${url} could not be checked: ${message}`);
  }
}

function failed(url: string, error: string): PageOutcome {
  return { page: { url, title: null, issueCount: 0, error, notEvaluated: [], issues: [] }, links: [] };
}

/** Page URLs of <origin>/sitemap.xml, following a sitemap index one level; a missing sitemap is no error. */
async function sitemapPages(origin: string, fetchOptions: FetchOptions): Promise<string[]> {
  const root = await readSitemap(`${origin}/sitemap.xml`, fetchOptions);
  if (!root) return [];
  const pageUrls = (locations: string[]) => locations.map((loc) => crawlableUrl(loc, origin)).filter((u): u is string => u !== null);
  if (root.kind === 'urlset') return pageUrls(root.locations);
  const nested = root.locations.filter((loc) => normalizePageUrl(loc) && new URL(loc).origin === origin).slice(0, MAX_NESTED_SITEMAPS);
  const urls: string[] = [];
  for (const location of nested) {
    const sitemap = await readSitemap(location, fetchOptions);
    if (sitemap?.kind === 'urlset') urls.push(...pageUrls(sitemap.locations));
  }
  return urls;
}

async function readSitemap(url: string, fetchOptions: FetchOptions) {
  try {
    return parseSitemap((await fetchText(url, fetchOptions)).text);
  } catch (err) {
    if (fetchOptions.signal?.aborted) throw err;
    return null;
  }
}

/**
 * Runs task(0), task(1), ... with at most `limit` in flight, while `count()` (which may grow as
 * tasks run) says there is more. Stops starting tasks on the first failure or on abort.
 */
function runBounded(count: () => number, limit: number, task: (index: number) => Promise<void>, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let started = 0;
    let running = 0;
    let stopped = false;
    const stop = (err: unknown) => {
      if (stopped) return;
      stopped = true;
      signal?.removeEventListener('abort', onAbort);
      reject(err);
    };
    const onAbort = () => stop(signal!.reason);
    const pump = () => {
      if (stopped) return;
      while (running < limit && started < count()) {
        const index = started++;
        running++;
        task(index).then(() => { running--; pump(); }, stop);
      }
      if (running === 0 && started >= count()) {
        stopped = true;
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    else pump();
  });
}

/**
 * Runs callbacks one after another, so listeners never see events overlap or reorder. After a
 * callback fails (or the scan is aborted) no further callback runs: the scan is over for listeners.
 */
function serialized(signal?: AbortSignal): (fn: () => void | Promise<void>) => Promise<void> {
  let tail: Promise<void> = Promise.resolve();
  let failure: { error: unknown } | null = null;
  return (fn) => {
    const next = tail
      .then(() => {
        if (failure) throw failure.error;
        signal?.throwIfAborted();
        return fn();
      })
      .catch((error: unknown) => {
        failure ??= { error };
        throw error;
      });
    tail = next.catch(() => undefined);
    return next;
  };
}

function combine(a?: AbortSignal, b?: AbortSignal): AbortSignal | undefined {
  if (a && b && a !== b) return AbortSignal.any([a, b]);
  return a ?? b;
}
