/**
 * The Prism hookup the end-to-end suites run through once per CI run (PACTUM_VIA_PRISM=1) really
 * reports violations: in front of a server that breaks the contract, `sl-violations` are collected.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { prismFront } from '../helpers/prism.js';

it('collects the sl-violations Prism reports for a response that breaks the spec', async () => {
  const bad = createServer((req, res) => {
    if (req.url === '/healthz') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ version: '3.4.0' }));
    else if (req.url?.endsWith('/locks')) res.writeHead(418, { 'content-type': 'application/vnd.git-lfs+json' }).end('{}');
    else res.writeHead(404).end();
  }).listen(0, '127.0.0.1');
  await new Promise((r) => bad.once('listening', r));
  const front = await prismFront();
  await front.connect(`http://127.0.0.1:${(bad.address() as AddressInfo).port}`);
  try {
    const health = await fetch(`${front.url}/healthz`);
    await health.body?.cancel();
    const locks = await fetch(`${front.url}/acme/site.git/info/lfs/locks`, { headers: { accept: 'application/vnd.git-lfs+json' } });
    await locks.body?.cancel();
    expect(front.violations.map((v) => v.path)).toEqual(['/healthz', '/acme/site.git/info/lfs/locks']);
    expect(front.violations[0]!.violations).toMatch(/status/);
  } finally {
    await front.close();
    bad.close();
  }
});
