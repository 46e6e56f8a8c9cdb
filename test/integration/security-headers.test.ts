/**
 * Every HTML page of the route table carries a strict Content-Security-Policy (with
 * frame-ancestors 'none'), X-Frame-Options DENY, Referrer-Policy no-referrer and nosniff; every
 * answer of every route, errors and streams included, carries nosniff. Driven from the route table
 * (generated from the specs), so a page or endpoint added later is checked without a new test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, routes, type HttpMethod } from '../../generated/operations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

/** A concrete path for a template: any value will do, the answer may be an error. */
const pathOf = (template: string) => template.replace(/\{(\w+)\}/g, (_m, name: string) => (name === 'oid' ? 'a'.repeat(64) : `x${name}`));

const htmlPages = operations.filter((op) => op.method === 'GET' && Object.values(op.responses).some((r) => r.mediaTypes.includes('text/html')));

/** The directives of a Content-Security-Policy value, by name. */
function directives(policy: string): Map<string, string[]> {
  return new Map(policy.split(';').map((d) => d.trim().split(/\s+/)).filter((d) => d[0]).map(([name, ...values]) => [name!.toLowerCase(), values]));
}

describe('HTML pages', () => {
  it('are found in the route table (the home page and the documentation at least)', () => {
    expect(htmlPages.map((op) => op.path)).toEqual(expect.arrayContaining(['/', '/docs']));
  });

  it.each(htmlPages.map((op) => [op.path]))('%s carries the page headers', async (path) => {
    expect(path, 'an HTML page with path parameters needs values here').not.toMatch(/\{/);
    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(`${s.url}${path}`, { method, headers: { accept: 'text/html' } });
      await res.body?.cancel();
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      const csp = directives(res.headers.get('content-security-policy') ?? '');
      expect(csp.get('default-src')).toEqual(["'none'"]);
      expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
      expect(csp.get('script-src')).toEqual(["'self'"]);
      expect(csp.get('base-uri')).toEqual(["'none'"]);
      expect(csp.get('form-action')).toEqual(["'none'"]);
      for (const [name, values] of csp) {
        expect(values, name).not.toContain("'unsafe-inline'");
        expect(values, name).not.toContain("'unsafe-eval'");
        expect(values, name).not.toContain('*');
      }
    }
  });

  it('have no inline script or style of their own (the policy would block them)', async () => {
    for (const op of htmlPages) {
      const html = await (await fetch(`${s.url}${op.path}`)).text();
      expect(html, op.path).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style\b|\sstyle=|\son[a-z]+=/i);
    }
  });
});

describe('every answer', () => {
  const requests = routes.flatMap((route) => (Object.keys(route.methods) as HttpMethod[]).map((method) => [method, route.template] as const));

  it.each(requests)('%s %s carries X-Content-Type-Options: nosniff, whatever the status', async (method, template) => {
    const res = await fetch(`${s.url}${pathOf(template)}`, {
      method,
      headers: { accept: 'application/json', ...(['POST', 'PUT', 'PATCH'].includes(method) ? { 'content-type': 'application/json' } : {}) },
      ...(['POST', 'PUT', 'PATCH'].includes(method) ? { body: '{}' } : {}),
    });
    await res.body?.cancel();
    expect(res.headers.get('x-content-type-options'), `${method} ${template} answered ${res.status}`).toBe('nosniff');
    if (!(res.headers.get('content-type') ?? '').startsWith('text/html')) expect(res.headers.get('content-security-policy')).toBeNull();
  });

  it('includes an unknown path, a 405 and an MCP answer streamed as SSE', async () => {
    const unknown = await fetch(`${s.url}/no/such/path`);
    const wrongMethod = await fetch(`${s.url}/api/v1/mcp`, { method: 'GET' });
    const stream = await fetch(`${s.url}/api/v1/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await s.token()}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dashboard_list_orgs', arguments: {}, _meta: { progressToken: 'p' } } }),
    });
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    for (const res of [unknown, wrongMethod, stream]) {
      await res.body?.cancel();
      expect(res.headers.get('x-content-type-options'), `${res.url} ${res.status}`).toBe('nosniff');
    }
    expect([unknown.status, wrongMethod.status]).toEqual([404, 405]);
  });
});
