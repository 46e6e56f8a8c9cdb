/**
 * The Chromium engine: axe-core and the checks beyond axe in headless Chromium (Debian's
 * /usr/bin/chromium, driven over the DevTools protocol by browser.ts; nothing is downloaded).
 *
 * One browser per process, started on first use and started again if it dies; a browser context
 * per scan (its own cookies and storage); pages reused within a scan; at most `maxPages` pages
 * checked at once across all scans (the number of cores by default); each page under a deadline.
 * The browser never touches the network itself: every request is intercepted and made through the
 * scan's address policy (subresources.ts), and anything that escapes interception (preconnects,
 * WebRTC) goes to a proxy that only counts and drops it.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer, type Server, type Socket } from 'node:net';
import { cpus } from 'node:os';
import { axeRunOptions, correctedAnswer, erroredRules, issuesOf, pageFactsOf, type AxeAnswer, type PageFacts } from '../axe-results.js';
import { captureElementShots } from './screenshots.js';
import { ShownDocuments } from './shown-documents.js';
import { checkFailed, checksFor, issueOfFinding, withoutDuplicates, type CheckId, type RawFinding } from '../checks/catalogue.js';
import { pageCall, surveyDom, type Survey } from '../checks/page-functions.js';
import { domFindings, SURVEY_LIMITS } from '../checks/dom-findings.js';
import { CheckError, type CheckSession, type PageToCheck, type ScanEngine, type SessionOptions } from '../engine.js';
import { FairSemaphore } from '../fair-queue.js';
import { PhaseClock, type ScanPhase } from '../phases.js';
import { FETCH_DEFAULTS, type FetchOptions } from '../fetch-page.js';
import { uniqueByCode } from '../not-evaluated.js';
import type { CheckedPage, Issue, NotEvaluated, StyleStats } from '../types.js';
import { LaunchError, launchBrowser, type Browser, type BrowserContext, type Page, type PausedRequest } from './browser.js';
import { processUid, sandboxFor, sandboxUnavailable, UNAVAILABLE_WARNING, UNSANDBOXED, type SandboxChoice } from './sandbox.js';
import { autoUpdateCheck, DESKTOP, keyboardChecks, layoutChecks, MEDIA_DECODE_MAX_BYTES, mediaChecks, motionCheck, playbackCheck, quietPage } from './browser-checks.js';
import { MOTION_RECORDER, TEXT_CHANGE_RECORDER } from './probes.js';
import { REFUSAL_SCRIPT, watchCpu } from './page-limits.js';
import { fetchSubresource, type Subresource } from './subresources.js';
import { destinationFacts, equivalentLinks, instantRefresh, MAX_REDIRECTS, type Destination, type OpenDestination } from './link-destinations.js';

/**
 * The flags the issue asks for; the switches a test browser is started with to behave the same on
 * every run (those Playwright passes on Linux, minus the popup-blocker exemption: a scan wants
 * popups blocked), and the features it switches off for the same reason (no HTTPS upgrades of
 * http pages, no paint holding, no calls home). Then audio that plays but is silent, WebRTC kept
 * off the network, and memory: no back/forward cache (a reused page would keep every document it
 * showed), the GPU process folded into the browser, low-end-device mode (smaller caches), the
 * network service inside the browser process (one process fewer: about 34 MB of PSS), and
 * renderers whose V8 young generation stays at 1 MB a semi-space (about 13 MB less over two
 * renderers; their pages are short-lived) and whose `gc()` the engine calls after each page
 * (probes.ts quiet: V8 otherwise keeps the garbage of every document a reused page showed, ~3 MB a
 * page, until its own limits; about 60-80 MB less over two renderers, for one full collection of
 * a small heap a page). Renderers are NOT shared (no
 * --renderer-process-limit): a page stuck in a script would stall every page in its process.
 * No site isolation (--disable-site-isolation-trials): a page's frames, whatever their site, run
 * in the page's own renderer, so a page whose every frame spins keeps one core busy rather than
 * one per site it frames, and its CPU budget counts them all (page-limits.ts; why this costs
 * nothing a scan protects: docs/decisions.md).
 * Whether Chromium's sandbox is on is decided per process, not here (sandbox.ts).
 */
export const CHROMIUM_FLAGS = [
  '--headless', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-field-trial-config', '--disable-background-timer-throttling', '--disable-backgrounding-occluded-windows',
  '--disable-renderer-backgrounding', '--disable-breakpad', '--disable-component-extensions-with-background-pages',
  '--no-default-browser-check', '--disable-default-apps', '--disable-dev-shm-usage', '--disable-extensions',
  '--allow-pre-commit-input', '--disable-hang-monitor', '--disable-ipc-flooding-protection', '--disable-prompt-on-repost',
  '--force-color-profile=srgb', '--metrics-recording-only', '--password-store=basic', '--use-mock-keychain',
  '--no-service-autorun', '--disable-search-engine-choice-screen', '--hide-scrollbars',
  '--blink-settings=primaryHoverType=2,availableHoverTypes=2,primaryPointerType=4,availablePointerTypes=4',
  `--disable-features=${[
    'AvoidUnnecessaryBeforeUnloadCheckSync', 'DestroyProfileOnBrowserClose', 'HttpsUpgrades', 'HttpsFirstBalancedModeAutoEnable',
    'LensOverlay', 'MediaRouter', 'PaintHolding', 'ThirdPartyStoragePartitioning', 'AvoidCorsURLLoaderRestartOnRedirect',
    'OptimizationHints', 'NetworkTimeServiceQuerying', 'AimEnabled', 'PreconnectToSearch',
    // Chromium 156 preloads its WebUI omnibox popup in every context: a renderer of its own (~30 MB).
    'WebUIOmniboxPopup', 'WebUIOmniboxAimPopup',
  ].join(',')}`,
  '--enable-features=NetworkServiceInProcess2,SkipListAccountsWithoutGaiaCookies',
  '--autoplay-policy=no-user-gesture-required', '--mute-audio',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--disable-back-forward-cache', '--in-process-gpu', '--enable-low-end-device-mode',
  '--disable-site-isolation-trials',
  '--js-flags=--max-semi-space-size=1 --expose-gc',
] as const;

export interface ChromiumEngineOptions {
  executablePath: string;
  /** A page still being checked after this long is stopped and reported as such. */
  pageTimeoutMs: number;
  /** Pages checked at once across all scans (their owners take turns for them); default: the number of cores. */
  maxPages?: number;
  /** Of those, the most one owner (an org) may hold, so that another's page starts at once; default: maxPages − 1, at least 1. */
  maxPagesPerOwner?: number;
  /** CPU seconds a page's renderer may use while it is checked; past it the page is stopped and reported. Default 15. */
  pageCpuSeconds?: number;
  /** Brand-scoring statistics of the markup as served (the jsdom pool computes them). */
  styleStats?(html: string, url: string, issues: Issue[], signal?: AbortSignal, owner?: string): Promise<StyleStats>;
  /** Subresources a page may load; past it, further requests fail. */
  maxSubresources?: number;
  /** Chromium's sandbox; default: on unless this process runs as root (sandbox.ts). */
  sandbox?: SandboxChoice;
  log?: { warn(obj: object, msg: string): void };
}

export interface ChromiumStats {
  launches: number;
  /** Whether the browser runs (or will run) with Chromium's sandbox. */
  sandboxed: boolean;
  /** Subresource requests refused by the address policy. */
  blocked: number;
  /** Connections that reached the drop-everything proxy (not intercepted). */
  escaped: number;
  /** Workers (and other targets that are not pages or frames) pages started, stopped before they ran. */
  refused: number;
  /** Pages stopped for using more than their CPU budget. */
  overBudget: number;
}

/** The page slots as they are now (tests, and what a bystander can expect). */
export interface PageSlots {
  readonly maxPerOwner: number;
  readonly queued: number;
  heldBy(owner: string): number;
  queuedFor(owner: string): number;
}

export interface ChromiumEngine extends ScanEngine {
  readonly name: 'chromium';
  stats(): ChromiumStats;
  readonly slots: PageSlots;
  /** The browser's process id, once started (tests kill it). */
  browserPid(): Promise<number | null>;
  /** The browser's product and version (Chrome/…), once it has started; null before. */
  version(): Promise<string | null>;
  /**
   * A self-contained HTML document printed as a PDF, in a context of its own that loads nothing
   * but the document (every other request fails) and runs no script; it takes one of `owner`'s
   * page slots, like a page being checked, and fails as 'busy' after maxWaitMs.
   */
  printPdf(html: string, options: { owner: string; maxWaitMs: number; signal?: AbortSignal }): Promise<Buffer>;
}

/**
 * axe-core's minified build, read as text by the first scan and run in every document of the
 * page. Read, not imported: importing axe-core would also run it in the server (+31 MB resident),
 * and the minified file is less than half of `axeCore.source` for every renderer to parse.
 */
let axeInit: Promise<string> | null = null;
const loadAxeInit = () =>
  (axeInit ??= readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8').then(
    (source) => `${REFUSAL_SCRIPT}\n${source}\n;Object.defineProperty(window, '__pactumAxe', { value: window.axe });\n${TEXT_CHANGE_RECORDER}\n${MOTION_RECORDER}`,
  ));
/** What a subresource may take: the page's own fetch limits. */
const SUBRESOURCE_TIMEOUT_MS = 10_000;
/**
 * What following the targets of a page's links named alike may take in all (their fetches, loads
 * and scripts): 5 s, or a sixth of the page's deadline when that is shorter, so that a slow target
 * never makes the page itself time out. A target not settled by then leaves its links for review.
 */
const followBudgetMs = (pageTimeoutMs: number) => Math.min(5_000, Math.floor(pageTimeoutMs / 6));
/** Targets of links named alike a session remembers (a site's pages share their menus). */
const DESTINATIONS_REMEMBERED = 256;
/** A page's CPU budget when none is given (SCAN_PAGE_CPU_SECONDS's default). */
export const PAGE_CPU_SECONDS = 15;

export function createChromiumEngine(options: ChromiumEngineOptions): ChromiumEngine {
  const maxPages = options.maxPages ?? Math.max(1, cpus().length);
  const slots = new FairSemaphore(maxPages, options.maxPagesPerOwner ?? Math.max(1, maxPages - 1));
  const cpuSeconds = options.pageCpuSeconds ?? PAGE_CPU_SECONDS;
  let sandbox = options.sandbox ?? sandboxFor(processUid());
  const stats: Omit<ChromiumStats, 'sandboxed'> = { launches: 0, blocked: 0, escaped: 0, refused: 0, overBudget: 0 };
  const maxSubresources = options.maxSubresources ?? 300;
  let current: { browser: Promise<Browser>; generation: number } | null = null;
  let generation = 0;
  let closed = false;
  let sink: Promise<{ server: Server; port: number }> | null = null;
  const sockets = new Set<Socket>();

  /** The proxy everything not intercepted is sent to: it counts the connection and closes it. */
  function dropProxy() {
    return (sink ??= new Promise((resolve, reject) => {
      const server = createServer((socket) => {
        stats.escaped++;
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.destroy();
      });
      server.unref();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port }));
    }));
  }

  async function browser(): Promise<{ browser: Browser; generation: number }> {
    if (closed) throw new CheckError('closed', 'The scan engine is shut down.');
    if (!current) {
      const mine = ++generation;
      const launching = (async () => {
        const { port } = await dropProxy();
        const launch = () => launchBrowser({
          executablePath: options.executablePath,
          args: [...CHROMIUM_FLAGS, ...sandbox.flags, `--proxy-server=http://127.0.0.1:${port}`, '--proxy-bypass-list=<-loopback>'],
          timeoutMs: 60_000,
        });
        const launched = await launch().catch((err: unknown) => {
          if (!sandbox.sandboxed || !(err instanceof LaunchError) || !sandboxUnavailable(err.output)) throw err;
          // Said once: the choice holds for the rest of the process.
          options.log?.warn({ executablePath: options.executablePath }, UNAVAILABLE_WARNING);
          sandbox = UNSANDBOXED;
          return launch();
        });
        stats.launches++;
        launched.onDisconnected(() => {
          if (current?.generation === mine) current = null;
        });
        return launched;
      })();
      current = { browser: launching, generation: mine };
      launching.catch(() => { if (current?.generation === mine) current = null; });
    }
    const { browser: pending, generation: gen } = current;
    try {
      return { browser: await pending, generation: gen };
    } catch (err) {
      throw new CheckError('failed', `Chromium (${options.executablePath}) could not be started: ${firstLine(err)}`);
    }
  }

  function openSession(fetch: FetchOptions, { owner = '', maxWaitMs, phases }: SessionOptions = {}): CheckSession {
    const policy = { allowPrivateNetworks: fetch.allowPrivateNetworks, allowedAddresses: fetch.allowedAddresses };
    const userAgent = fetch.userAgent ?? FETCH_DEFAULTS.userAgent;
    const maxBytes = fetch.maxBytes ?? FETCH_DEFAULTS.maxBytes;
    /** Documents the session is about to show, by URL: the crawler fetched them already. */
    const documents = new ShownDocuments();
    /**
     * Audio and video each page's document loaded, by URL, kept while the page is checked: the
     * media checks read the file again to decode its sound, and the player may ask for it again
     * (ranges, seeking); both get the response already fetched instead of a second download.
     */
    const mediaResponses = new WeakMap<Page, Map<string, Subresource>>();
    /** Targets of links named alike, as followed (link-destinations.ts), by URL. */
    const destinations = new Map<string, Promise<Destination | null>>();
    let ctx: { context: Promise<BrowserContext>; generation: number } | null = null;
    let idle: Page[] = [];
    let sessionClosed = false;

    async function onRequest(request: PausedRequest): Promise<void> {
      const { url, method } = request;
      if (request.isPageDocument) {
        const html = documents.htmlAt(url);
        // The page as the crawler fetched it; a navigation the page starts itself (a script, a meta refresh) is not followed.
        // Aborted, not blocked: a blocked navigation replaces the document with an error page, an aborted one leaves it on screen.
        return html === undefined ? request.fail('Aborted') : request.fulfill({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: html });
      }
      if (method !== 'GET' && method !== 'HEAD') return request.fail('BlockedByClient'); // a scan only reads
      if (request.page.countRequest() > maxSubresources) return request.fail('BlockedByClient');
      const media = mediaResponses.get(request.page);
      let response = media?.get(url);
      if (!response) {
        const outcome = await fetchSubresource(url, request.headers, { policy, userAgent, timeoutMs: SUBRESOURCE_TIMEOUT_MS, maxBytes, signal: fetch.signal });
        if (!outcome.ok) {
          if (outcome.blocked) stats.blocked++;
          return request.fail(outcome.blocked ? 'BlockedByClient' : 'Failed').catch(() => undefined);
        }
        response = outcome.response;
        if (media && isMediaFile(response)) media.set(url, response);
      }
      const { status, headers, body } = response;
      await request.fulfill({ status, headers, body: method === 'HEAD' ? Buffer.alloc(0) : body }).catch(() => undefined);
    }

    /**
     * A target of links named alike, opened as a person following the link sees it: fetched through
     * the address policy (HTTP redirects followed, each hop checked), shown in a page of its own with
     * its scripts, an instant meta refresh followed; within `budgetMs`, else null.
     */
    async function followTarget(context_: BrowserContext, start: string, budgetMs: number): Promise<Destination | null> {
      let url = start;
      let page: Page | null = null;
      let abandoned = false;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<null>((resolve) => { timer = setTimeout(resolve, budgetMs, null); });
      const follow = async (): Promise<Destination | null> => {
        for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
          const outcome = await fetchSubresource(url, { accept: 'text/html' }, { policy, userAgent, timeoutMs: budgetMs, maxBytes, signal: fetch.signal });
          if (!outcome.ok) return null;
          const { status, headers, body } = outcome.response;
          if (status >= 300 && status < 400 && headers.location) {
            const next = new URL(headers.location, url);
            next.hash = '';
            url = next.href;
            continue;
          }
          if (status !== 200 || !/^\s*(text\/html|application\/xhtml\+xml)/i.test(headers['content-type'] ?? '')) return null;
          const shown = url;
          const release = documents.show(shown, body.toString('utf8'));
          try {
            if (!page) {
              const opened = await context_.newPage();
              // Past the deadline the finally below has run already: this page is closed here.
              if (abandoned) {
                await opened.close().catch(() => undefined);
                return null;
              }
              page = opened;
            }
            await page.goto(shown);
            const facts = await page.evaluate<{ refresh: string[]; text: string }>(pageCall(destinationFacts));
            const refresh = instantRefresh(facts.refresh, shown);
            if (refresh === null || refresh === shown) return { url: shown, text: facts.text };
            url = refresh;
          } finally {
            release();
          }
        }
        return null; // redirected too often
      };
      try {
        return await Promise.race([follow(), timedOut]);
      } catch {
        return null;
      } finally {
        abandoned = true;
        clearTimeout(timer);
        await (page as Page | null)?.close().catch(() => undefined);
      }
    }

    function openerFor(context_: BrowserContext): OpenDestination {
      const budgetMs = followBudgetMs(options.pageTimeoutMs);
      return (url) => {
        let known = destinations.get(url);
        if (!known) {
          if (destinations.size >= DESTINATIONS_REMEMBERED) destinations.delete(destinations.keys().next().value!);
          known = followTarget(context_, url, budgetMs);
          destinations.set(url, known);
        }
        return known;
      };
    }

    async function context(): Promise<BrowserContext> {
      const { browser: b, generation: gen } = await browser();
      if (ctx && ctx.generation === gen) return ctx.context;
      idle = [];
      const made = (async () => {
        // CSP bypassed, so that axe-core runs on pages that forbid inline scripts; downloads refused.
        return b.newContext({
          viewport: DESKTOP,
          userAgent: `${userAgent} Chromium`,
          initScript: await loadAxeInit(),
          onRequest: (request) => onRequest(request).catch(() => request.fail('Failed').catch(() => undefined)),
          onRefused: () => void stats.refused++,
        });
      })();
      ctx = { context: made, generation: gen };
      made.catch(() => { if (ctx?.context === made) ctx = null; });
      return made;
    }

    async function attempt(input: PageToCheck, signal: AbortSignal | undefined, lost: InFlight, context_: BrowserContext, clock: PhaseClock): Promise<CheckedPage> {
      lost.stage = 'opening a page';
      const page = idle.pop() ?? (await clock.time('open', () => newPage(context_)));
      lost.page = page;
      const hidden = documents.show(input.url, input.html, true);
      mediaResponses.set(page, new Map());
      const cpu = watchCpu(page, cpuSeconds, () => lost.stage);
      try {
        const checked = await Promise.race([cpu.exceeded, (async () => {
          lost.stage = 'loading';
          await clock.time('load', () => page.goto(input.url));
          const result = await inspect(page, input, lost, { open: openerFor(context_), budgetMs: followBudgetMs(options.pageTimeoutMs) }, clock);
          if (input.screenshots) {
            lost.stage = 'taking screenshots of failing elements';
            const shots = input.screenshots;
            result.screenshots = await clock.time('screenshots', () => captureElementShots(page, result.issues, shots));
          }
          return result;
        })()]);
        cpu.stop();
        lost.page = null;
        if (!sessionClosed) idle.push(page);
        else await page.close().catch(() => undefined);
        if (input.styles && options.styleStats) checked.style = await clock.time('styles', () => options.styleStats!(input.html, input.url, checked.issues, signal, owner));
        return checked;
      } catch (err) {
        if (err instanceof CheckError && err.code === 'cpu') stats.overBudget++;
        throw err;
      } finally {
        cpu.stop();
        hidden();
        mediaResponses.delete(page);
      }
    }

    /** A page slot, in turn with other owners; with maxWaitMs, a wait that long fails as busy. */
    async function slot(signal: AbortSignal | undefined): Promise<void> {
      if (maxWaitMs === undefined) return slots.acquire(owner, signal);
      const waited = AbortSignal.timeout(maxWaitMs);
      try {
        await slots.acquire(owner, signal ? AbortSignal.any([signal, waited]) : waited);
      } catch (err) {
        if (!waited.aborted || signal?.aborted) throw err;
        throw new CheckError('busy', `Every browser page slot stayed busy for ${Math.round(maxWaitMs / 1000)} s (other pages being checked), so this page was not checked.`);
      }
    }

    async function check(input: PageToCheck, signal?: AbortSignal): Promise<CheckedPage> {
      if (sessionClosed) throw new CheckError('closed', 'The scan session is closed.');
      // The page's phases, handed over once it is done (one past its deadline: what it reached by then).
      const clock = new PhaseClock(phases);
      try {
        await clock.time('slot', () => slot(signal));
        return await checkInSlot(input, signal, clock);
      } finally {
        clock.flush();
      }
    }

    async function checkInSlot(input: PageToCheck, signal: AbortSignal | undefined, clock: PhaseClock): Promise<CheckedPage> {
      try {
        for (let tries = 1; ; tries++) {
          const started = generation;
          const lost: InFlight = { page: null, stage: 'waiting' };
          try {
            // Starting the browser (its own launch timeout) is not the page's time: the deadline is the page's.
            const context_ = await clock.time('open', () => context());
            return await deadline(attempt(input, signal, lost, context_, clock), options.pageTimeoutMs, signal, () => lost.stage, () => {
              // A page past its deadline is closed (its renderer may be stuck in a script): never reused.
              void lost.page?.close();
            });
          } catch (err) {
            if (lost.page) void lost.page.close();
            if (err instanceof CheckError || signal?.aborted) throw err;
            const browserDied = !current || current.generation !== started || !(await current.browser.catch(() => null))?.isConnected();
            if (browserDied && tries < 2) {
              options.log?.warn({ url: input.url }, 'Chromium died while checking a page; restarting it and checking the page again');
              continue;
            }
            if (browserDied) throw new CheckError('crashed', `The browser died twice while checking ${input.url}; the page was not checked.`);
            throw new CheckError('failed', `${input.url} could not be checked in Chromium: ${firstLine(err)}`);
          }
        }
      } finally {
        slots.release(owner);
      }
    }

    return {
      check,
      async close() {
        sessionClosed = true;
        const mine = ctx;
        ctx = null;
        idle = [];
        const context_ = await mine?.context.catch(() => null);
        await context_?.close().catch(() => undefined);
      },
    };
  }

  return {
    name: 'chromium',
    openSession,
    stats: () => ({ ...stats, sandboxed: sandbox.sandboxed }),
    slots,
    async browserPid() {
      if (!current) return null;
      const b = await current.browser.catch(() => null);
      return b?.pid ?? null;
    },
    async version() {
      if (!current) return null;
      const b = await current.browser.catch(() => null);
      return b?.version ?? null;
    },
    async printPdf(html, { owner, maxWaitMs, signal }) {
      const waited = AbortSignal.timeout(maxWaitMs);
      try {
        await slots.acquire(owner, signal ? AbortSignal.any([signal, waited]) : waited);
      } catch (err) {
        if (!waited.aborted || signal?.aborted) throw err;
        throw new CheckError('busy', `Every browser page slot stayed busy for ${Math.round(maxWaitMs / 1000)} s, so the document was not printed.`);
      }
      let context_: BrowserContext | null = null;
      try {
        const { browser: b } = await browser();
        const address = 'https://pactum.invalid/document';
        context_ = await b.newContext({
          viewport: DESKTOP,
          userAgent: `${FETCH_DEFAULTS.userAgent} Chromium`,
          // Scripts off before the document's first line: it has none, and none may run.
          initScript: '',
          onRequest: (request) => (request.isPageDocument && request.url === address
            ? request.fulfill({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: html })
            : request.fail('BlockedByClient')).catch(() => undefined),
        });
        const page = await context_.newPage();
        await page.disableScripts();
        return await deadline((async () => {
          await page.goto(address);
          return page.printToPdf();
        })(), options.pageTimeoutMs, signal, () => 'printing', () => void page.close());
      } finally {
        await context_?.close().catch(() => undefined);
        slots.release(owner);
      }
    },
    async close() {
      closed = true;
      const b = await current?.browser.catch(() => null);
      current = null;
      await b?.close().catch(() => undefined);
      const proxy = await sink?.catch(() => null);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => (proxy ? proxy.server.close(() => resolve()) : resolve()));
    },
  };
}

/** A whole audio or video file, small enough for the media checks to decode. */
function isMediaFile(response: Subresource): boolean {
  return response.status === 200 && /^(audio|video)\//i.test(response.headers['content-type'] ?? '') && response.body.length <= MEDIA_DECODE_MAX_BYTES;
}

/** A page of the scan's context; its dialogs are dismissed (alert() must not stall the check). */
const newPage = (context: BrowserContext): Promise<Page> => context.newPage();

/** A page being checked, and where it is: what a deadline closes and what its message names. */
interface InFlight { page: Page | null; stage: string }

/** axe, the DOM survey and the checks beyond axe, on a loaded page. */
async function inspect(page: Page, input: PageToCheck, progress: InFlight, targets: { open: OpenDestination; budgetMs: number }, clock: PhaseClock): Promise<CheckedPage> {
  progress.stage = 'running axe-core';
  const options = axeRunOptions(input.standard, 'browser');
  // Only what the report uses crosses CDP: axe's passes and inapplicable lists are most of its answer.
  const [answer, facts] = await clock.time('axe', async () => [
    await page.evaluate<AxeAnswer>(`window.__pactumAxe.run(document, ${JSON.stringify(options)}).then((r) => ({ violations: r.violations, incomplete: r.incomplete }))`),
    await page.evaluate<PageFacts>(pageCall(pageFactsOf)),
  ] as const);
  const results = correctedAnswer(answer, facts, 'browser');
  const axeIssues = [...issuesOf(results.violations, 'error'), ...issuesOf(results.incomplete, 'warning')];
  const notEvaluated: NotEvaluated[] = [...results.notEvaluated, ...erroredRules([...results.violations, ...results.incomplete], 'check failed')];
  progress.stage = 'surveying the DOM';
  const survey = await clock.time('survey', () => page.evaluate<Survey>(pageCall(surveyDom, SURVEY_LIMITS)));
  const dom = domFindings(survey);
  notEvaluated.push(...dom.failures);
  const wanted = new Set<CheckId>(checksFor(input.standard).map((c) => c.id));
  let findings: RawFinding[] = dom.findings.filter((f) => wanted.has(f.check));
  if (wanted.has('pactum-link-purpose') && survey.linkGroups.length > 0) {
    progress.stage = 'following links named alike';
    // Links named alike that lead to one resource or equivalent ones are not reported; what is not settled within the budget stays for review.
    const same = await clock.time('check:link-destinations', () => equivalentLinks(survey.linkGroups, input.url, targets.open, targets.budgetMs)).catch(() => new Set<string>());
    findings = findings.filter((f) => f.check !== 'pactum-link-purpose' || !same.has(f.selector));
  }
  const run = async (phase: ScanPhase, ids: CheckId[], fn: () => Promise<RawFinding[]>) => {
    if (!ids.some((id) => wanted.has(id))) return;
    try {
      findings.push(...(await clock.time(phase, fn)).filter((f) => wanted.has(f.check)));
    } catch (err) {
      for (const id of ids) if (wanted.has(id)) notEvaluated.push(checkFailed(id, err));
    }
  };
  progress.stage = 'checking playback';
  await run('check:playback', ['pactum-autoplay-audio'], () => playbackCheck(page, clock));
  progress.stage = 'looking at its audio and video';
  await run('check:media', ['pactum-audio-alternative', 'pactum-video-alternative', 'pactum-video-only-alternative'], () => mediaChecks(page));
  progress.stage = 'watching its text for changes';
  await run('check:auto-update', ['pactum-auto-update'], () => autoUpdateCheck(page, clock));
  progress.stage = 'tabbing through it';
  await run('check:keyboard', ['pactum-keyboard-trap', 'pactum-focus-visible'], () => keyboardChecks(page, wanted));
  progress.stage = 'laying it out at other sizes';
  await run('check:layout', ['pactum-reflow', 'pactum-orientation'], () => layoutChecks(page, wanted));
  progress.stage = 'moving the device';
  await run('check:motion', ['pactum-device-motion', 'pactum-motion-disable'], () => motionCheck(page, wanted));
  await clock.time('quiet', () => quietPage(page)).catch(() => undefined);
  return {
    url: input.url,
    title: survey.title,
    issues: [...axeIssues, ...withoutDuplicates(axeIssues, findings.map(issueOfFinding))],
    notEvaluated: uniqueByCode(notEvaluated),
    links: survey.links,
  };
}

/** Runs `work` under a deadline; past it `onTimeout` runs and the check fails as timed out. */
function deadline<T>(work: Promise<T>, ms: number, signal: AbortSignal | undefined, stage: () => string, onTimeout: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      onTimeout();
      reject(new CheckError('timeout', `The page did not finish loading and being checked within ${Math.round(ms / 1000)} s (SCAN_PAGE_TIMEOUT_SECONDS): a script that never ends, a resource that never arrives, or a page too large; it was stopped while ${stage()} and not checked.`));
    }, ms);
    const onAbort = () => { clearTimeout(timer); reject(signal!.reason); };
    signal?.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => { clearTimeout(timer); signal?.removeEventListener('abort', onAbort); resolve(value); },
      (err: unknown) => { clearTimeout(timer); signal?.removeEventListener('abort', onAbort); reject(err); },
    );
  });
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}
