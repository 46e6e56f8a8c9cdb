/**
 * OpenTelemetry traces, received by a small OTLP/HTTP (JSON) receiver the test starts: the span
 * tree of a batch upload (the batch request, the PUT, their storage calls and queries) and of an
 * MCP call (the request, the tool, its queries), each continuing the client's W3C traceparent;
 * a scan's own trace, a span per page, with no trace context sent to the scanned site.
 * Without OTEL_EXPORTER_OTLP_ENDPOINT nothing is traced.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { bearer, mcpClient, ok } from '../helpers/mcp.js';
import { Client as Client2026, StreamableHTTPClientTransport as Transport2026 } from '@modelcontextprotocol/client';
import { injectTraceContext, inSpan, startTracing, stopTracing, tracingOn } from '../../src/telemetry/tracing.js';
import { testConnection } from '../../src/domain/connections/client.js';
import { fetchPage } from '../../src/domain/scan/fetch-page.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number; boolValue?: boolean } }[];
}

const GIT_LFS = 'application/vnd.git-lfs+json';
const W = `Basic ${Buffer.from('wally:wally-password-1').toString('base64')}`;
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
/** The traces MCP requests name in their `params._meta` (2025-11-25 and 2026-07-28). */
const META_TRACES = { legacy: '0af7651916cd43dd8448eb211c80319c', modern: '5e1f0c2ab8d34e6f9a7b3c2d1e0f4a5b' };
const hex = (n: number) => randomBytes(n).toString('hex');

let receiver: Server;
const spans: OtlpSpan[] = [];
const contentTypes: string[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      contentTypes.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      const data = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
      for (const rs of data.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
});
afterAll(() => new Promise<void>((r) => receiver.close(() => r())));

const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : v?.boolValue);
};
const childrenOf = (s: OtlpSpan) => spans.filter((c) => c.parentSpanId === s.spanId && c.traceId === s.traceId);

/** The tree under `root`, one line a span, indented by depth: what the report shows. */
function tree(root: OtlpSpan, depth = 0): string[] {
  return [`${'  '.repeat(depth)}${root.name}`, ...childrenOf(root).flatMap((c) => tree(c, depth + 1))];
}

/** A scanned site of three linked pages that records the trace headers of every request it gets. */
async function recordingSite() {
  const seen: { url: string; traceparent?: string; tracestate?: string }[] = [];
  const page = (title: string, links: string[]) =>
    `<!doctype html><html lang="en"><title>${title}</title><main>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</main></html>`;
  const pages: Record<string, string> = { '/': page('Home', ['/a', '/b']), '/a': page('A', ['/']), '/b': page('B', ['/a']) };
  const server = createServer((req, res) => {
    seen.push({ url: req.url!, traceparent: req.headers.traceparent as string | undefined, tracestate: req.headers.tracestate as string | undefined });
    const body = pages[req.url!];
    if (body) return void res.writeHead(200, { 'content-type': 'text/html' }).end(body);
    res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><title>404</title>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('traces', () => {
  let s: TestServer;
  const parents = { batch: hex(8), put: hex(8), mcp: hex(8), queue: hex(8), metaHttp: hex(8), metaLegacy: hex(8), metaModern: hex(8) };
  let oid: string;
  let site: Awaited<ReturnType<typeof recordingSite>>;
  let scanId: string;

  beforeAll(async () => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    site = await recordingSite();
    s = await startTestServer({ OTEL_EXPORTER_OTLP_ENDPOINT: url, SCAN_ENGINE: 'jsdom', SCAN_ALLOW_PRIVATE_NETWORKS: 'true' });
    expect(tracingOn()).toBe(true);
    await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: 'wally-password-1', access: 'write' });
    const bytes = randomBytes(4096);
    oid = createHash('sha256').update(bytes).digest('hex');
    const batch = await fetch(`${s.directUrl}/acme/site.git/info/lfs/objects/batch`, {
      method: 'POST',
      headers: { authorization: W, accept: GIT_LFS, 'content-type': GIT_LFS, traceparent: `00-${TRACE}-${parents.batch}-01` },
      body: JSON.stringify({ operation: 'upload', transfers: ['basic'], objects: [{ oid, size: bytes.length }] }),
    });
    expect(batch.status).toBe(200);
    const { upload } = (await batch.json()).objects[0].actions;
    const put = await fetch(upload.href, { method: 'PUT', headers: { ...upload.header, traceparent: `00-${TRACE}-${parents.put}-01` }, body: bytes });
    expect(put.status).toBe(200);
    const client = await mcpClient(s.url, { ...bearer(await s.token()), traceparent: `00-${TRACE}-${parents.mcp}-01` });
    ok(await client.callTool({ name: 'dashboard_list_reports', arguments: {} }));
    await client.close();
    // Trace context in the request's _meta: a 2025-11-25 call whose HTTP headers name another trace, and a 2026-07-28 call.
    const legacy = await mcpClient(s.url, { ...bearer(await s.token()), traceparent: `00-${TRACE}-${parents.metaHttp}-01` });
    ok(await legacy.callTool({ name: 'dashboard_list_fleet', arguments: {}, _meta: { traceparent: `00-${META_TRACES.legacy}-${parents.metaLegacy}-01` } }));
    await legacy.close();
    const modern = new Client2026({ name: 'pactum-tests-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await modern.connect(new Transport2026(new URL(`${s.url}/api/v1/mcp`), { requestInit: { headers: bearer(await s.token()) } }));
    ok(await modern.callTool({ name: 'dashboard_scan_summary_for_fleet', arguments: {}, _meta: { traceparent: `00-${META_TRACES.modern}-${parents.metaModern}-01`, tracestate: 'pactum=tests' } }));
    // A malformed traceparent is not joined: the tool stays under the request's span.
    ok(await modern.callTool({ name: 'dashboard_list_orgs', arguments: {}, _meta: { traceparent: 'not-a-traceparent' } }));
    await modern.close();
    // A scan of the three pages, queued by a request that carries the client's trace.
    const queuer = await mcpClient(s.url, { ...bearer(await s.token()), traceparent: `00-${TRACE}-${parents.queue}-01` });
    scanId = (ok(await queuer.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: `${site.url}/`, scanMode: 'site', maxPages: 3 } })) as { scanId: string }).scanId;
    await queuer.close();
    for (let i = 0; i < 1200 && !(await s.services.db('scans').where({ id: scanId }).first()).finished_at; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await s.services.db('scans').where({ id: scanId }).first()).status).toBe('completed');
    // Stopping flushes what is batched.
    await s.stop();
    await site.close();
    expect(tracingOn()).toBe(false);
  }, 120_000);

  it('are exported over OTLP/HTTP as JSON to /v1/traces', () => {
    expect(contentTypes.length).toBeGreaterThan(0);
    for (const c of contentTypes) expect(c).toBe('POST /v1/traces application/json');
  });

  it('of a batch upload: the operations continue the client’s traceparent; queries and storage calls are their children', () => {
    const batch = spans.find((x) => x.name === 'batch.batch')!;
    expect(batch).toMatchObject({ traceId: TRACE, parentSpanId: parents.batch, kind: 2 });
    expect(attr(batch, 'http.response.status_code')).toBe(200);
    expect(attr(batch, 'pactum.api')).toBe('batch');
    expect(childrenOf(batch).map((c) => c.name)).toContain('db select');
    const query = childrenOf(batch).find((c) => c.name === 'db select')!;
    expect(String(attr(query, 'db.query.text'))).toMatch(/select/i);
    expect(String(attr(query, 'db.query.text'))).not.toContain(oid); // placeholders, never values

    const put = spans.find((x) => x.name === 'objects.upload')!;
    expect(put).toMatchObject({ traceId: TRACE, parentSpanId: parents.put, kind: 2 });
    expect(attr(put, 'pactum.transfer')).toBe('basic');
    const names = childrenOf(put).map((c) => c.name);
    expect(names).toContain('storage put');
    expect(names.filter((n) => n.startsWith('db '))).not.toHaveLength(0);
    console.log(`span tree of the batch upload:\n${[...tree(batch), ...tree(put)].join('\n')}`);
  });

  it('of an MCP call: the request, the tool under it, the tool’s queries under the tool', () => {
    const tool = spans.find((x) => x.name === 'tool dashboard_list_reports')!;
    expect(tool).toBeDefined();
    expect(attr(tool, 'mcp.tool')).toBe('dashboard_list_reports');
    const request = spans.find((x) => x.spanId === tool.parentSpanId)!;
    expect(request).toMatchObject({ name: 'mcp.post', traceId: TRACE, parentSpanId: parents.mcp, kind: 2 });
    expect(childrenOf(tool).some((c) => c.name.startsWith('db '))).toBe(true);
    console.log(`span tree of the MCP call:\n${tree(request).join('\n')}`);
  });

  it('of an MCP call with trace context in its _meta: the tool joins that trace, under either revision', () => {
    const legacy = spans.find((x) => x.name === 'tool dashboard_list_fleet')!;
    expect(legacy).toMatchObject({ traceId: META_TRACES.legacy, parentSpanId: parents.metaLegacy });
    expect(childrenOf(legacy).some((c) => c.name.startsWith('db '))).toBe(true);
    // The HTTP request stays in the trace its headers name.
    expect(spans.find((x) => x.parentSpanId === parents.metaHttp)).toMatchObject({ name: 'mcp.post', traceId: TRACE });

    const modern = spans.find((x) => x.name === 'tool dashboard_scan_summary_for_fleet')!;
    expect(modern).toMatchObject({ traceId: META_TRACES.modern, parentSpanId: parents.metaModern, traceState: 'pactum=tests' });
    expect(childrenOf(modern).some((c) => c.name.startsWith('db '))).toBe(true);

    const malformed = spans.find((x) => x.name === 'tool dashboard_list_orgs')!;
    expect(spans.find((x) => x.spanId === malformed.parentSpanId)).toMatchObject({ name: 'mcp.post', traceId: malformed.traceId });
  });

  it('of a scan: a trace of its own, a "scan page" span per page checked under it, and no trace context sent to the site', () => {
    const scan = spans.find((x) => x.name === 'scan' && attr(x, 'pactum.scan.id') === scanId)!;
    expect(scan).toBeDefined();
    // Not a child of the request that queued it, nor in the client's trace.
    expect(scan.parentSpanId ?? '').toBe('');
    expect(scan.traceId).not.toBe(TRACE);
    expect(attr(scan, 'pactum.scan.mode')).toBe('site');
    expect(attr(scan, 'pactum.scan.attempt')).toBe(1);
    const inScan = spans.filter((x) => x.traceId === scan.traceId);
    const pages = inScan.filter((x) => x.name === 'scan page');
    expect(pages.map((p) => attr(p, 'url.full')).sort()).toEqual([`${site.url}/`, `${site.url}/a`, `${site.url}/b`]);
    for (const p of pages) {
      expect(p.parentSpanId).toBe(scan.spanId);
      expect(attr(p, 'pactum.engine')).toBe('jsdom');
    }
    // Its queries are in its trace too (the pages written as they finish).
    expect(inScan.some((x) => x.name === 'db insert')).toBe(true);
    // The site got the scan's requests (its pages, the sitemap), none of them with a trace context.
    expect(site.seen.map((r) => r.url)).toEqual(expect.arrayContaining(['/', '/a', '/b']));
    expect(site.seen.filter((r) => r.traceparent !== undefined || r.tracestate !== undefined)).toEqual([]);
    console.log(`span tree of the scan:\n${tree(scan).join('\n')}`);
  });

  it('are off without OTEL_EXPORTER_OTLP_ENDPOINT: no spans, the SDK not started', async () => {
    const before = spans.length;
    const plain = await startTestServer();
    try {
      expect(tracingOn()).toBe(false);
      expect((await fetch(`${plain.directUrl}/healthz`, { headers: { traceparent: `00-${TRACE}-${hex(8)}-01` } })).status).toBe(200);
    } finally {
      await plain.stop();
    }
    await new Promise((r) => setTimeout(r, 1500));
    expect(spans.length).toBe(before);
  });
});

describe('the trace context on outbound calls', () => {
  it('goes to a connected service, and never to a scanned site', async () => {
    const seen: { url: string; traceparent: string | undefined }[] = [];
    const peer = createServer((req, res) => {
      seen.push({ url: req.url!, traceparent: req.headers.traceparent as string | undefined });
      if (req.url === '/api/v1/oauth/token') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"t","token_type":"bearer"}');
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html lang="en"><title>x</title></html>');
    });
    await new Promise<void>((r) => peer.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(peer.address() as AddressInfo).port}`;
    await startTracing(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}`, 'test');
    try {
      await inSpan('outer', {}, async () => {
        // As the connection store hands them out (app/services.ts gives it the tracer's injectTraceContext).
        await testConnection({ url, clientId: 'pactum', clientSecret: 'secret-of-the-test', policy: { allowPrivateNetworks: true }, traceContext: injectTraceContext }, 2000);
        await fetchPage(`${url}/page.html`, { allowPrivateNetworks: true, timeoutMs: 2000 });
      });
      const token = seen.find((x) => x.url === '/api/v1/oauth/token')!;
      expect(token.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      expect(token.traceparent!.split('-')[1]).not.toBe('0'.repeat(32));
      const page = seen.find((x) => x.url === '/page.html')!;
      expect(page).toBeDefined();
      expect(page.traceparent).toBeUndefined();
    } finally {
      await stopTracing();
      await new Promise<void>((r) => peer.close(() => r()));
    }
  });
});
