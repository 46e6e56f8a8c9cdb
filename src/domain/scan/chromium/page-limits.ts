/**
 * What a scanned page may start, and how much of the processor it may use (docs/security.md,
 * "Scanned pages"). A scan needs the page's document, its frames and their scripts; it needs no
 * worker of any kind, and every worker is a thread of its own: 200 workers that each spin took
 * both cores for the whole page deadline, and another org's page missed its own. So:
 *
 * - the browser (browser.ts) attaches every target paused and lets only pages and frames run;
 *   workers, shared workers, service workers and worklets that have a target are stopped before
 *   their first line (browser.ts, REFUSED_TARGETS), whatever realm the page starts them from;
 * - every document first runs REFUSAL_SCRIPT: the constructors and registrations throw at once.
 *   An audio worklet started from a frame gets no target of its own (Chromium shares worklet
 *   threads), so for worklets this is the block; for workers it spares the round trips of a page
 *   that starts them in a loop;
 * - the frames of a page share its renderer process (no site isolation: CHROMIUM_FLAGS), so a page
 *   spinning in its document and in every frame keeps one core busy, not one per site it frames;
 * - and the page's renderer process, all its threads, is under a CPU budget read from Chromium's
 *   own metrics (watchCpu): past it the page is closed and reported as stopped.
 */
import { CheckError } from '../engine.js';
import type { Page } from './browser.js';

/**
 * Run in every document before the page's own scripts: no workers, no service worker, no worklet
 * modules. The properties are locked (not writable, not configurable), and the original functions
 * are reachable from no realm: every document of the page runs this first (about:blank, srcdoc,
 * blob: and data: frames included, chromium-workers.test.ts), and the browser refuses what a
 * realm that escaped it would start.
 */
export const REFUSAL_SCRIPT = `(() => {
  const refused = (what) => new DOMException(what + ' is not available to pages during an accessibility scan', 'NotSupportedError');
  const lock = (target, name, value) => {
    try { Object.defineProperty(target, name, { value, writable: false, configurable: false }); } catch {}
  };
  for (const name of ['Worker', 'SharedWorker']) if (name in window) lock(window, name, function () { throw refused(name); });
  if (window.ServiceWorkerContainer) lock(ServiceWorkerContainer.prototype, 'register', function () { return Promise.reject(refused('A service worker')); });
  if (window.Worklet) lock(Worklet.prototype, 'addModule', function () { return Promise.reject(refused('A worklet')); });
})();`;

/** How often a page's CPU time is read while it is checked. */
const CPU_POLL_MS = 250;

export interface CpuWatch {
  /** Rejects (a CheckError, code 'cpu') once the page has used more than its budget; never resolves. */
  exceeded: Promise<never>;
  stop(): void;
}

/**
 * Watches the CPU time of `page`'s renderer (every thread of its process, and any out-of-process
 * frame's) from now on. Chromium answers the metrics call even while a script spins; a renderer
 * too busy to answer at all (one long layout) is left to the page's deadline. A navigation that
 * moves the page to a fresh process starts that process's count from zero, added to what the old
 * one had used.
 */
export function watchCpu(page: Page, seconds: number, stage: () => string): CpuWatch {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const exceeded = new Promise<never>((_resolve, reject) => {
    let last: number | null = null;
    let spent = 0;
    const poll = async () => {
      const now = await page.cpuSeconds().catch(() => null);
      if (stopped) return;
      if (now !== null) {
        if (last !== null) spent += now >= last ? now - last : now;
        last = now;
        if (spent > seconds) {
          reject(new CheckError('cpu', `The page was stopped: used more than ${seconds} s of CPU (SCAN_PAGE_CPU_SECONDS) while ${stage()}; its scripts kept the processor busy, and it was not checked.`));
          return;
        }
      }
      timer = setTimeout(() => void poll(), CPU_POLL_MS);
    };
    void poll();
  });
  // Raced against the check; when the check ends first nothing awaits this any more.
  exceeded.catch(() => undefined);
  return {
    exceeded,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
