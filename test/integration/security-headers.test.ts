/**
 * Every HTML page of the route table carries a strict Content-Security-Policy (with
 * frame-ancestors 'none'), X-Frame-Options DENY, Referrer-Policy no-referrer and nosniff; every
 * answer of every route, errors and streams included, carries nosniff, and Strict-Transport-Security
 * when the server's public URL is https (never over plain http). Driven from the route table
 * (generated from the specs), so a page or endpoint added later is checked without a new test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
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

  it.each(htmlPages.map((op) => [op.path]))('%s carries the page headers', async (template) => {
    // A page with parameters is asked for without a session (a report: its sign-in page) or with
    // the spec's example link (a shared report: its "no such link" page): HTML too. The sign-in
    // and consent pages' forms post to the server (form-action 'self'); a test of their own checks them.
    const path = pathOf(template);
    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(`${s.url}${path}`, { method, headers: { accept: 'text/html' } });
      await res.body?.cancel();
      // An authorization page asked for outside an authorization: its refusal page (400).
      expect(template.startsWith('/oauth/') ? [400] : [200, 401, 404]).toContain(res.status);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      const csp = directives(res.headers.get('content-security-policy') ?? '');
      expect(csp.get('default-src')).toEqual(["'none'"]);
      expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
      // From the server itself, or (a page that carries its script inline) by the script's hash only.
      const scripts = csp.get('script-src') ?? [];
      expect(scripts.length === 1 && scripts[0] === "'self'" || scripts.every((v) => /^'sha256-[A-Za-z0-9+/=]+'$/.test(v)), scripts.join(' ')).toBe(true);
      expect(csp.get('base-uri')).toEqual(["'none'"]);
      expect(csp.get('form-action')).toEqual(["'none'"]);
      for (const [name, values] of csp) {
        expect(values, name).not.toContain("'unsafe-inline'");
        expect(values, name).not.toContain("'unsafe-eval'");
        expect(values, name).not.toContain('*');
      }
    }
  });

  it('have no inline script or style but what their policy allows by hash, and no inline handlers', async () => {
    for (const op of htmlPages) {
      const res = await fetch(`${s.url}${pathOf(op.path)}`);
      const html = await res.text();
      const csp = directives(res.headers.get('content-security-policy') ?? '');
      expect(html, op.path).not.toMatch(/\sstyle=|\son[a-z]+=/i);
      for (const [, tag, body] of html.matchAll(/<(script|style)\b(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/\1>/gi)) {
        const hash = `'sha256-${createHash('sha256').update(body!).digest('base64')}'`;
        expect(csp.get(tag!.toLowerCase() === 'script' ? 'script-src' : 'style-src'), `${op.path}: inline ${tag}`).toContain(hash);
      }
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

describe('Strict-Transport-Security', () => {
  const requests = routes.flatMap((route) => (Object.keys(route.methods) as HttpMethod[]).map((method) => [method, route.template] as const));
  const answersOf = async (base: string) => {
    const seen: string[] = [];
    for (const [method, template] of [...requests, ['GET', '/no/such/path'] as const]) {
      const res = await fetch(`${base}${pathOf(template)}`, { method, headers: { accept: 'application/json' } });
      await res.body?.cancel();
      seen.push(`${method} ${template} ${res.status}: ${res.headers.get('strict-transport-security')}`);
    }
    return seen;
  };

  it('is on every answer, errors included, when PUBLIC_URL is https', async () => {
    const https = await startTestServer({ PUBLIC_URL: 'https://pactum.example' });
    try {
      const seen = await answersOf(https.directUrl);
      expect(seen.filter((line) => !line.endsWith(': max-age=63072000'))).toEqual([]);
    } finally {
      await https.stop();
    }
  });

  it('is never sent over plain http', async () => {
    const seen = await answersOf(s.url);
    expect(seen.filter((line) => !line.endsWith(': null'))).toEqual([]);
  });
});
