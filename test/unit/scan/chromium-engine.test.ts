/**
 * The Chromium engine's unhappy paths: a page that loads from a private address (a loopback canary
 * that must see nothing), a page that never stops running, the browser killed in the middle of a
 * check, pages whose own scripts throw, and a page the checker itself cannot get through. And its
 * page slots shared fairly: a bystander org's page goes before a flood's waiting pages. And links
 * named alike followed within the page's budget, on its own site only.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChromiumEngine, type ChromiumEngine } from '../../../src/domain/scan/chromium/engine.js';
import { CheckError } from '../../../src/domain/scan/engine.js';
import { fetchPage, type FetchOptions } from '../../../src/domain/scan/fetch-page.js';
import { scanSite } from '../../../src/domain/scan/scan-site.js';
import { requireChromium } from '../../helpers/chromium.js';
import { tone } from '../../helpers/corpus-site.js';

interface Listening { server: Server; origin: string; hits: string[]; connections: number }

async function listen(host: string, handler: (path: string, respond: (status: number, type: string, body: string | Buffer, headers?: Record<string, string>) => void) => void): Promise<Listening> {
  const hits: string[] = [];
  const self: Listening = { server: createServer((req, res) => {
    hits.push(req.url ?? '/');
    handler(req.url ?? '/', (status, type, body, headers = {}) => { if (!res.writableEnded) res.writeHead(status, { 'content-type': type, ...headers }).end(body); });
  }), origin: '', hits, connections: 0 };
  self.server.on('connection', () => { self.connections++; });
  await new Promise<void>((resolve) => self.server.listen(0, host, resolve));
  self.origin = `http://${host}:${(self.server.address() as AddressInfo).port}`;
  return self;
}

const page = (body: string) => `<!doctype html><html lang="en"><head><title>T</title></head><body><main><h1>T</h1>${body}</main></body></html>`;

let canary: Listening;
let site: Listening;
let engine: ChromiumEngine;
const slowImages = new Set<() => void>();

beforeAll(async () => {
  // 127.0.0.2 is loopback too, but not the address the site is allowed at.
  canary = await listen('127.0.0.2', (_path, respond) => respond(200, 'image/png', Buffer.alloc(8)));
  site = await listen('127.0.0.1', (path, respond) => {
    const c = canary.origin;
    if (path === '/canary.html') {
      return respond(200, 'text/html', page(`<img src="${c}/img.png" alt="x"><script src="${c}/app.js"></script><link rel="stylesheet" href="${c}/s.css">
        <iframe src="${c}/frame.html" title="f"></iframe><link rel="preconnect" href="${c}/"><video src="${c}/v.mp4"></video>
        <script>fetch("${c}/xhr").catch(() => {}); new Image().src = "http://localhost.localdomain.invalid/x"; try { new WebSocket("${c.replace('http', 'ws')}/ws"); } catch {}</script>`));
    }
    if (path === '/hang.html') return respond(200, 'text/html', page('<img src="a.png"><script>for (;;) {}</script>'));
    if (path === '/throws.html') return respond(200, 'text/html', page('<img src="a.png"><script>throw new Error("the page broke")</script><script>window.addEventListener("load", () => { null.x; });</script>'));
    if (path === '/unreadable.html') return respond(200, 'text/html', page('<img src="a.png"><script>Document.prototype.querySelectorAll = () => { throw new Error("sabotaged"); };</script>'));
    if (path === '/swallows-tab.html') {
      // Its own listener, added before pactum's recorder, hides every Tab keydown from later listeners.
      return respond(200, 'text/html', `<!doctype html><html lang="en"><head><title>T</title><style>a:focus, button:focus { outline: none; }</style>
        <script>window.addEventListener('keydown', (e) => { if (e.key === 'Tab') e.stopImmediatePropagation(); }, true);</script></head>
        <body><main><h1>T</h1><p><a href="/one">First link</a> and <a href="/two">second link</a>.</p><button>Save</button></main></body></html>`);
    }
    if (path === '/slow.html') return respond(200, 'text/html', page('<img src="/slow.png">'));
    if (path === '/alike.html') {
      return respond(200, 'text/html', page(`<p>Write to us (<a href="/moved">Contact us</a>) or call us (<a href="/contact">Contact us</a>).</p>
        <div>Meet <a href="/never">our team</a> or <a href="/contact">our team</a>.</div>
        <ul><li>See <a href="${c}/one">our partner</a> or <a href="${c}/two">our partner</a>.</li></ul>`));
    }
    if (path === '/moved') return respond(302, 'text/html', '', { location: '/contact' });
    if (path === '/contact') return respond(200, 'text/html', page('<p>Phone: 0123 456 789</p>'));
    if (path === '/never') return; // never answers
    if (path === '/wide.html') return respond(200, 'text/html', page('<p>Above the banner: text a reader of the screenshot should see.</p><img src="/banner.png" width="1240" height="40"><p>Below the banner, more text.</p>'));
    if (path === '/banner.png') return respond(200, 'image/png', Buffer.alloc(8));
    if (path === '/video.html') return respond(200, 'text/html', page('<video controls width="160" src="/tone.wav"></video>'));
    if (path === '/lazy-video.html') return respond(200, 'text/html', page('<video controls preload="none" width="160" src="/lazy.wav"></video>'));
    if (path === '/tone.wav' || path === '/lazy.wav') return respond(200, 'audio/wav', tone(2));
    if (path === '/slow.png') {
      const release = () => respond(200, 'image/png', Buffer.alloc(8));
      slowImages.add(release);
      return void setTimeout(() => { slowImages.delete(release); release(); }, 1500);
    }
    if (path === '/' || path === '/index.html') return respond(200, 'text/html', page('<a href="/throws.html">a</a> <a href="/unreadable.html">b</a> <img src="a.png">'));
    respond(404, 'text/html', page('<p>Not found</p>'));
  });
  engine = createChromiumEngine({ executablePath: requireChromium(), pageTimeoutMs: 4_000, maxPages: 2 });
}, 60_000);

afterAll(async () => {
  await engine?.close();
  for (const l of [site, canary]) {
    l?.server.closeAllConnections();
    await new Promise((r) => l?.server.close(r));
  }
});

const strict: FetchOptions = { allowPrivateNetworks: false, allowedAddresses: ['127.0.0.1'] };

async function check(path: string, fetch: FetchOptions = strict) {
  const fetched = await fetchPage(`${site.origin}${path}`, fetch);
  const session = engine.openSession(fetch);
  try {
    return await session.check({ url: fetched.url, html: fetched.html, standard: 'WCAG2AA' });
  } finally {
    await session.close();
  }
}

describe('the address policy inside the browser', () => {
  it('sends nothing to a private address a page loads from: images, scripts, styles, frames, fetch, media, preconnects, WebSockets', async () => {
    const before = engine.stats().blocked;
    const checked = await check('/canary.html');
    expect(checked.title).toBe('T');
    await new Promise((r) => setTimeout(r, 300)); // anything late would have arrived by now
    expect(canary.hits).toEqual([]);
    expect(canary.connections).toBe(0);
    expect(engine.stats().blocked - before).toBeGreaterThanOrEqual(5);
  }, 60_000);

  it('(control) lets them through when private networks are allowed, so the canary can tell', async () => {
    await check('/canary.html', { allowPrivateNetworks: true });
    expect(canary.hits).toEqual(expect.arrayContaining(['/img.png', '/app.js', '/s.css', '/frame.html', '/xhr']));
    canary.hits.length = 0;
  }, 60_000);
});

describe('pages that misbehave', () => {
  it('reports a page that never stops running as timed out, while another page is checked beside it', async () => {
    const session = engine.openSession(strict);
    const hung = await fetchPage(`${site.origin}/hang.html`, strict);
    const fine = await fetchPage(`${site.origin}/throws.html`, strict);
    const [hangs, works] = await Promise.allSettled([
      session.check({ url: hung.url, html: hung.html, standard: 'WCAG2AA' }),
      session.check({ url: fine.url, html: fine.html, standard: 'WCAG2AA' }),
    ]);
    await session.close();
    expect(hangs.status).toBe('rejected');
    expect((hangs as PromiseRejectedResult).reason).toBeInstanceOf(CheckError);
    expect((hangs as PromiseRejectedResult).reason).toMatchObject({ code: 'timeout', message: expect.stringMatching(/within 4 s \(SCAN_PAGE_TIMEOUT_SECONDS\).*not checked/) });
    expect(works.status).toBe('fulfilled');
    // The engine goes on checking pages afterwards.
    expect((await check('/throws.html')).issues.map((i) => i.code)).toContain('image-alt');
  }, 60_000);

  it('checks a page whose own scripts throw', async () => {
    const checked = await check('/throws.html');
    expect(checked.issues.map((i) => `${i.code}@${i.selector}`)).toContain('image-alt@img');
    expect(checked.notEvaluated).toEqual([]);
  }, 30_000);

  it('reports a page the checker cannot get through as failed, and the scan says so', async () => {
    await expect(check('/unreadable.html')).rejects.toMatchObject({ code: 'failed', message: expect.stringMatching(/could not be checked in Chromium/) });
    const report = await scanSite(
      { siteUrl: `${site.origin}/`, mode: 'site', maxPages: 5, concurrency: 2, standard: 'WCAG2AA' },
      { fetch: strict, engine },
      { onPagesFound: () => undefined, onPageDone: () => undefined },
    );
    const byPath = Object.fromEntries(report.pages.map((p) => [new URL(p.url).pathname, p.error ?? p.issues.map((i) => i.code).join(',')]));
    expect(byPath['/unreadable.html']).toMatch(/could not be checked/);
    expect(byPath['/throws.html']).toContain('image-alt');
    expect(report.summary.pagesFailed).toBe(1);
    expect(report.engine).toBe('chromium');
  }, 60_000);
});

describe('the page slots', () => {
  it("go to a bystander org's page before the pages a flooding org queued earlier", async () => {
    const oneSlot = createChromiumEngine({ executablePath: requireChromium(), pageTimeoutMs: 30_000, maxPages: 1 });
    const flood = oneSlot.openSession(strict, { owner: 'org_flood' });
    const bystander = oneSlot.openSession(strict, { owner: 'org_bystander' });
    const done: string[] = [];
    const checkAs = (session: typeof flood, name: string) =>
      session.check({ url: `${site.origin}/${name}.html`, html: page(`<p>${name}</p>`), standard: 'WCAG2A' }).then(() => void done.push(name));
    try {
      const pending = ['a1', 'a2', 'a3', 'a4'].map((name) => checkAs(flood, name));
      pending.push(checkAs(bystander, 'b1'));
      await Promise.all(pending);
    } finally {
      await flood.close();
      await bystander.close();
      await oneSlot.close();
    }
    // One page at a time: a1 took the slot at once, b1 was queued last and still went next.
    expect(done).toEqual(['a1', 'b1', 'a2', 'a3', 'a4']);
  }, 120_000);
});

describe('the media checks', () => {
  it('decode the sound of the file the page loaded, without downloading it again', async () => {
    const checked = await check('/video.html');
    expect(checked.issues.find((i) => i.code === 'pactum-video-alternative')).toMatchObject({ evidence: expect.stringMatching(/^video of 2\.0 s with sound/) });
    expect(site.hits.filter((hit) => hit === '/tone.wav')).toHaveLength(1);
  });

  it('leave media that loads only when played alone: nothing is downloaded, nothing reported', async () => {
    const checked = await check('/lazy-video.html');
    expect(checked.issues.filter((i) => /^pactum-(video|audio)/.test(i.code))).toEqual([]);
    expect(site.hits).not.toContain('/lazy.wav');
  });
});

describe('links named alike', () => {
  it('are followed on the page\'s own site: one resource after a redirect is not reported, a target that never answers keeps its links for review', async () => {
    const canaryHits = canary.hits.length;
    // The page's default deadline (30 s), so the budget for following is the full 5 s.
    const patient = createChromiumEngine({ executablePath: requireChromium(), pageTimeoutMs: 30_000, maxPages: 1 });
    const fetch: FetchOptions = { allowPrivateNetworks: true };
    const fetched = await fetchPage(`${site.origin}/alike.html`, fetch);
    const session = patient.openSession(fetch);
    const checked = await session.check({ url: fetched.url, html: fetched.html, standard: 'WCAG2AA' }).finally(() => session.close().then(() => patient.close()));
    expect(checked.issues.filter((i) => i.code === 'pactum-link-purpose').map((i) => i.selector)).toEqual(['div > a:nth-of-type(1)', 'div > a:nth-of-type(2)', 'li > a:nth-of-type(1)', 'li > a:nth-of-type(2)']);
    expect(site.hits).toEqual(expect.arrayContaining(['/moved', '/contact', '/never']));
    // Links to another site are not followed (the canary's origin), even where the address policy would allow it.
    expect(canary.hits.slice(canaryHits)).toEqual([]);
  }, 30_000);
});

describe('the keyboard checks', () => {
  it('still follow every Tab press on a page that hides keydown from the focus recorder', async () => {
    const checked = await check('/swallows-tab.html');
    expect(checked.issues.filter((i) => i.code === 'pactum-focus-visible').map((i) => i.selector)).toEqual(['a:nth-of-type(1)', 'a:nth-of-type(2)', 'button']);
    expect(checked.notEvaluated).toEqual([]);
  }, 30_000);
});

describe('the browser dying', () => {
  it('is started again, and the page it was checking is checked on the new one', async () => {
    await check('/throws.html'); // the browser is up
    const pid = await engine.browserPid();
    expect(pid).toEqual(expect.any(Number));
    const launches = engine.stats().launches;
    const pending = check('/slow.html');
    // Kill it while the page waits for its image.
    for (let i = 0; i < 100 && slowImages.size === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(slowImages.size).toBe(1);
    process.kill(pid!, 'SIGKILL');
    const checked = await pending;
    expect(checked.issues.map((i) => i.code)).toContain('image-alt');
    expect(engine.stats().launches).toBe(launches + 1);
    expect(await engine.browserPid()).not.toBe(pid);
  }, 60_000);
});

describe('screenshots of failing elements', () => {
  it('shows a wide, low element at a legible scale with its surroundings, not as a strip', async () => {
    const fetched = await fetchPage(`${site.origin}/wide.html`, strict);
    const session = engine.openSession(strict);
    try {
      const checked = await session.check({ url: fetched.url, html: fetched.html, standard: 'WCAG2AA', screenshots: { max: 3, maxWidth: 480, format: 'png', quality: 70 } });
      const banner = checked.issues.findIndex((i) => i.code === 'image-alt');
      const shot = checked.screenshots?.find((sh) => sh.issues.includes(banner));
      expect(shot, JSON.stringify(checked.issues.map((i) => i.code))).toBeDefined();
      expect(shot!.width).toBeLessThanOrEqual(480);
      expect(shot!.width / shot!.height).toBeLessThanOrEqual(3);
      expect(shot!.height).toBeGreaterThanOrEqual(150);
      // The PNG's own header says the same size.
      expect([shot!.bytes.readUInt32BE(16), shot!.bytes.readUInt32BE(20)]).toEqual([shot!.width, shot!.height]);
    } finally {
      await session.close();
    }
  }, 60_000);
});
