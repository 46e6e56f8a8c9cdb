/**
 * Service-connection calls obey the outbound address policy (issue 14 §4): a loopback url is
 * refused before any byte is sent (a canary listener counts requests), by IP and by host name,
 * the refusal names the setting that opens private addresses, and redirects are never followed.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConnection } from '../../src/domain/connections/client.js';

const SECRET = 'client-secret-CANARY-5d1e';

function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits += 1;
    handler!(req, res);
  }).listen(0, '127.0.0.1');
  return new Promise((resolve) =>
    server.once('listening', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits })),
  );
}

let canary: Awaited<ReturnType<typeof listen>>;
let redirector: Awaited<ReturnType<typeof listen>>;
beforeAll(async () => {
  canary = await listen((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"t"}'));
  redirector = await listen((_req, res) => res.writeHead(307, { location: `${canary.url}/api/v1/oauth/token` }).end());
});
afterAll(() => {
  canary.server.close();
  redirector.server.close();
});

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
