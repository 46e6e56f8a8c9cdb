/**
 * The route table (generated/operations.ts `routes`) bound through @koa/router: every operation
 * is reachable at its template, the most specific template wins, and what the library leaves to
 * us (a 405 for another method, bad percent-encoding, the trailing slash, letter case) is refused
 * in the API's shape. The conformance runner classifies requests with the same table.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { operations, routes } from '../../generated/operations.js';
import Router from '@koa/router';
import { matchRoute, operationFor } from '../../src/http/routes.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { json } from '../helpers/http.js';

const sample: Record<string, string> = { org: 'acme', repo: 'site', oid: 'a'.repeat(64), id: 'lock-1', file: 'swagger-ui.css', api: 'batch' };
const fill = (template: string) => template.replace(/\{(\w+)\}/g, (_, name: string) => sample[name] ?? 'x');

describe('the route table', () => {
  it('lists each path template once, most specific first, in @koa/router syntax', () => {
    expect(new Set(routes.map((r) => r.template)).size).toBe(routes.length);
    const batch = routes.findIndex((r) => r.template.endsWith('/objects/batch'));
    const byOid = routes.findIndex((r) => r.template.endsWith('/objects/{oid}'));
    expect(batch).toBeGreaterThanOrEqual(0);
    expect(batch).toBeLessThan(byOid);
    expect(routes[byOid]!.routerPath).toBe('/:org/:repo.git/info/lfs/objects/:oid');
  });

  it('leads every operation of the specs to itself, and HEAD of a GET to the GET', () => {
    for (const op of operations) {
      expect(operationFor(op.method, fill(op.path))?.operationId, `${op.method} ${op.path}`).toBe(op.operationId);
      if (op.method === 'GET' && !operations.some((o) => o.path === op.path && o.method === 'HEAD')) {
        expect(operationFor('HEAD', fill(op.path))?.operationId).toBe(op.operationId);
      }
    }
  });

  it('answers a parameterless path, remembered, exactly as @koa/router matches it, for any method', () => {
    const fresh = new Router({ strict: true, sensitive: true });
    for (const spec of routes) fresh.all(spec.template, spec.routerPath, (_ctx, next) => next());
    const statics = routes.filter((r) => !r.template.includes('{')).map((r) => r.template);
    expect(statics).toContain('/api/v1/mcp');
    for (const path of statics) {
      for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND']) {
        const layer = fresh.match(path, method).pathAndMethod[0];
        const expected = layer ? { template: layer.name, params: layer.params(path, layer.captures(path)), captures: layer.captures(path) } : undefined;
        for (let i = 0; i < 2; i++) {
          const m = matchRoute(method, path);
          expect(m && { template: m.spec.template, params: m.params, captures: m.captures }, `${method} ${path}`).toEqual(expected);
        }
      }
    }
  });

  it('matches every other path exactly as @koa/router does, the first matching template winning', () => {
    const fresh = new Router({ strict: true, sensitive: true });
    for (const spec of routes) fresh.all(spec.template, spec.routerPath, (_ctx, next) => next());
    const paths = routes.flatMap((r) => [fill(r.template), fill(r.template) + '/', fill(r.template).toUpperCase(), fill(r.template).replace(/acme/g, '%61%E0%A4%A'), fill(r.template).replace(/site/g, 'my.site.git')]);
    paths.push('/nowhere', '/acme', '/acme/site.git/info/lfs', '/acme/site.git/info/lfs/objects/', '//site.git/info/lfs/objects/batch', '/a/b/c.git/info/lfs/objects/batch', '/reports/x.y.sarif', '/shared/%20/screenshots/%2F');
    for (const path of paths) {
      for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'OPTIONS', 'PROPFIND']) {
        const layer = fresh.match(path, method).pathAndMethod[0];
        const expected = layer ? { template: layer.name, params: layer.params(path, layer.captures(path)), captures: layer.captures(path) } : undefined;
        const m = matchRoute(method, path);
        expect(m && { template: m.spec.template, params: m.params, captures: m.captures }, `${method} ${path}`).toEqual(expected);
      }
    }
  });

  it('serves nothing for another method at the most specific template, another case or a trailing slash', () => {
    expect(operationFor('GET', '/acme/site.git/info/lfs/objects/batch')).toBeUndefined();
    expect(operationFor('GET', '/ACME/site.GIT/info/lfs/objects/' + 'a'.repeat(64))).toBeUndefined();
    expect(operationFor('GET', '/healthz/')).toBeUndefined();
    expect(operationFor('GET', '/Healthz')).toBeUndefined();
    expect(operationFor('GET', '/nowhere')).toBeUndefined();
  });

  it('takes a repository name with dots up to the last .git', () => {
    expect(operationFor('POST', '/acme/my.site.git/info/lfs/objects/batch')?.operationId).toBe('batch.batch');
  });
});

describe('the server answers what the router leaves to it', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.stop());
  afterEach(() => s.expectConformant());

  it('answers a GET of .../objects/batch with 405 and Allow: POST, not a download of an object named "batch"', async () => {
    const res = await fetch(`${s.url}/acme/site.git/info/lfs/objects/batch`, { headers: { accept: 'application/vnd.git-lfs+json' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect((await json(res)).message).toContain('POST');
  });

  it('refuses a path parameter that is not valid percent-encoded UTF-8 with the status the operation declares', async () => {
    const res = await fetch(`${s.url}/acme/site.git/info/lfs/objects/%E0%A4%A`, { headers: { accept: 'application/vnd.git-lfs+json' } });
    expect([400, 404, 422]).toContain(res.status);
    expect((await json(res)).message).toBe('The path is not valid percent-encoded UTF-8');
  });

  it('decodes percent-encoded parameters before validating them', async () => {
    const res = await fetch(`${s.url}/acme/site.git/info/lfs/objects/${'%61'.repeat(64)}`, {
      headers: { accept: 'application/vnd.git-lfs+json', authorization: `Basic ${Buffer.from('nobody:wrong').toString('base64')}` },
    });
    // Decoded, the oid is valid: the request gets as far as the credentials.
    expect(res.status).toBe(401);
    await res.body?.cancel();
  });

  it('refuses a JSON body with a NUL character in a string or a key, and not one that only writes \\u0000 as text', async () => {
    const post = (text: string) =>
      fetch(`${s.url}/acme/site.git/info/lfs/objects/batch`, { method: 'POST', headers: { accept: 'application/vnd.git-lfs+json', 'content-type': 'application/vnd.git-lfs+json' }, body: text });
    for (const text of ['{"operation":"download","objects":[{"oid":"a\\u0000","size":1}]}', '{"operation":"download","objects":[],"x\\u0000":1}']) {
      const res = await post(text);
      expect(res.status, text).toBe(400);
      expect((await json(res)).message).toBe('The body contains a NUL character (\\u0000), which no field accepts');
    }
    const literal = await post('{"operation":"download","objects":[{"oid":"a\\\\u0000","size":1}]}');
    expect((await json(literal)).message ?? '').not.toContain('NUL');
  });

  it('redirects /docs/ to ../docs and answers 404 for a trailing slash elsewhere', async () => {
    const docs = await fetch(`${s.url}/docs/`, { redirect: 'manual' });
    expect(docs.status).toBe(308);
    expect(docs.headers.get('location')).toBe('../docs');
    const health = await fetch(`${s.url}/healthz/`, { method: 'POST' });
    expect(health.status).toBe(404);
    await health.body?.cancel();
  });
});
