/**
 * What a request body costs the server before anyone is known. A request that needs credentials
 * and has none is refused before its body is read; one without credentials may send only a small
 * body (MAX_ANONYMOUS_JSON_BYTES); and nesting beyond the limit is refused while the body
 * arrives, at the chunk where it goes too deep, before the rest is sent and before any parse.
 *
 * "Before the rest is sent" is shown by sending only part of a body and reading the answer while
 * the connection is still open with the rest unsent.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';

const GIT_LFS = 'application/vnd.git-lfs+json';

interface Partial { status: number; headers: string; body: string; socket: Socket }

/**
 * Sends the request line, headers and `first` of a body whose Content-Length announces `length`
 * bytes, and resolves with the answer the server gives without waiting for the rest.
 */
function sendPart(url: string, path: string, headers: Record<string, string>, length: number, first: string): Promise<Partial> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname, () => {
      const head = Object.entries({ host: u.host, 'content-length': String(length), ...headers }).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n`);
      socket.write(first);
    });
    let buf = '';
    socket.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const len = /content-length: (\d+)/i.exec(buf.slice(0, end));
      if (len && buf.length - end - 4 < Number(len[1])) return;
      resolve({ status: Number(buf.slice(9, 12)), headers: buf.slice(0, end), body: buf.slice(end + 4), socket });
    });
    socket.on('error', reject);
  });
}

describe('request bodies before credentials', () => {
  let s: TestServer;
  let token: string;
  beforeAll(async () => {
    s = await startTestServer({ MAX_ANONYMOUS_JSON_BYTES: '4096' });
    token = await s.token();
    await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'ivy', password: 'ivy-password-1', access: 'write' });
  });
  afterAll(() => s.stop());

  it('refuses POST /api/v1/mcp without credentials before reading its 4 MiB of nested arrays', async () => {
    const a = await sendPart(s.directUrl, '/api/v1/mcp', { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, 4 << 20, '['.repeat(64 * 1024));
    expect(a.status).toBe(401);
    expect(a.headers).toMatch(/www-authenticate: Bearer/i);
    expect(JSON.parse(a.body)).toMatchObject({ statusCode: 401 });
    a.socket.destroy();
  });

  it('refuses a sign-in body over the anonymous cap, from its Content-Length, with 413', async () => {
    const a = await sendPart(s.directUrl, '/api/v1/auth/login', { 'content-type': 'application/json', accept: 'application/json' }, 4 << 20, '{"username":"');
    expect(a.status).toBe(413);
    expect(JSON.parse(a.body).message).toMatch(/exceeds 4096 bytes .*MAX_ANONYMOUS_JSON_BYTES/);
    a.socket.destroy();
  });

  it('refuses a chunked sign-in body once it passes the anonymous cap', async () => {
    const big = JSON.stringify({ username: 'x', password: 'p'.repeat(10_000) });
    const res = await fetch(`${s.directUrl}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      // A stream: no Content-Length, so the cap applies as the bytes arrive.
      body: new Blob([big]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    await res.body?.cancel();
  });

  it('lets an authenticated caller send more than the anonymous cap', async () => {
    const args = { query: 'x'.repeat(8000) };
    const res = await fetch(`${s.directUrl}/api/v1/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dashboard_list_orgs', arguments: args } }),
    });
    expect(res.status).toBe(200);
    await res.body?.cancel();
  });

  it('refuses deep nesting from an authenticated caller while it arrives, before the rest is sent', async () => {
    const a = await sendPart(
      s.directUrl,
      '/api/v1/mcp',
      { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      2 << 20,
      `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":${'['.repeat(4096)}`,
    );
    expect(a.status).toBe(400);
    expect(JSON.parse(a.body).message).toMatch(/nests deeper than 32 levels/);
    a.socket.destroy();
  });

  it('refuses deep nesting in an object-API body the same way, in the Git LFS error shape', async () => {
    const a = await sendPart(
      s.directUrl,
      '/acme/site.git/info/lfs/objects/batch',
      { authorization: `Basic ${Buffer.from('ivy:ivy-password-1').toString('base64')}`, 'content-type': GIT_LFS, accept: GIT_LFS },
      1 << 20,
      `{"operation":"download","objects":${'['.repeat(4096)}`,
    );
    expect([400, 422]).toContain(a.status);
    expect(JSON.parse(a.body).message).toMatch(/nests deeper than 32 levels/);
    a.socket.destroy();
  });

  it('keeps brackets inside strings out of the count', async () => {
    const res = await fetch(`${s.directUrl}/api/v1/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dashboard_list_orgs', arguments: { query: `${'['.repeat(500)}\\"${'{'.repeat(500)}` } } }),
    });
    expect(res.status).toBe(200);
    await res.body?.cancel();
    s.expectConformant();
  });
});
