/**
 * One org's screenshots on the disk everyone shares: two 20-page scans (Chromium) of pages full of
 * large noisy images without text alternatives, each failing image a screenshot. The replay gives
 * the org a quota of 2 MiB (SCREENSHOTS_BYTES_PER_ORG; a build without the setting ignores it) and
 * reports what the screenshots take on disk and what the reports say.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync, crc32 } from 'node:zlib';
import { call, mcp, report, withPactum } from './harness.js';

const QUOTA = 2 * 1024 * 1024;

/** A PNG of random pixels: what compresses worst, so its screenshots are as large as they get. */
function noisyPng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'ascii');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let i = 0; i < rows.length; i++) rows[i] = i % (width * 3 + 1) === 0 ? 0 : (Math.random() * 256) | 0;
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

async function noisySite() {
  const png = noisyPng(400, 300);
  const server = createServer((req, res) => {
    if (req.url?.endsWith('.png')) return void res.writeHead(200, { 'content-type': 'image/png' }).end(png);
    const n = Number(/^\/p(\d+)\.html$/.exec(req.url ?? '')?.[1] ?? 0);
    const links = Array.from({ length: 20 }, (_, i) => `<a href="/p${i}.html">page ${i}</a>`).join(' ');
    const images = Array.from({ length: 10 }, (_, i) => `<img src="/n${n}-${i}.png" width="400" height="300">`).join('');
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html lang="en"><title>Page ${n}</title><main><h1>Page ${n}</h1>${images}${links}</main></html>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(r)) };
}

function bytesUnder(dir: string): number {
  if (!existsSync(dir)) return 0;
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) total += entry.isDirectory() ? bytesUnder(join(dir, entry.name)) : statSync(join(dir, entry.name)).size;
  return total;
}

export default async function sharedServiceScreenshots(dist: string) {
  const site = await noisySite();
  try {
    await withPactum(dist, { SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'chromium', SCREENSHOTS_PER_PAGE: '10', SCREENSHOTS_PER_SCAN: '1000', SCREENSHOTS_BYTES_PER_ORG: String(QUOTA) }, async ({ run, start, dataDir }) => {
      run(['org', 'create', 'acme']);
      run(['user', 'create', 'noa', '--org', 'acme', '--role', 'member', '--password-stdin'], 'noa-password-123\n');
      const token = run(['token', '--user', 'noa']);
      const { url } = await start();
      const client = await mcp(url, token);
      const skipped: string[] = [];
      for (const start of ['/p0.html', '/p10.html']) {
        const r = await call(client, 'dashboard_scan_site', { siteUrl: `${site.origin}${start}`, scanMode: 'site', maxPages: 20 });
        if (!r.ok) return report('two 20-page scans of noisy images', `refused: ${r.text.slice(0, 80)}`);
        const scanId = (JSON.parse(r.text) as { scanId: string }).scanId;
        for (let i = 0; i < 1200; i++) {
          if ((JSON.parse((await call(client, 'dashboard_get_scan_progress', { scanId })).text) as { finished: boolean }).finished) break;
          await new Promise((res) => setTimeout(res, 250));
        }
        const digest = JSON.parse((await call(client, 'dashboard_get_report', { scanId, view: 'digest' })).text) as { status: string; digest?: { summary: { screenshotsSkipped?: { count: number } } } };
        skipped.push(`${digest.status}, ${digest.digest?.summary.screenshotsSkipped?.count ?? 0} skipped`);
      }
      await client.close();
      const onDisk = bytesUnder(join(dataDir, 'screenshots'));
      const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
      report('two 20-page scans of noisy images, a 2 MiB quota for the org', `screenshots on disk ${mib(onDisk)}; scans: ${skipped.join('; ')}${onDisk > QUOTA ? ' (hole: no quota)' : ''}`);
    });
  } finally {
    await site.close();
  }
}
