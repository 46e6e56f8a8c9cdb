/**
 * One tenant hogging the scanners of a shared pactum: a member of org A queues more multi-page
 * scans than the server should hold for one org, then a member of org B asks for a one-page scan.
 * A hole is B's scan waiting behind A's whole flood (scans served first come, first served) and
 * A's scans all being accepted; the fix shows as B's scan starting at once (orgs take turns, and
 * a worker is kept for other orgs) and A refused past its queued cap with rate_limited.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { call, mcp, report, withPactum } from './harness.js';

/** A 10-page site on loopback; each page answered after 100 ms, so a scan of it takes a while. */
async function slowSite() {
  const server = createServer((req, res) => {
    const n = Number(/^\/p(\d+)\.html$/.exec(req.url ?? '')?.[1] ?? 0) % 10;
    const links = [1, 2, 3].map((d) => `<a href="/p${(n + d) % 10}.html">page ${(n + d) % 10}</a>`).join(' ');
    setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html lang="en"><title>Page ${n}</title><main><h1>Page ${n}</h1><img src="/i.png">${links}</main></html>`), 100);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(r)) };
}

/** How many of org A's scans the replay asks for: more than the default per-org queued cap (100). */
const FLOOD = 120;
/** How long B's scan may wait to start before the replay calls it stuck behind the flood. */
const PATIENCE_SECONDS = 60;

export default async function sharedServiceScans(dist: string) {
  const site = await slowSite();
  try {
    await withPactum(dist, { SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'jsdom' }, async ({ run, start }) => {
      for (const org of ['flood', 'bystander']) {
        run(['org', 'create', org]);
        run(['user', 'create', `${org}-member`, '--org', org, '--role', 'member', '--password-stdin'], `${org}-password-123\n`);
      }
      const floodToken = run(['token', '--user', 'flood-member']);
      const bystanderToken = run(['token', '--user', 'bystander-member']);
      const { url } = await start();
      const a = await mcp(url, floodToken);
      const b = await mcp(url, bystanderToken);

      let accepted = 0;
      const refusals = new Map<string, number>();
      let retryAfter: number | undefined;
      for (let i = 0; i < FLOOD; i++) {
        const r = await call(a, 'dashboard_scan_site', { siteUrl: `${site.origin}/p${i % 10}.html`, scanMode: 'site', maxPages: 10, concurrency: 4 });
        if (r.ok) accepted++;
        else {
          const err = JSON.parse(r.text) as { error: string; retryAfterSeconds?: number };
          refusals.set(err.error, (refusals.get(err.error) ?? 0) + 1);
          retryAfter ??= err.retryAfterSeconds;
        }
      }
      const refused = [...refusals].map(([code, n]) => `${n}×${code}`).join(', ');
      report(`org A's member queues ${FLOOD} ten-page scans`, refused
        ? `${accepted} accepted, ${refused}${retryAfter ? ` (retryAfterSeconds ${retryAfter})` : ''}`
        : `all ${accepted} accepted (hole: no cap on what one org queues)`);

      const t0 = Date.now();
      const started = await call(b, 'dashboard_scan_site', { siteUrl: `${site.origin}/p0.html`, scanMode: 'single' });
      if (!started.ok) return report("org B's one-page scan behind org A's flood", `refused: ${started.text.slice(0, 60)} (hole)`);
      const scanId = (JSON.parse(started.text) as { scanId: string }).scanId;
      let outcome = `still queued after ${PATIENCE_SECONDS} s (hole: it waits behind the whole flood)`;
      while (Date.now() - t0 < PATIENCE_SECONDS * 1000) {
        const p = JSON.parse((await call(b, 'dashboard_get_scan_progress', { scanId })).text) as { status: string; finished: boolean };
        if (p.finished) {
          outcome = `started and finished after ${((Date.now() - t0) / 1000).toFixed(1)} s`;
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      report("org B's one-page scan behind org A's flood", outcome);
      await a.close();
      await b.close();
    });
  } finally {
    await site.close();
  }
}
