/**
 * What the Chromium engine's checks beyond axe cost on one page, by kind of page: a plain page, a
 * video with sound, a ticking clock, a video that loads only when played beside a poll that ends,
 * and a silent page that polls every 5 s. Each page is checked by itself (one at a time, so the
 * time is the page's own and not hidden behind other pages' work), ROUNDS times, by the engine in
 * this process; beside it, Playwright and axe-core alone in the same browser (goto, then axe.run)
 * on the same page, the baseline the ratio is taken against. Also counted: how many times the
 * media file was downloaded per check.
 *
 *   npx tsx scripts/bench/page-kinds.ts [--rounds 3]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import axeCore from 'axe-core';
import { chromium } from 'playwright-core';
import { axeRunOptions } from '../../src/domain/scan/axe-results.js';
import { CHROMIUM_FLAGS, createChromiumEngine } from '../../src/domain/scan/chromium/engine.js';
import { median, toneWav } from './lib.js';

const { values: argv } = parseArgs({ options: { rounds: { type: 'string', default: '3' } } });
const ROUNDS = Number(argv.rounds);
const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const WAV = toneWav();
const page = (body: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A page</title></head><body><main><h1>A page</h1><p>Some text.</p>${body}</main></body></html>`;
const KINDS: Record<string, string> = {
  plain: page(''),
  video: page('<figure><video controls width="160" src="/tone.wav"></video><figcaption><a href="/t">Transcript</a></figcaption></figure>'),
  clock: page('<p>Local time: <span id="clock">00:00:00</span></p><script>setInterval(() => { document.getElementById("clock").textContent = new Date().toTimeString().slice(0, 8); }, 1000);</script>'),
  'lazy video and poll': page('<figure><video controls preload="none" width="160" src="/tone.wav"></video><figcaption><a href="/t">Transcript</a></figcaption></figure><script>const ready = setInterval(() => { if (document.readyState === "complete") clearInterval(ready); }, 100);</script>'),
  'slow timer': page('<p id="news">News</p><script>setInterval(() => {}, 5000);</script>'),
};

let downloads = 0;
const server = createServer((req, res) => {
  const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
  if (path === '/tone.wav') { downloads++; return void res.writeHead(200, { 'content-type': 'audio/wav' }).end(WAV); }
  const html = KINDS[path.slice(1)];
  if (!html) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><title>404</title>');
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const urlOf = (kind: string) => `${origin}/${encodeURIComponent(kind)}`;

const engine = createChromiumEngine({ executablePath, pageTimeoutMs: 60_000 });
const session = engine.openSession({ allowPrivateNetworks: true });
const baseline = await chromium.launch({ executablePath, args: [...CHROMIUM_FLAGS] });
const context = await baseline.newContext({ viewport: { width: 1280, height: 800 } });
await context.addInitScript({ content: axeCore.source });
const axePage = await context.newPage();
const options = JSON.stringify(axeRunOptions('WCAG2AA', 'browser'));

const time = async (work: () => Promise<unknown>) => { const started = performance.now(); await work(); return performance.now() - started; };
const pactum = (kind: string) => session.check({ url: urlOf(kind), html: KINDS[kind]!, standard: 'WCAG2AA' });
const axeAlone = async (kind: string) => { await axePage.goto(urlOf(kind), { waitUntil: 'load' }); await axePage.evaluate(`axe.run(document, ${options})`); };

try {
  await pactum('plain'); // warm-up: the browser starts
  await axeAlone('plain');
  console.log(`page kinds: each checked by itself, median of ${ROUNDS}; pactum's Chromium engine beside Playwright + axe-core alone in the same browser`);
  for (const kind of Object.keys(KINDS)) {
    const ours: number[] = [];
    const theirs: number[] = [];
    let findings = '';
    downloads = 0;
    for (let round = 0; round < ROUNDS; round++) {
      ours.push(await time(async () => { findings = (await pactum(kind)).issues.filter((i) => i.code.startsWith('pactum-')).map((i) => i.code).join(', '); }));
    }
    const media = downloads / ROUNDS;
    for (let round = 0; round < ROUNDS; round++) theirs.push(await time(() => axeAlone(kind)));
    console.log(`${kind.padEnd(20)} pactum ${median(ours).toFixed(0)} ms, baseline ${median(theirs).toFixed(0)} ms, pactum/baseline ${(median(ours) / median(theirs)).toFixed(1)}; media downloads per check ${media.toFixed(1)}; checks beyond axe found: ${findings || 'nothing'}`);
  }
} finally {
  await session.close();
  await engine.close();
  await baseline.close();
  server.close();
}
