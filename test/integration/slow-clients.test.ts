/**
 * Slow clients: a long body at a steady rate passes, whatever the whole
 * request takes; a stalled body, a trickling body and headers sent a byte at a time are cut; the
 * server keeps serving. The thresholds are set small through the environment so this runs fast.
 */
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';

const GIT_LFS = 'application/vnd.git-lfs+json';
const W = `Basic ${Buffer.from('wally:wally-password-1').toString('base64')}`;

let s: TestServer;
let port: number;

beforeAll(async () => {
  s = await startTestServer({
    HTTP_HEADERS_TIMEOUT_MS: '1000',
    HTTP_IDLE_TIMEOUT_MS: '1500',
    HTTP_MIN_BODY_RATE: String(64 * 1024),
    HTTP_BODY_RATE_WINDOW_MS: '500',
    // Metrics are recorded only where they can be read: the cuts are counted.
    METRICS_TOKEN: 'slow-clients-metrics-token-0123',
  });
  await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: 'wally-password-1', access: 'write' });
  port = (s.instances[0]!.server.address() as AddressInfo).port;
});
afterAll(() => s.stop());

const content = (n: number) => {
  const bytes = randomBytes(n);
  return { bytes, oid: createHash('sha256').update(bytes).digest('hex'), size: n };
};

async function batch(operation: 'upload' | 'download', c: { oid: string; size: number }) {
  const res = await fetch(`http://127.0.0.1:${port}/acme/site.git/info/lfs/objects/batch`, {
    method: 'POST',
    headers: { authorization: W, accept: GIT_LFS, 'content-type': GIT_LFS },
    body: JSON.stringify({ operation, transfers: ['basic'], objects: [{ oid: c.oid, size: c.size }] }),
  });
  expect(res.status).toBe(200);
  return (await res.json()).objects[0];
}

/** A raw connection: everything it receives, and a promise settled when the server closes it. */
function open(): { socket: Socket; received: () => string; closed: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  socket.on('data', (d) => (text += d.toString('latin1')));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return { socket, received: () => text, closed };
}

/** Starts a basic PUT of `c` and returns the connection after the headers are sent. */
async function startPut(c: ReturnType<typeof content>) {
  const upload = (await batch('upload', c)).actions.upload;
  const path = new URL(upload.href).pathname;
  const conn = open();
  conn.socket.write(
    `PUT ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: ${upload.header.Authorization}\r\n` +
      `Content-Type: application/octet-stream\r\nContent-Length: ${c.size}\r\nConnection: close\r\n\r\n`,
  );
  return conn;
}

async function stored(c: { oid: string; size: number }) {
  return Boolean((await batch('download', c)).actions);
}

describe('slow clients', () => {
  it('lets a long body at a steady rate through, however long the whole request takes', async () => {
    const c = content(4 * 1024 * 1024);
    const conn = await startPut(c);
    const chunk = 64 * 1024;
    const started = Date.now();
    // ~1.3 MiB/s: over three seconds, longer than the headers and idle timeouts together.
    for (let at = 0; at < c.size; at += chunk) {
      conn.socket.write(c.bytes.subarray(at, at + chunk));
      await sleep(50);
    }
    await conn.closed;
    expect(conn.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(Date.now() - started).toBeGreaterThan(1500);
    expect(await stored(c)).toBe(true);
  });

  it('cuts a body that stalls', async () => {
    const c = content(1024 * 1024);
    const conn = await startPut(c);
    conn.socket.write(c.bytes.subarray(0, 1000));
    await conn.closed;
    expect(conn.received()).not.toMatch(/^HTTP\/1\.1 200 /);
    expect(await stored(c)).toBe(false);
  });

  it('cuts a body that trickles a byte at a time (which resets an idle timer forever)', async () => {
    const cut = async () => (await s.services.metrics.http.cut.get()).values.find((v) => v.labels.reason === 'body_rate')?.value ?? 0;
    const before = await cut();
    const c = content(1024 * 1024);
    const conn = await startPut(c);
    let sent = 0;
    let open = true;
    void conn.closed.then(() => (open = false));
    // A byte every 100 ms is never idle for 1.5 s, but far below 64 KiB/s.
    while (open && sent < c.size) {
      conn.socket.write(c.bytes.subarray(sent, sent + 1));
      sent++;
      await sleep(100);
    }
    expect(open).toBe(false);
    expect(sent).toBeLessThan(200);
    expect(await stored(c)).toBe(false);
    // Counted as cut for its rate (pactum_http_requests_cut_total).
    expect(await cut()).toBe(before + 1);
  });

  it('cuts a client that sends its headers a byte at a time (slowloris)', async () => {
    const conn = open();
    const request = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${'X-Padding: aaaaaaaaaaaaaaaaaaaa\r\n'.repeat(50)}\r\n`;
    let sent = 0;
    let open_ = true;
    void conn.closed.then(() => (open_ = false));
    while (open_ && sent < request.length) {
      conn.socket.write(request[sent]!);
      sent++;
      await sleep(50);
    }
    expect(open_).toBe(false);
    expect(sent).toBeLessThan(request.length);
    expect(conn.received()).not.toMatch(/^HTTP\/1\.1 200 /);
  });

  it('keeps serving while slow clients are cut', async () => {
    const stalled = open();
    stalled.socket.write('POST /api/v1/auth/login HTTP/1.1\r\n');
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(200);
    await stalled.closed;
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });
});
