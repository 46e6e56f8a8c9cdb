/**
 * A JSON body is read as text while it arrives (src/http/json-body.ts). Each piece of the body is
 * the reader's alone once decoded, and its memory is handed back at once (freeNow, for pieces of
 * FREED_FROM bytes or more) rather than at a collection; the text must come out whole, multi-byte characters split between pieces included.
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { JsonBodyError, readJsonText } from '../../src/http/json-body.js';
import { FREED_FROM } from '../../src/http/transient-buffers.js';

let server: Server;
let port: number;
/** The pieces each request's body arrived in, as a listener before the reader saw them. */
let pieces: Buffer[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    pieces = [];
    req.prependListener('data', (c: Buffer) => pieces.push(c));
    readJsonText(req, { limit: 8 << 20, maxDepth: 32 }).then(
      (text) => res.end(JSON.stringify({ length: text.length, sameAsSent: text === JSON.stringify(expected) })),
      (err: JsonBodyError) => res.writeHead(400).end(err.reason),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

let expected: unknown = null;

/** Sends `body` in `parts` writes a few milliseconds apart, so that it arrives in several pieces. */
function post(body: Buffer, parts: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    const step = Math.ceil(body.length / parts) + 1; // odd cuts: through the middle of characters
    let at = 0;
    const next = () => {
      if (at >= body.length) return void req.end();
      req.write(body.subarray(at, (at += step)));
      setTimeout(next, 5);
    };
    next();
  });
}

it('reads a body sent in many pieces whole, multi-byte characters cut between pieces included, and frees each piece once decoded', async () => {
  expected = { jsonrpc: '2.0', id: 1, params: { text: '€ünïcødé ✓ '.repeat(60_000) } };
  const body = Buffer.from(JSON.stringify(expected));
  const r = await post(body, 17);
  expect(r.status).toBe(200);
  expect(JSON.parse(r.text)).toEqual({ length: JSON.stringify(expected).length, sameAsSent: true });
  // Every piece worth freeing went back as soon as the reader had it: the earlier listener's copies read empty.
  expect(pieces.filter((p) => p.length === 0).length).toBeGreaterThan(5);
  expect(pieces.every((p) => p.length === 0 || p.length < FREED_FROM)).toBe(true);
});

it('refuses a body nested too deep, and frees the pieces it read', async () => {
  const r = await post(Buffer.from('['.repeat(200_000)), 4);
  expect(r).toEqual({ status: 400, text: 'too-deep' });
  expect(pieces.filter((p) => p.length === 0).length).toBeGreaterThan(0);
  expect(pieces.every((p) => p.length === 0 || p.length < FREED_FROM)).toBe(true);
});
