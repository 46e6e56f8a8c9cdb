/**
 * Pages of one scan side by side in the same browser (browser.ts). Each page lives in a window of
 * its own: a key a check presses on one page and the page leaves unhandled goes to the browser's
 * own shortcuts, and Escape there means "stop loading" for the window's active tab. With the
 * pages as tabs of one window, the keyboard-trap check's Escape on one page stopped another
 * page's load after its document had committed (an empty, "complete" document; about one corpus
 * run in ten timed out that way).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type Browser, type PausedRequest } from '../../../src/domain/scan/chromium/browser.js';
import { CHROMIUM_FLAGS } from '../../../src/domain/scan/chromium/engine.js';
import { processUid, sandboxFor } from '../../../src/domain/scan/chromium/sandbox.js';

/** The engine's flags, with the sandbox as the engine would choose it for this process. */
const FLAGS = [...CHROMIUM_FLAGS, ...sandboxFor(processUid()).flags];
import { quiet } from '../../../src/domain/scan/chromium/probes.js';
import { pageCall } from '../../../src/domain/scan/checks/page-functions.js';
import { requireChromium } from '../../helpers/chromium.js';

/** A 1×1 transparent PNG. */
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');
const ORIGIN = 'http://pages.test';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser({ executablePath: requireChromium(), args: FLAGS, timeoutMs: 30_000 });
});
afterAll(async () => {
  await browser?.close();
});

describe('pages checked side by side', () => {
  it("are not stopped loading by the Escape another page's check presses", async () => {
    let imageAsked!: () => void;
    const imagePaused = new Promise<void>((resolve) => (imageAsked = resolve));
    let held: PausedRequest | null = null;
    const context = await browser.newContext({
      viewport: { width: 800, height: 600 },
      userAgent: 'pactum-test',
      initScript: '',
      async onRequest(request) {
        const path = new URL(request.url).pathname;
        if (path === '/image.png') {
          held = request;
          imageAsked();
          return;
        }
        const body = path === '/loading.html' ? '<!doctype html><title>loading</title><img src="/image.png" alt="">' : '<!doctype html><title>keys</title><button>Press</button>';
        await request.fulfill({ status: 200, headers: { 'content-type': 'text/html' }, body });
      },
    });
    try {
      const pressing = await context.newPage();
      await pressing.goto(`${ORIGIN}/keys.html`);
      // Opened last, so that in a shared window it would be the active tab.
      const loading = await context.newPage();
      const loaded = loading.goto(`${ORIGIN}/loading.html`);
      loaded.catch(() => undefined); // awaited below; closing the context in `finally` must not leave it unhandled
      await imagePaused;
      await pressing.evaluate('document.querySelector("button").focus()');
      await pressing.press('Escape');
      await pressing.press('Escape');
      // The unhandled key reaches the browser's shortcuts after the page answered it; a round trip
      // through both pages and the browser lets that happen before the image is answered.
      expect(await pressing.evaluate('document.title')).toBe('keys');
      // Parsed, and still waiting for its image (a stopped load reads "complete").
      expect(await loading.evaluate('document.readyState')).toBe('interactive');
      await held!.fulfill({ status: 200, headers: { 'content-type': 'image/png' }, body: PIXEL });
      await loaded;
      expect(await loading.evaluate('[document.title, document.images[0].complete, document.images[0].naturalWidth]')).toEqual(['loading', true, 1]);
    } finally {
      await context.close();
    }
  });
});

describe('a page reused for the next check', () => {
  it("drops the heaps of the documents it showed before (quiet collects the renderer's garbage)", async () => {
    const precise = await launchBrowser({ executablePath: requireChromium(), args: [...FLAGS, '--enable-precise-memory-info'], timeoutMs: 30_000 });
    try {
      const context = await precise.newContext({
        viewport: { width: 800, height: 600 },
        userAgent: 'pactum-test',
        initScript: '',
        async onRequest(request) {
          // The first document keeps ~60 MB of JavaScript objects alive while it is shown; the second keeps nothing.
          const body = request.url.endsWith('/big.html') ? '<!doctype html><title>big</title><script>window.kept = Array.from({ length: 2e6 }, (_, i) => ({ i }))</script>' : '<!doctype html><title>small</title>';
          await request.fulfill({ status: 200, headers: { 'content-type': 'text/html' }, body });
        },
      });
      const page = await context.newPage();
      const heap = () => page.evaluate<number>('performance.memory.usedJSHeapSize');
      // On a busy machine the renderer may collect on its own between the two documents; then
      // there is nothing to show, and the pair is loaded again (a few times at most).
      let before = 0;
      for (let attempt = 0; attempt < 4 && before <= 30e6; attempt++) {
        await page.goto(`${ORIGIN}/big.html`);
        await page.goto(`${ORIGIN}/small.html`);
        before = await heap();
      }
      await page.evaluate(pageCall(quiet));
      const after = await heap();
      // The first document's objects are garbage, still in the heap until a collection.
      expect(before).toBeGreaterThan(30e6);
      expect(after).toBeLessThan(before / 2);
      await context.close();
    } finally {
      await precise.close();
    }
  });
});
