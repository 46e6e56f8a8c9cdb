/**
 * The Koa skeleton bound to the specs: stubs, refusals in each API's error shape, media types,
 * authentication failures. Every response is also checked against the specs (expectConformant).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, base64url } from 'jose';
import { toolNames } from '../../generated/tools.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { json } from '../helpers/http.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());
afterEach(() => s.expectConformant());

const mcp = (init: RequestInit & { token?: string } = {}) =>
  fetch(`${s.url}/api/v1/mcp`, {
    method: 'POST',
    ...init,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...(init.headers as Record<string, string>),
    },
  });

describe('tool stubs', () => {
  it('has a stub for each tool, each answering 405 with Allow and {error, statusCode}', async () => {
    expect(toolNames.length).toBeGreaterThan(30);
    for (const tool of toolNames) {
      const res = await fetch(`${s.url}/api/v1/mcp/tools/${tool}`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      expect(res.status, tool).toBe(405);
      expect(res.headers.get('allow'), tool).toBe('');
      const body = await json(res);
      expect(body).toMatchObject({ error: 'Method Not Allowed', statusCode: 405 });
      expect(body.message).toContain(tool);
    }
  });

  it('answers 405 to any method, any body and any caller, credentials or not', async () => {
    const token = await s.token();
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const res = await fetch(`${s.url}/api/v1/mcp/tools/dashboard_get_org`, { method, headers: { authorization: `Bearer ${token}` } });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('');
      await res.body?.cancel();
    }
    const malformed = await fetch(`${s.url}/api/v1/mcp/tools/dashboard_create_org`, { method: 'POST', body: 'not json', headers: { 'content-type': 'text/plain' } });
    expect(malformed.status).toBe(405);
    await malformed.body?.cancel();
  });
});

describe('POST /api/v1/mcp refusals', () => {
  it('answers a body that is not JSON with 400 {error, statusCode, message}, once the caller is known', async () => {
    const res = await mcp({ body: 'this is not json', token: await s.token() });
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body).toMatchObject({ error: 'Bad Request', statusCode: 400 });
    expect(body.message).toMatch(/not valid JSON/);
    // Without credentials the body is never read: the answer is the 401.
    const anonymous = await mcp({ body: 'this is not json' });
    expect(anonymous.status).toBe(401);
    await anonymous.body?.cancel();
  });

  it('refuses a batch array and a message that is not JSON-RPC 2.0 with 400', async () => {
    for (const payload of [[{ jsonrpc: '2.0', id: 1, method: 'ping' }], { jsonrpc: '1.0', id: 1, method: 'ping' }, { id: 1, method: 'ping' }, 'a string']) {
      const res = await mcp({ body: JSON.stringify(payload), token: await s.token() });
      expect(res.status, JSON.stringify(payload)).toBe(400);
      expect((await json(res)).statusCode).toBe(400);
    }
  });

  it('answers 401 with the resource-metadata challenge without credentials', async () => {
    const res = await mcp({ body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${s.url}/.well-known/oauth-protected-resource"`);
    expect(await json(res)).toMatchObject({ error: 'Unauthorized', statusCode: 401 });
  });

  it('refuses forged, expired, wrong-audience and alg:none tokens with 401 invalid_token', async () => {
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const good = await s.token();
    const [h, p] = good.split('.');
    const forged = `${h}.${p}.${base64url.encode(new Uint8Array(32))}`;
    const expired = await s.token({ ttl: -60 }).catch(() => null);
    const otherKey = await new SignJWT({ orgId: 'org_test', scopes: ['admin.system'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('usr_test')
      .setAudience(`${s.url}/api/v1/mcp`)
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('another key that is long enough for HS256!!'));
    const unsigned = `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${p}.`;
    for (const [name, token] of Object.entries({ forged, expired, otherKey, unsigned, garbage: 'abc.def' })) {
      if (!token) continue;
      const res = await mcp({ body: ping, token });
      expect(res.status, name).toBe(401);
      expect(res.headers.get('www-authenticate'), name).toMatch(/error="invalid_token"/);
      await res.body?.cancel();
    }
  });

  it('answers 415 for a body that is not application/json, 406 for an Accept it cannot satisfy, 413 for an oversized body', async () => {
    const token = await s.token();
    const r415 = await mcp({ body: '{}', token, headers: { 'content-type': 'text/plain' } });
    expect(r415.status).toBe(415);
    expect((await json(r415)).statusCode).toBe(415);
    const r406 = await mcp({ body: '{}', token, headers: { accept: 'text/html' } });
    expect(r406.status).toBe(406);
    await r406.body?.cancel();
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(5 * 1024 * 1024) } });
    const r413 = await mcp({ body: big, token });
    expect(r413.status).toBe(413);
    await r413.body?.cancel();
  });

  it('answers GET and DELETE with 405 and Allow: POST', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${s.url}/api/v1/mcp`, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect((await json(res)).statusCode).toBe(405);
    }
  });
});

describe('routing and media types', () => {
  it('serves /healthz', async () => {
    const res = await fetch(`${s.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ status: 'ok', version: '3.4.0' });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9A-Z]{26}$/);
  });

  it('answers unknown paths with 404 in the shape of the API the path belongs to', async () => {
    const d = await fetch(`${s.url}/api/v1/nothing`);
    expect(d.status).toBe(404);
    expect(await json(d)).toMatchObject({ error: 'Not Found', statusCode: 404 });
    const o = await fetch(`${s.url}/acme/site.git/info/lfs/nothing`, { headers: { accept: 'application/vnd.git-lfs+json' } });
    expect(o.status).toBe(404);
    expect(o.headers.get('content-type')).toBe('application/vnd.git-lfs+json');
    expect(await json(o)).toHaveProperty('message');
  });

  it('answers object-API errors in the vendor type the client asked for', async () => {
    const url = `${s.url}/acme/site.git/info/lfs/objects/batch`;
    const ask = async (accept?: string) => {
      const res = await fetch(url, { method: 'GET', headers: accept ? { accept } : {} });
      await res.body?.cancel();
      return res.headers.get('content-type');
    };
    expect(await ask('application/vnd.git-lfs+json')).toBe('application/vnd.git-lfs+json');
    expect(await ask('application/vnd.git-lfs+json; charset=utf-8')).toBe('application/vnd.git-lfs+json');
    expect(await ask('application/vnd.objstore+json')).toBe('application/vnd.objstore+json');
    expect(await ask('*/*')).toBe('application/vnd.objstore+json');
    expect(await ask(undefined)).toBe('application/vnd.objstore+json');
    expect(await ask('application/vnd.git-lfs+json, */*;q=0.5')).toBe('application/vnd.git-lfs+json');
  });

  it('refuses a batch request whose Accept names neither vendor type with 406, and a wrong body type with 415', async () => {
    const url = `${s.url}/acme/site.git/info/lfs/objects/batch`;
    const body = JSON.stringify({ operation: 'download', objects: [] });
    const r406 = await fetch(url, { method: 'POST', body, headers: { accept: 'application/json', 'content-type': 'application/vnd.git-lfs+json' } });
    expect(r406.status).toBe(406);
    expect(await json(r406)).toHaveProperty('message');
    const r415 = await fetch(url, { method: 'POST', body, headers: { accept: 'application/vnd.git-lfs+json', 'content-type': 'application/json' } });
    expect(r415.status).toBe(415);
    expect(r415.headers.get('content-type')).toBe('application/vnd.git-lfs+json');
    await r415.body?.cancel();
  });

  it('refuses a malformed oid in the path with a status the operation declares', async () => {
    const res = await fetch(`${s.url}/acme/site.git/info/lfs/objects/not-an-oid`, { headers: { accept: 'application/vnd.git-lfs+json' } });
    expect(res.status).toBe(404); // GET /objects/{oid} declares 404, not 400 or 422
    expect((await json(res)).message).toMatch(/oid/);
  });
});
