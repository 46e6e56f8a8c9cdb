/**
 * A scan's pictures of one rule: at most SCREENSHOTS_PER_RULE in the whole scan, whatever the
 * number of pages failing it alike; the page's elements are asked for in turn (captureElementShots
 * asks the scan before each shot).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCheckPool } from '../../../src/compute/check-pool.js';
import type { CheckPool } from '../../../src/domain/scan/check-pool.js';
import { createJsdomEngine } from '../../../src/domain/scan/jsdom-engine.js';
import type { ScanEngine } from '../../../src/domain/scan/engine.js';
import { scanSite, type ShotBudget } from '../../../src/domain/scan/scan-site.js';
import { captureElementShots } from '../../../src/domain/scan/chromium/screenshots.js';
import type { Page } from '../../../src/domain/scan/chromium/browser.js';
import type { ElementShot, Issue, PageReport } from '../../../src/domain/scan/types.js';
import { startFixtureServer, type FixtureServer } from './fixture-server.js';

let site: FixtureServer;
let pool: CheckPool;
let jsdom: ScanEngine;
beforeAll(async () => {
  site = await startFixtureServer();
  pool = createCheckPool(2);
  jsdom = createJsdomEngine(pool);
});
afterAll(async () => {
  await pool.close();
  await site.close();
});

/** A page that answers every element's box and "photographs" it: the shots taken, by selector. */
function stubPage(photographed: string[]): Page {
  let marking = '';
  return {
    evaluate: (call: string) => {
      const selector = /"selector":"((?:[^"\\]|\\.)*)"/.exec(call)?.[1];
      if (selector === undefined) return Promise.resolve(undefined); // the unmarking call
      marking = JSON.parse(`"${selector}"`) as string;
      return Promise.resolve({ el: { x: 10, y: 10, width: 50, height: 20 }, view: { x: 0, y: 0, width: 1280, height: 800 } });
    },
    screenshot: () => {
      photographed.push(marking);
      return Promise.resolve(Buffer.from('img'));
    },
  } as unknown as Page;
}

/** jsdom's checks with the shooting step of the Chromium engine on a stub page: what the scan's claim lets through. */
function shootingEngine(photographed: string[]): ScanEngine {
  return {
    name: 'chromium',
    close: () => jsdom.close(),
    openSession(fetch, options) {
      const session = jsdom.openSession(fetch, options);
      return {
        close: () => session.close(),
        async check(input, signal) {
          const checked = await session.check(input, signal);
          const screenshots: ElementShot[] = input.screenshots ? await captureElementShots(stubPage(photographed), checked.issues, input.screenshots) : [];
          return { ...checked, screenshots };
        },
      };
    },
  };
}

const budget = (perRule: number): ShotBudget => ({ perPage: 5, perScan: 100, perRule, maxWidth: 480, format: 'webp', quality: 70 });
const codesShot = (pages: PageReport[]) =>
  (pages as (PageReport & { issues: Issue[]; screenshots?: ElementShot[] })[]).flatMap((p) => (p.screenshots ?? []).flatMap((s) => s.issues.map((i) => p.issues[i]!.code)));

async function scanWith(perRule: number) {
  const photographed: string[] = [];
  const done: PageReport[] = [];
  await scanSite(
    { siteUrl: site.url('/'), mode: 'site', maxPages: 50, concurrency: 2, standard: 'WCAG2AA' },
    { fetch: { allowPrivateNetworks: true, timeoutMs: 5_000 }, engine: shootingEngine(photographed), screenshots: budget(perRule) },
    { onPagesFound: () => undefined, onPageDone: (page) => void done.push(page) },
  );
  return { photographed, codes: codesShot(done) };
}

describe('screenshots of one rule in a scan', () => {
  it('are taken at most SCREENSHOTS_PER_RULE times, each failing rule still getting its own', async () => {
    // links.html fails pactum-link-purpose on two links: with one picture a rule, one of them is shot
    // (html-has-lang's element is the document itself, never photographed).
    const { codes } = await scanWith(1);
    const count = (code: string) => codes.filter((c) => c === code).length;
    expect(count('pactum-link-purpose')).toBe(1);
    for (const code of ['image-alt', 'label', 'select-name', 'link-name']) expect(count(code)).toBe(1);
  });

  it('with 0, are limited only by the page and the scan', async () => {
    const { codes } = await scanWith(0);
    expect(codes.filter((c) => c === 'pactum-link-purpose')).toHaveLength(2);
  });

  it('never photograph an element when every rule it fails has its pictures already', async () => {
    const photographed: string[] = [];
    const issue = (code: string, selector: string) => ({ code, selector, type: 'error' }) as Issue;
    const taken = new Map<string, number>();
    const claim = (codes: readonly string[]) => {
      const open = codes.filter((c) => (taken.get(c) ?? 0) < 1);
      for (const c of open) taken.set(c, 1);
      return open.length > 0;
    };
    const shots = await captureElementShots(stubPage(photographed), [issue('a', '#one'), issue('a', '#two'), issue('b', '#two'), issue('a', '#three')], { max: 5, maxWidth: 480, format: 'png', quality: 70, claim });
    // #one takes rule a's picture; #two is shot for rule b; #three fails only a, which has its picture.
    expect(photographed).toEqual(['#one', '#two']);
    expect(shots.map((s) => s.issues)).toEqual([[0], [1, 2]]);
  });
});
