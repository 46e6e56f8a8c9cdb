/**
 * The log lines an operator reads: one per request with who (subject, org; never a credential),
 * what (api, operationId; for object transfers the repository, oid and transfer), the status, the
 * duration and the bytes; a line that says a transfer was aborted; a start line with the effective
 * settings (secrets left out) and a last line once shutdown completes. LOG_FORMAT=pretty.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { bearer, mcpClient } from '../helpers/mcp.js';
import { bigObject, cutUpload, droppedDownload, streamRequest } from '../helpers/transfers.js';
import { createLogger } from '../../src/telemetry/log.js';

const GIT_LFS = 'application/vnd.git-lfs+json';
const W = `Basic ${Buffer.from('wally:wally-password-1').toString('base64')}`;
const JWT_SECRET = 'access-log-test-jwt-secret-0123456789abcdef';
const METRICS_TOKEN = 'access-log-metrics-token-1';

let s: TestServer;
let userId: string;
let orgId: string;

beforeAll(async () => {
  s = await startTestServer({ JWT_SECRET, METRICS_TOKEN });
  const { user, org } = await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: 'wally-password-1', access: 'write' });
  userId = user.id;
  orgId = org.id;
});
afterAll(() => s.stop());

const entries = (from = 0) => s.logLines.slice(from).map((l) => JSON.parse(l) as Record<string, unknown>);
/** Request lines are written once the response closes: wait for the one wanted. */
async function lineOf(from: number, match: (e: Record<string, unknown>) => boolean) {
  for (let i = 0; i < 200; i++) {
    const found = entries(from).find(match);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no such log line among:\n${s.logLines.slice(from).join('\n')}`);
}

async function batch(operation: 'upload' | 'download', objects: { oid: string; size: number }[], transfers = ['basic']) {
  const res = await fetch(`${s.directUrl}/acme/site.git/info/lfs/objects/batch`, {
    method: 'POST',
    headers: { authorization: W, accept: GIT_LFS, 'content-type': GIT_LFS },
    body: JSON.stringify({ operation, transfers, objects }),
  });
  expect(res.status).toBe(200);
  return (await res.json()).objects as { actions: Record<string, { href: string; header: Record<string, string> }> }[];
}

describe('request lines', () => {
  it('name the subject and org, the API and operation, the status, duration and bytes; never the credential', async () => {
    const from = s.logLines.length;
    const token = await s.token({ sub: userId, orgId });
    const client = await mcpClient(s.url, bearer(token));
    await client.callTool({ name: 'dashboard_list_reports', arguments: {} });
    await client.close();
    const line = await lineOf(from, (e) => e.msg === 'request' && e.operationId === 'mcp.post' && e.status === 200 && (e.bytesIn as number) > 50);
    expect(line).toMatchObject({ subject: userId, org: orgId, api: 'dashboard', method: 'POST', path: '/api/v1/mcp' });
    expect(line.ms).toBeGreaterThan(0);
    expect(line.bytesOut).toBeGreaterThan(0);
    expect(s.logLines.slice(from).join('\n')).not.toContain(token);
  });

  it('of object transfers also carry the repository, oid and transfer, and the object bytes in or out', async () => {
    const o = bigObject(3 * 1024 * 1024 + 17);
    const [up] = await batch('upload', [{ oid: o.oid, size: o.size }]);
    const from = s.logLines.length;
    expect((await streamRequest(up!.actions.upload!, 'PUT', {}, o.chunks(), o.size)).status).toBe(200);
    const put = await lineOf(from, (e) => e.operationId === 'objects.upload');
    expect(put).toMatchObject({ msg: 'request', status: 200, subject: userId, org: orgId, api: 'objects', repo: 'acme/site', oid: o.oid, transfer: 'basic', bytesIn: o.size });
    expect(JSON.stringify(put)).not.toMatch(/Bearer|authorization/i);

    const [down] = await batch('download', [{ oid: o.oid, size: o.size }]);
    const from2 = s.logLines.length;
    const res = await fetch(down!.actions.download!.href, { headers: down!.actions.download!.header });
    expect((await res.arrayBuffer()).byteLength).toBe(o.size);
    expect(await lineOf(from2, (e) => e.operationId === 'objects.download')).toMatchObject({ msg: 'request', status: 200, repo: 'acme/site', oid: o.oid, transfer: 'basic', bytesOut: o.size });
  });

  it('say so when a transfer is aborted: a download the client dropped, an upload cut off', async () => {
    const o = bigObject(16 * 1024 * 1024);
    const [up] = await batch('upload', [{ oid: o.oid, size: o.size }]);
    const from = s.logLines.length;
    await cutUpload(up!.actions.upload!, 'PUT', {}, o.chunks(), o.size, 1024 * 1024);
    expect(await lineOf(from, (e) => e.operationId === 'objects.upload')).toMatchObject({ msg: 'request aborted', aborted: true, repo: 'acme/site', oid: o.oid, transfer: 'basic' });

    expect((await streamRequest(up!.actions.upload!, 'PUT', {}, o.chunks(), o.size)).status).toBe(200);
    const [down] = await batch('download', [{ oid: o.oid, size: o.size }]);
    const from2 = s.logLines.length;
    const dropped = await droppedDownload(down!.actions.download!, { stopAfter: 256 * 1024 });
    expect(dropped.received).toBeLessThan(o.size);
    const line = await lineOf(from2, (e) => e.operationId === 'objects.download');
    expect(line).toMatchObject({ msg: 'request aborted', aborted: true, status: 200, oid: o.oid, transfer: 'basic' });
    expect(line.bytesOut).toBeLessThan(o.size);
  });
});

describe('request lines of resumable (tus) uploads', () => {
  it('carry the repository, oid and transfer "tus", the bytes a PATCH stored, and say so when a PATCH is cut off', async () => {
    const MiB = 1024 * 1024;
    const o = bigObject(8 * MiB);
    const [up] = await batch('upload', [{ oid: o.oid, size: o.size }], ['tus']);
    // The same transfer token serves /content and /tus.
    const tus = { href: up!.actions.upload!.href.replace('/content/', '/tus/'), header: up!.actions.upload!.header };
    const TUS = { 'tus-resumable': '1.0.0', 'content-type': 'application/offset+octet-stream' };
    const expected = { repo: 'acme/site', oid: o.oid, transfer: 'tus', subject: userId, org: orgId };

    const from = s.logLines.length;
    await cutUpload(tus, 'PATCH', { ...TUS, 'upload-offset': '0' }, o.chunks(), o.size, 3 * MiB);
    expect(await lineOf(from, (e) => e.operationId === 'tus.patch')).toMatchObject({ msg: 'request aborted', aborted: true, method: 'PATCH', ...expected });

    const from2 = s.logLines.length;
    const head = await fetch(tus.href, { method: 'HEAD', headers: { ...tus.header, 'tus-resumable': '1.0.0' } });
    expect(head.status).toBe(200);
    const offset = Number(head.headers.get('upload-offset'));
    expect(offset).toBeLessThan(o.size);
    expect(await lineOf(from2, (e) => e.operationId === 'tus.head')).toMatchObject({ msg: 'request', status: 200, ...expected });

    // The rest, from where the cut upload stopped.
    const rest = (function* () {
      let at = 0;
      for (const c of o.chunks()) {
        const keep = c.subarray(Math.max(0, offset - at));
        at += c.length;
        if (keep.length) yield keep;
      }
    })();
    const from3 = s.logLines.length;
    expect((await streamRequest(tus, 'PATCH', { ...TUS, 'upload-offset': String(offset) }, rest, o.size - offset)).status).toBe(204);
    const line = await lineOf(from3, (e) => e.operationId === 'tus.patch');
    expect(line).toMatchObject({ msg: 'request', status: 204, bytesIn: o.size - offset, ...expected });
    expect(line).not.toHaveProperty('aborted');
  });
});

describe('the start and the end', () => {
  it('logs the effective settings once serving, with secrets replaced by whether they are set', () => {
    const start = entries().find((e) => e.msg === 'pactum is serving')!;
    expect(start.url).toBe(s.url);
    const settings = start.settings as { jwt: { secret: string }; metrics: { token: string }; lfs: { maxBatchObjects: number }; logFormat: string };
    expect(settings.jwt.secret).toBe('[set]');
    expect(settings.metrics.token).toBe('[set]');
    expect(settings.lfs.maxBatchObjects).toBe(1000);
    expect(settings.logFormat).toBe('json');
    const text = JSON.stringify(start);
    expect(text).not.toContain(JWT_SECRET);
    expect(text).not.toContain(METRICS_TOKEN);
  });

  it('logs one last line when shutdown completes: how long it took and what it waited for', async () => {
    const t = await startTestServer();
    await t.stop();
    const last = t.logLines.map((l) => JSON.parse(l) as Record<string, unknown>).at(-1)!;
    expect(last.msg).toBe('shut down');
    expect(last.ms).toBeGreaterThanOrEqual(0);
    expect(Object.keys(last.waitedMs as object)).toEqual(['requests', 'monitoring', 'scans', 'compute', 'audit', 'database']);
    expect(last).toMatchObject({ requestsCut: false, auditRows: 0 });
  });
});

describe('LOG_FORMAT', () => {
  it('pretty writes lines for a person (not JSON), with the message and fields', () => {
    let out = '';
    const sink = new Writable({
      write(chunk, _enc, cb) {
        out += String(chunk);
        cb();
      },
    });
    const log = createLogger('info', sink, 'pretty');
    log.info({ operationId: 'ops.health', status: 200 }, 'request');
    expect(out).toMatch(/INFO.*request/);
    expect(out).toContain('operationId: "ops.health"');
    expect(() => JSON.parse(out)).toThrow();
  });

  it('refuses a format it does not know, at start', async () => {
    await expect(startTestServer({ LOG_FORMAT: 'xml' })).rejects.toThrow(/LOG_FORMAT/);
  });
});
