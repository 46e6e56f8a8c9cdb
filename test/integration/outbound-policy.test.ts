/**
 * Service-connection calls obey the outbound address policy: a loopback url is
 * refused before any byte is sent (a canary listener counts requests), by IP and by host name,
 * the refusal names the setting that opens private addresses, and redirects are never followed.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConnection } from '../../src/domain/connections/client.js';
import { fetchPage } from '../../src/domain/scan/fetch-page.js';
import { checkScanTarget } from '../../src/scans/target.js';

const SECRET = 'client-secret-CANARY-5d1e';

/** `host` '::' listens on IPv6 and IPv4 alike, so an IPv4-mapped literal of loopback reaches it too. */
function listen(handler: Parameters<typeof createServer>[1], host = '127.0.0.1'): Promise<{ server: Server; url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits += 1;
    handler!(req, res);
  }).listen(0, host);
  return new Promise((resolve) =>
    server.once('listening', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits })),
  );
}

let canary: Awaited<ReturnType<typeof listen>>;
let redirector: Awaited<ReturnType<typeof listen>>;
let dualStack: Awaited<ReturnType<typeof listen>>;
beforeAll(async () => {
  canary = await listen((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"t"}'));
  redirector = await listen((_req, res) => res.writeHead(307, { location: `${canary.url}/api/v1/oauth/token` }).end());
  dualStack = await listen((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"t"}'), '::');
});
afterAll(() => {
  canary.server.close();
  redirector.server.close();
  dualStack.server.close();
});

/** How many TCP client sockets `fn` opened: every connection attempt makes one (node:net's own channel). */
async function socketsOpenedBy(fn: () => Promise<unknown>): Promise<number> {
  let opened = 0;
  const count = () => void (opened += 1);
  subscribe('net.client.socket', count);
  try {
    await fn();
  } finally {
    unsubscribe('net.client.socket', count);
  }
  return opened;
}

describe('outbound address policy for service connections', () => {
  it.each(['127.0.0.1', 'localhost'])('refuses a %s url by default; the secret never reaches the listener', async (host) => {
    const port = new URL(canary.url).port;
    const result = await testConnection({ url: `http://${host}:${port}`, clientId: 'pactum', clientSecret: SECRET }, 2000);
    expect(result).toMatchObject({ ok: false, step: 'oauth' });
    expect(result.ok ? '' : result.error).toMatch(/loopback.*OUTBOUND_ALLOW_PRIVATE_NETWORKS=true/);
    expect(JSON.stringify(result)).not.toContain(SECRET);
    expect(canary.hits()).toBe(0);
  });

  it('reaches a loopback service only with private networks allowed', async () => {
    const before = canary.hits();
    const result = await testConnection({ url: canary.url, clientId: 'pactum', clientSecret: SECRET, policy: { allowPrivateNetworks: true } }, 2000);
    expect(result.ok).toBe(true);
    expect(canary.hits()).toBe(before + 2); // token, then health
  });

  it('does not follow a redirect, even from an allowed host', async () => {
    const before = canary.hits();
    const result = await testConnection({ url: redirector.url, clientId: 'pactum', clientSecret: SECRET, policy: { allowPrivateNetworks: true } }, 2000);
    expect(result).toMatchObject({ ok: false, step: 'oauth' });
    expect(result.ok ? '' : result.error).toMatch(/redirect/);
    expect(redirector.hits()).toBe(1);
    expect(canary.hits()).toBe(before);
  });
});

describe('IPv4 carried inside IPv6 literals', () => {
  // Each names this machine's loopback; on a dual-stack host the mapped form reaches the listener.
  const forms = ['::ffff:0:127.0.0.1', '::ffff:127.0.0.1', '64:ff9b::127.0.0.1', '2002:7f00:1::1', '::127.0.0.1', '::ffff:0:7f00:1'];
  const at = (host: string) => `http://[${host}]:${new URL(dualStack.url).port}`;

  it.each(forms)('[%s]: a connection test is refused without opening a socket', async (host) => {
    const before = dualStack.hits();
    let result: Awaited<ReturnType<typeof testConnection>> | undefined;
    const sockets = await socketsOpenedBy(async () => (result = await testConnection({ url: at(host), clientId: 'pactum', clientSecret: SECRET }, 2000)));
    expect(result).toMatchObject({ ok: false, step: 'oauth' });
    expect(result!.ok ? '' : result!.error).toMatch(/loopback.*OUTBOUND_ALLOW_PRIVATE_NETWORKS=true/);
    expect(sockets).toBe(0);
    expect(dualStack.hits()).toBe(before);
  });

  it.each(forms)('[%s]: a scan is refused when asked for, and a page fetch without opening a socket', async (host) => {
    const before = dualStack.hits();
    await expect(checkScanTarget(at(host), false)).rejects.toMatchObject({ code: 'blocked-address' });
    let err: unknown;
    const sockets = await socketsOpenedBy(() => fetchPage(`${at(host)}/`, { allowPrivateNetworks: false, timeoutMs: 2000 }).catch((e: unknown) => (err = e)));
    expect(err).toMatchObject({ code: 'blocked-address', message: expect.stringMatching(/loopback.*SCAN_ALLOW_PRIVATE_NETWORKS=true/) });
    expect(sockets).toBe(0);
    expect(dualStack.hits()).toBe(before);
  });

  it('reaches the listener through the mapped form once private networks are allowed (the counts above can move)', async () => {
    const before = dualStack.hits();
    let result: Awaited<ReturnType<typeof testConnection>> | undefined;
    const sockets = await socketsOpenedBy(async () => (result = await testConnection({ url: at('::ffff:127.0.0.1'), clientId: 'pactum', clientSecret: SECRET, policy: { allowPrivateNetworks: true } }, 2000)));
    expect(result?.ok).toBe(true);
    expect(sockets).toBeGreaterThan(0);
    expect(dualStack.hits()).toBe(before + 2);
  });
});
