/**
 * The body-rate guard (src/http/slow-clients.ts) watches a request only while its body arrives.
 * Once the body is read, or its connection is gone (a request refused before its body, whose
 * socket is destroyed), nothing of the guard may keep the request alive: a guard that held each
 * request until its next window (30 s by default) made a flood of refused bodies grow the heap
 * by every request, socket and buffer it sent.
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { drainUnreadBodies, guardSlowClients, refuseUnreadBody } from '../../src/http/slow-clients.js';
import { PACE, setCollector } from '../../src/http/transient-buffers.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let server: Server;
let port: number;
const alive = new Set<number>();
const collected = new FinalizationRegistry<number>((id) => alive.delete(id));
let next = 0;

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    const id = next++;
    alive.add(id);
    collected.register(req, id);
    if (req.headers['x-refuse']) {
      // As a request without credentials is refused: answered before its body is read.
      refuseUnreadBody(req, res);
      res.statusCode = 401;
      res.end();
      return;
    }
    req.resume();
    req.once('end', () => res.end('ok'));
  });
  guardSlowClients(server, { headersTimeoutMs: 10_000, idleTimeoutMs: 60_000, minBodyRate: 1024, bodyRateWindowMs: 30_000 });
  drainUnreadBodies(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** POSTs a body of `size` bytes on a connection of its own; resolves once the connection closes. */
function post(size: number, refuse: boolean): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ port, host: '127.0.0.1', method: 'POST', agent: false, headers: { 'content-length': size, ...(refuse ? { 'x-refuse': '1' } : {}) } }, (res) => {
      res.resume();
      res.socket.once('close', () => resolve(res.statusCode!));
    });
    req.once('error', () => resolve(0));
    req.end(Buffer.alloc(size, 0x5b));
  });
}

async function collectAll() {
  for (let i = 0; i < 20 && alive.size > 0; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
  }
}

it('lets go of a request once its body has been read', async () => {
  const statuses = await Promise.all(Array.from({ length: 20 }, () => post(64 * 1024, false)));
  expect(statuses.every((s) => s === 200)).toBe(true);
  await collectAll();
  expect(alive.size).toBe(0);
});

it('lets go of a request refused before its body, once its connection is destroyed', async () => {
  const statuses = await Promise.all(Array.from({ length: 20 }, () => post(1 << 20, true)));
  expect(statuses.filter((s) => s === 401).length).toBeGreaterThan(0);
  await collectAll();
  expect(alive.size).toBe(0);
});

it('counts what arrived of a refused body as garbage to collect soon (a young-generation collection per PACE bytes)', async () => {
  let collections = 0;
  const restore = setCollector(() => collections++);
  try {
    // Each refused request leaves up to a socket read of its body behind; enough of them pass PACE.
    const n = Math.ceil((2 * PACE) / (16 * 1024));
    for (let i = 0; i < n; i += 20) await Promise.all(Array.from({ length: Math.min(20, n - i) }, () => post(1 << 20, true)));
    expect(collections).toBeGreaterThan(0);
  } finally {
    restore();
  }
});
