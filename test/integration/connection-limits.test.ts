/**
 * Connections one client opens are bounded where they are accepted: past the per-address cap or
 * the port's cap a connection is closed before a byte of it is read, while everyone else's
 * requests are answered; trusted proxies are not capped as one client; /healthz stays answerable
 * on METRICS_PORT while the main port is full; a connection no credentials were accepted on gets
 * the shorter headers timeout, an authenticated keep-alive connection keeps the longer one; the
 * start line states the descriptor limit.
 *
 * Clients connect from chosen loopback addresses (127.0.x.y) straight to the instance. No time is
 * asserted: the settings are far apart (a 300 ms timeout against a 60 s one), and a connection
 * must close before a wait far shorter than the long one ends.
 */
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { createPersonalToken } from '../../src/db/repos.js';

const GIT_LFS = 'application/vnd.git-lfs+json';
/** Far longer than any close these tests wait for, far shorter than the long timeouts. */
const PATIENCE_MS = 5000;

const portOf = (s: TestServer) => (s.instances[0]!.server.address() as AddressInfo).port;

interface Conn {
  socket: Socket;
  received: () => string;
  closed: Promise<'closed'>;
  isOpen: () => boolean;
}

/** A raw connection from `from`, connected. */
async function open(port: number, from: string): Promise<Conn> {
  const socket = connect({ port, host: '127.0.0.1', localAddress: from });
  let text = '';
  let isOpen = true;
  socket.on('data', (d) => (text += d.toString('latin1')));
  socket.on('error', () => {});
  const closed = new Promise<'closed'>((resolve) =>
    socket.on('close', () => {
      isOpen = false;
      resolve('closed');
    }),
  );
  await new Promise<void>((resolve) => {
    socket.once('connect', resolve);
    socket.once('close', () => resolve());
  });
  return { socket, received: () => text, closed, isOpen: () => isOpen };
}

/** Whether `conn` is closed by the server before PATIENCE_MS. */
const closesSoon = (conn: Conn) => Promise.race([conn.closed, sleep(PATIENCE_MS).then(() => 'still open' as const)]);

/** The connections the instance holds, once it holds `n` (they are counted as they are accepted). */
async function holding(s: TestServer, n: number) {
  const server = s.instances[0]!.server;
  for (let i = 0; i < 200; i++) {
    const count = await new Promise<number>((r) => server.getConnections((_e, c) => r(c ?? 0)));
    if (count === n) return;
    await sleep(10);
  }
  throw new Error(`the server never held ${n} connections`);
}

/** Waits (polling) until `done` holds, for at most PATIENCE_MS. */
async function until(done: () => boolean) {
  for (let waited = 0; !done() && waited < PATIENCE_MS; waited += 20) await sleep(20);
}

function get(port: number, from: string, path = '/healthz', headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, localAddress: from, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });
}

const slowHeaders = (port: number) => `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`;
const request1 = (port: number, more = '') => `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${more}\r\n`;

/** pactum_http_connections_refused_total{reason}, scraped from METRICS_PORT (0 while none was counted). */
async function refusedCount(s: TestServer, reason: string) {
  const text = await (await fetch(`${s.metricsUrl}/metrics`)).text();
  return Number(new RegExp(`^pactum_http_connections_refused_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
}

describe('the per-address cap', () => {
  let s: TestServer;
  let port: number;
  beforeAll(async () => {
    s = await startTestServer({
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: '4',
      TRUSTED_PROXIES: '127.0.3.9',
      HTTP_HEADERS_TIMEOUT_MS: '60000',
      HTTP_ANON_HEADERS_TIMEOUT_MS: '60000',
      METRICS_PORT: '0',
    });
    port = portOf(s);
  });
  afterAll(() => s.stop());

  it('closes a connection past it at accept, unanswered, keeps answering the others, and leaves a trusted proxy uncapped', async () => {
    const held = await Promise.all(Array.from({ length: 4 }, () => open(port, '127.0.3.1')));
    for (const c of held) c.socket.write(slowHeaders(port));
    await holding(s, 4);
    const before = await refusedCount(s, 'per_address');
    const fifth = await open(port, '127.0.3.1');
    fifth.socket.write(request1(port));
    expect(await closesSoon(fifth)).toBe('closed');
    // Not a byte was answered: it was refused before its request was read.
    expect(fifth.received()).toBe('');
    expect(await refusedCount(s, 'per_address')).toBe(before + 1);
    // The four it already holds are untouched, and another address is served meanwhile.
    expect(held.map((c) => c.isOpen())).toEqual([true, true, true, true]);
    expect(await get(port, '127.0.3.2')).toBe(200);
    // One of the four closes: the address may open one again.
    held[0]!.socket.destroy();
    await holding(s, 3);
    expect(await get(port, '127.0.3.1')).toBe(200);
    for (const c of held) c.socket.destroy();
    // A trusted proxy carries many clients: it is not capped as one.
    const viaProxy = await Promise.all(Array.from({ length: 8 }, () => open(port, '127.0.3.9')));
    for (const c of viaProxy) c.socket.write(request1(port, 'X-Forwarded-For: 198.51.100.7\r\n'));
    await until(() => viaProxy.every((c) => c.received().includes('\r\n\r\n') || !c.isOpen()));
    expect(viaProxy.map((c) => /^HTTP\/1\.1 200 /.test(c.received()))).toEqual(Array(8).fill(true));
    for (const c of viaProxy) c.socket.destroy();
  });
});

describe('the port\'s cap', () => {
  let s: TestServer;
  let port: number;
  beforeAll(async () => {
    s = await startTestServer({ HTTP_MAX_CONNECTIONS: '6', HTTP_HEADERS_TIMEOUT_MS: '60000', HTTP_ANON_HEADERS_TIMEOUT_MS: '60000', METRICS_PORT: '0' });
    port = portOf(s);
  });
  afterAll(() => s.stop());

  it('closes connections past it at accept, whatever their address, while /healthz answers on METRICS_PORT', async () => {
    // A flood from six addresses holds the port's six connections.
    const flood = await Promise.all(Array.from({ length: 6 }, (_, i) => open(port, `127.0.4.${i + 1}`)));
    for (const c of flood) c.socket.write(slowHeaders(port));
    await holding(s, 6);
    const before = await refusedCount(s, 'global');
    const late = await open(port, '127.0.4.20');
    late.socket.write(request1(port));
    expect(await closesSoon(late)).toBe('closed');
    expect(late.received()).toBe('');
    expect(await refusedCount(s, 'global')).toBe(before + 1);
    // The operator's port is not the public one's: its liveness answer is there under the flood.
    const health = await fetch(`${s.metricsUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok' });
    // Room again once one of them goes.
    flood[0]!.socket.destroy();
    await holding(s, 5);
    expect(await get(port, '127.0.4.20')).toBe(200);
    for (const c of flood) c.socket.destroy();
  });

  it('states the descriptor limit in the start line', () => {
    const line = s.logLines.map((l) => JSON.parse(l) as { msg: string; descriptors?: { soft: number; hard: number } }).find((l) => l.msg === 'pactum is serving');
    const [, soft, hard] = /^Max open files\s+(\d+)\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))!;
    expect(line?.descriptors).toEqual({ soft: Number(soft), hard: Number(hard) });
    expect(s.logLines.join('\n')).not.toMatch(/HTTP_MAX_CONNECTIONS \(/);
  });

  it('warns at start when HTTP_MAX_CONNECTIONS would leave too few descriptors', async () => {
    const soft = Number(/^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))![1]);
    const greedy = await startTestServer({ HTTP_MAX_CONNECTIONS: String(soft) });
    try {
      const warning = greedy.logLines.map((l) => JSON.parse(l) as { level: number; msg: string }).find((l) => /^HTTP_MAX_CONNECTIONS \(/.test(l.msg));
      expect(warning?.level).toBe(40);
      expect(warning?.msg).toMatch(/leaves fewer than 256 of the \d+ descriptors/);
    } finally {
      await greedy.stop();
    }
  });
});

describe('the headers timeout of connections no credentials were accepted on', () => {
  let s: TestServer;
  let port: number;
  let pat: string;
  beforeAll(async () => {
    s = await startTestServer({ HTTP_HEADERS_TIMEOUT_MS: '60000', HTTP_ANON_HEADERS_TIMEOUT_MS: '300', HTTP_IDLE_TIMEOUT_MS: '60000', METRICS_TOKEN: 'connection-limits-metrics-0123' });
    port = portOf(s);
    const { user } = await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'nell', password: 'nell-password-1', access: 'read' });
    pat = (await createPersonalToken(s.services.db, user.id, 'ci')).token;
  });
  afterAll(() => s.stop());

  /** Sends `text` a line every 100 ms while the connection is open; how many lines went. */
  async function trickle(conn: Conn, text: string) {
    const lines = text.split(/(?<=\r\n)/);
    let sent = 0;
    while (conn.isOpen() && sent < lines.length) {
      conn.socket.write(lines[sent]!);
      sent++;
      await sleep(100);
    }
    return { sent, of: lines.length };
  }

  const padded = (more: string) => request1(port, `${more}${'X-Padding: a\r\n'.repeat(30)}`);

  it('cuts a new connection whose headers trickle, long before HTTP_HEADERS_TIMEOUT_MS', async () => {
    const cut = async () => (await s.services.metrics.http.cut.get()).values.find((v) => v.labels.reason === 'anonymous_headers')?.value ?? 0;
    const before = await cut();
    const conn = await open(port, '127.0.5.1');
    // 33 lines, one every 100 ms: 3.3 s, far past 300 ms and far short of 60 s.
    const { sent, of } = await trickle(conn, padded(''));
    expect(await closesSoon(conn)).toBe('closed');
    expect(sent).toBeLessThan(of);
    expect(conn.received()).toBe('');
    expect(await cut()).toBe(before + 1);
  });

  it('cuts an anonymous keep-alive connection whose next headers trickle, and leaves an idle one be', async () => {
    const conn = await open(port, '127.0.5.2');
    conn.socket.write(request1(port));
    await sleep(1000);
    // Idle past the short timeout: idle is not a request in progress.
    expect(conn.isOpen()).toBe(true);
    expect(conn.received()).toMatch(/^HTTP\/1\.1 200 /);
    const { sent, of } = await trickle(conn, padded(''));
    expect(await closesSoon(conn)).toBe('closed');
    expect(sent).toBeLessThan(of);
  });

  it('keeps the longer timeout on a connection whose request carried accepted credentials, not on one whose credentials were refused', async () => {
    const refused = await open(port, '127.0.5.4');
    refused.socket.write(`GET /acme/site.git/info/lfs/locks HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: ${GIT_LFS}\r\nAuthorization: Basic ${Buffer.from(`nell:pat_${'x'.repeat(40)}`).toString('base64')}\r\n\r\n`);
    await until(() => /\r\n\r\n/.test(refused.received()) || !refused.isOpen());
    expect(refused.received()).toMatch(/^HTTP\/1\.1 401 /);
    const next = await trickle(refused, padded(''));
    expect(await closesSoon(refused)).toBe('closed');
    expect(next.sent).toBeLessThan(next.of);
    const conn = await open(port, '127.0.5.3');
    const auth = `Authorization: Basic ${Buffer.from(`nell:${pat}`).toString('base64')}\r\n`;
    conn.socket.write(`GET /acme/site.git/info/lfs/locks HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: ${GIT_LFS}\r\n${auth}\r\n`);
    await until(() => /\r\n\r\n/.test(conn.received()));
    expect(conn.received()).toMatch(/^HTTP\/1\.1 200 /);
    const { sent, of } = await trickle(conn, padded(''));
    expect(sent).toBe(of);
    await until(() => (conn.received().match(/HTTP\/1\.1 /g) ?? []).length >= 2);
    expect(conn.received().match(/HTTP\/1\.1 200 /g)).toHaveLength(2);
    expect(conn.isOpen()).toBe(true);
    conn.socket.destroy();
  });
});
