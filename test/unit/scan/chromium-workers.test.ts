/**
 * Scanned pages cannot take the machine (page-limits.ts): a page that starts 200 spinning Web
 * Workers, one that tries every other way to run code off its thread (shared and service workers,
 * audio worklets, from fresh realms and from frames of its own site and of another), and pages
 * that spin in their own thread or in their frames. The workers never run, a spinning page is
 * stopped once it has used its CPU budget and reported so, and another org's page checked beside
 * any of them is checked, with its issues.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type PausedRequest } from '../../../src/domain/scan/chromium/browser.js';
import { CHROMIUM_FLAGS, createChromiumEngine, type ChromiumEngine } from '../../../src/domain/scan/chromium/engine.js';
import { processUid, sandboxFor } from '../../../src/domain/scan/chromium/sandbox.js';
import { CheckError } from '../../../src/domain/scan/engine.js';
import { fetchPage, type FetchOptions } from '../../../src/domain/scan/fetch-page.js';
import { scanSite } from '../../../src/domain/scan/scan-site.js';
import { requireChromium } from '../../helpers/chromium.js';
import { startHostileSite, type HostileSite } from '../../helpers/hostile-site.js';

/** The pages load from 127.0.0.1 and 127.0.0.2. */
const POLICY: FetchOptions = { allowPrivateNetworks: true };
/** What a page's title says when nothing it started ran. */
const ranOf = (title: string | null) => (title?.startsWith('ran: ') ? title.slice(5).split(' ') : []);

let site: HostileSite;
let engine: ChromiumEngine;

beforeAll(async () => {
  site = await startHostileSite();
  // Two page slots, one per org at most; a budget well under the deadline, so that a page stopped
  // for its CPU is told apart from one that ran out of time.
  engine = createChromiumEngine({ executablePath: requireChromium(), maxPages: 2, pageTimeoutMs: 30_000, pageCpuSeconds: 3 });
}, 60_000);

afterAll(async () => {
  await engine?.close();
  await site?.close();
});

async function checkAs(owner: string, path: string) {
  const fetched = await fetchPage(site.url(path), POLICY);
  const session = engine.openSession(POLICY, { owner });
  try {
    return await session.check({ url: fetched.url, html: fetched.html, standard: 'WCAG2AA' });
  } finally {
    await session.close();
  }
}

/** The hostile org's page and a bystander org's innocent page, checked at the same time. */
async function besideBystander(path: string) {
  const [hostile, bystander] = await Promise.allSettled([checkAs('org_hostile', path), checkAs('org_bystander', '/innocent.html')]);
  // The bystander's page is checked, with its issues: not a timeout, not starved.
  if (bystander.status === 'rejected') throw new Error(`the bystander's page was not checked: ${(bystander.reason as Error).message}`);
  expect(bystander.value.title).toBe('Innocent');
  expect(bystander.value.issues.map((i) => i.code)).toContain('image-alt');
  return hostile;
}

const codes = (page: { issues: { code: string }[] }) => page.issues.map((i) => i.code);

describe('a page that starts workers', () => {
  it("(the reported attack: 200 spinning Web Workers) is checked without them, and another org's page beside it too", async () => {
    const hostile = await besideBystander('/workers.html');
    if (hostile.status === 'rejected') throw hostile.reason;
    expect(hostile.value.title).toBe('Workers');
    expect(codes(hostile.value)).toContain('image-alt');
  }, 120_000);

  it('runs none of them however it starts them: workers, nested and shared workers, a service worker, an audio worklet, from fresh realms and from frames of any site', async () => {
    const hostile = await besideBystander('/escapes.html');
    if (hostile.status === 'rejected') throw hostile.reason;
    // Each probe that ran would have written itself into the title.
    expect(ranOf(hostile.value.title)).toEqual([]);
    expect(hostile.value.title).toBe('Escapes');
    expect(codes(hostile.value)).toContain('image-alt');
    // The frames of both sites did load and try.
    expect(site.requests).toEqual(expect.arrayContaining(['127.0.0.1/frame-probe.html?realm=same-site', '127.0.0.2/frame-probe.html?realm=other-site']));
  }, 120_000);
});

describe('a page that spins', () => {
  it("in its own thread is stopped once it has used its CPU budget, and reported so; another org's page beside it is checked", async () => {
    const before = engine.stats().overBudget;
    const hostile = await besideBystander('/spin.html');
    expect(hostile.status).toBe('rejected');
    const err = (hostile as PromiseRejectedResult).reason as CheckError;
    expect(err).toBeInstanceOf(CheckError);
    expect(err).toMatchObject({ code: 'cpu', message: expect.stringMatching(/stopped: used more than 3 s of CPU \(SCAN_PAGE_CPU_SECONDS\)/) });
    expect(engine.stats().overBudget - before).toBe(1);
  }, 120_000);

  it("in frames of its own site, another site, srcdoc and a sandbox is stopped the same way (they share its renderer and its budget)", async () => {
    const hostile = await besideBystander('/spin-frames.html');
    expect(hostile.status).toBe('rejected');
    expect((hostile as PromiseRejectedResult).reason).toMatchObject({ code: 'cpu' });
  }, 120_000);

  it("is reported in the scan as that page's error", async () => {
    const report = await scanSite(
      { siteUrl: site.url('/spin.html'), mode: 'single', maxPages: 1, concurrency: 1, standard: 'WCAG2AA' },
      { fetch: POLICY, engine },
      { onPagesFound: () => undefined, onPageDone: () => undefined },
    );
    expect(report.pages).toHaveLength(1);
    expect(report.pages[0]!.error).toMatch(/could not be checked: The page was stopped: used more than 3 s of CPU \(SCAN_PAGE_CPU_SECONDS\) while .*not checked\.$/);
    expect(report.summary.pagesFailed).toBe(1);
  }, 120_000);
});

describe('the page slots', () => {
  it('keep one slot for other orgs: an org holds at most all but one', () => {
    expect(engine.slots.maxPerOwner).toBe(1);
  });

  it('answer a check that may not wait (someone waits for it) as busy when no slot comes free in time', async () => {
    const oneSlot = createChromiumEngine({ executablePath: requireChromium(), maxPages: 1, pageTimeoutMs: 30_000, pageCpuSeconds: 3 });
    try {
      const spin = await fetchPage(site.url('/spin.html'), POLICY);
      const holder = oneSlot.openSession(POLICY, { owner: 'org_a' }).check({ url: spin.url, html: spin.html, standard: 'WCAG2AA' });
      holder.catch(() => undefined);
      const innocent = await fetchPage(site.url('/innocent.html'), POLICY);
      const waiter = oneSlot.openSession(POLICY, { owner: 'org_b', maxWaitMs: 300 });
      await expect(waiter.check({ url: innocent.url, html: innocent.html, standard: 'WCAG2AA' })).rejects.toMatchObject({ code: 'busy', message: expect.stringMatching(/page slot stayed busy/) });
      expect(oneSlot.slots.queued).toBe(0); // it left the queue
      await expect(holder).rejects.toMatchObject({ code: 'cpu' });
    } finally {
      await oneSlot.close();
    }
  }, 120_000);
});

describe('the browser itself, without the page-level refusal', () => {
  it('stops every worker a page starts, from any realm, before it runs, and keeps frames of any site in the page renderer', async () => {
    const browser = await launchBrowser({ executablePath: requireChromium(), args: [...CHROMIUM_FLAGS, ...sandboxFor(processUid()).flags], timeoutMs: 30_000 });
    const refused: string[] = [];
    try {
      const context = await browser.newContext({
        viewport: { width: 800, height: 600 },
        userAgent: 'pactum-test',
        // No refusal script: what holds here is the browser's own.
        initScript: '',
        onRefused: (type) => void refused.push(type),
        async onRequest(request: PausedRequest) {
          const res = await fetch(request.url).catch(() => null);
          if (!res) return request.fail('Failed');
          await request.fulfill({ status: res.status, headers: { 'content-type': res.headers.get('content-type') ?? 'text/html' }, body: Buffer.from(await res.arrayBuffer()) });
        },
      });
      const page = await context.newPage();
      await page.goto(site.url('/escapes.html'));
      // Long enough for whatever was started to have run and reported (it reports before it spins).
      for (let i = 0; i < 50 && !site.requests.includes('127.0.0.2/frame-probe.html?realm=other-site'); i++) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 1500));
      // Audio worklets have a target only in some realms (Chromium shares worklet threads): the
      // page-level refusal holds them everywhere (the engine's tests above), and the CPU budget.
      expect(ranOf(await page.evaluate<string>('document.title')).filter((what) => !what.startsWith('audio-worklet@'))).toEqual([]);
      expect(refused).toEqual(expect.arrayContaining(['worker', 'shared_worker', 'service_worker']));
      // The frame of another site and the sandboxed frames run in the page's own renderer.
      expect(page.frames.size).toBe(0);
      // Its CPU time is read while nothing spins too.
      expect(await page.cpuSeconds()).toBeGreaterThan(0);
      await context.close();
    } finally {
      await browser.close();
    }
  }, 120_000);
});
