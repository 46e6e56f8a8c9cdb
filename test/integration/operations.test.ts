/**
 * What operators rely on: liveness and readiness, the documentation page served from the specs
 * without a CDN, and a graceful shutdown that lets an upload in flight finish, cuts one that
 * outlives the timeout without leaving a partial object, and closes the database.
 */
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { json } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import { METADATA_ANSWER_MS } from '../../src/objects/store/s3.js';

const GIT_LFS = 'application/vnd.git-lfs+json';
const AUTH = `Basic ${Buffer.from('wally:wally-password-1').toString('base64')}`;

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

describe('health and readiness', () => {
  it('is alive and ready when the database and the storage answer', async () => {
    const live = await fetch(`${s.url}/healthz`);
    expect(live.status).toBe(200);
    expect(await json(live)).toMatchObject({ status: 'ok' });
    const ready = await fetch(`${s.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await json(ready)).toMatchObject({ status: 'ok', checks: { database: 'ok', storage: 'ok' } });
    s.expectConformant();
  });

  it('is not ready, and says which dependency failed, when the storage cannot be reached', async () => {
    const port = await freePort();
    const cut = await startTestServer({ STORAGE: 's3', S3_BUCKET: 'nowhere', S3_ENDPOINT: `http://127.0.0.1:${port}`, S3_FORCE_PATH_STYLE: 'true', S3_ACCESS_KEY_ID: 'key-id', S3_SECRET_ACCESS_KEY: 'not-to-be-seen' });
    try {
      const res = await fetch(`${cut.url}/readyz`);
      expect(res.status).toBe(503);
      const body = await json(res);
      expect(body.status).toBe('unavailable');
      expect(body.checks.database).toBe('ok');
      expect(body.checks.storage).toMatch(/^unreachable: /);
      // Still alive: a load balancer keeps it out of rotation, an orchestrator does not kill it.
      expect((await fetch(`${cut.url}/healthz`)).status).toBe(200);
      cut.expectConformant();
      expect(cut.logLines.join('\n')).not.toContain('not-to-be-seen');
    } finally {
      await cut.stop();
    }
  });

  it('starts, and is not ready, when the storage endpoint accepts connections and never answers (a mistyped S3_ENDPOINT)', async () => {
    const held: Socket[] = [];
    const silent = createTcpServer((socket) => void held.push(socket.on('error', () => {})));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    try {
      const started = Date.now();
      const cut = await startTestServer({ STORAGE: 's3', S3_BUCKET: 'silent', S3_ENDPOINT: `http://127.0.0.1:${port}`, S3_FORCE_PATH_STYLE: 'true', S3_ACCESS_KEY_ID: 'key-id', S3_SECRET_ACCESS_KEY: 'not-to-be-seen' });
      try {
        // The start-up check was given up on after METADATA_ANSWER_MS, and housekeeping did not hold the start.
        expect(Date.now() - started).toBeLessThan(METADATA_ANSWER_MS + 8000);
        expect(cut.logLines.join('\n')).toMatch(/no answer within 10 s.*the object storage does not answer at start-up/);
        const res = await fetch(`${cut.url}/readyz`);
        expect(res.status).toBe(503);
        expect((await json(res)).checks.storage).toMatch(/^unreachable: /);
        cut.expectConformant();
        expect(cut.logLines.join('\n')).not.toContain('not-to-be-seen');
      } finally {
        await cut.stop();
      }
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((r) => silent.close(r));
    }
  }, 60_000);

  it('is not ready when the database is gone', async () => {
    const other = await startTestServer();
    await other.services.db.destroy();
    const res = await fetch(`${other.url}/readyz`);
    expect(res.status).toBe(503);
    expect((await json(res)).checks.database).toMatch(/^unreachable: /);
    other.expectConformant();
    await other.stop().catch(() => {}); // the database is already closed
  });
});

describe('documentation page', () => {
  it('serves Swagger UI and the three specs from the server itself', async () => {
    const page = await fetch(`${s.url}/docs`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/); // no CDN
    const refs = [...html.matchAll(/(?:href|src)="(docs\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThanOrEqual(3);
    for (const ref of refs) {
      const asset = await fetch(`${s.url}/${ref}`);
      expect(asset.status, ref).toBe(200);
      expect(asset.headers.get('content-type'), ref).toMatch(/^(text\/css|text\/javascript)/);
      expect((await asset.arrayBuffer()).byteLength, ref).toBeGreaterThan(100);
    }
    // The page's set-up is a file of its own (the pages allow no inline script).
    expect(refs).toContain('docs/assets/docs.js');
    const setup = await (await fetch(`${s.url}/docs/assets/docs.js`)).text();
    const specs = [...setup.matchAll(/url: '(docs\/openapi\/[a-z-]+)'/g)].map((m) => m[1]!);
    expect(specs).toHaveLength(3);
    for (const ref of specs) {
      const spec = await json(await fetch(`${s.url}/${ref}`));
      expect(spec.openapi).toBe('3.1.0');
      expect(Object.keys(spec.paths).length).toBeGreaterThan(2);
    }
    const missing = await fetch(`${s.url}/docs/assets/..%2Fpackage.json`);
    expect(missing.status).toBe(404);
    await missing.body?.cancel();
    s.expectConformant();
  });

  it('serves the specs for Swagger UI with this server in servers and no jsonSchemaDialect', async () => {
    for (const [name, base] of [['dashboard-mcp', s.url], ['objects-batch', `${s.url}/{org}/{repo}.git/info/lfs`], ['objects-legacy', `${s.url}/{org}/{repo}.git/info/lfs`]] as const) {
      const spec = await json(await fetch(`${s.url}/docs/openapi/${name}`));
      expect(spec.servers.map((x: { url: string }) => x.url), name).toEqual([base]);
      expect(spec, name).not.toHaveProperty('jsonSchemaDialect');
      expect(JSON.stringify(spec.servers), name).not.toContain('127.0.0.1:8080');
    }
    s.expectConformant();
  });

  it('redirects /docs/ to the page, relative to the request, so its assets resolve', async () => {
    const slash = await fetch(`${s.url}/docs/`, { redirect: 'manual' });
    expect(slash.status).toBe(308);
    expect(slash.headers.get('location')).toBe('../docs');
    expect(new URL(slash.headers.get('location')!, `${s.url}/docs/`).href).toBe(`${s.url}/docs`);
    const followed = await fetch(`${s.url}/docs/`);
    expect(followed.status).toBe(200);
    expect(await followed.text()).toContain('swagger-ui');
    s.expectConformant();
  });

  it('answers / with a landing page naming the three APIs at this server, the health endpoints and the error statuses', async () => {
    const home = await fetch(`${s.url}/`, { headers: { accept: 'text/html' } });
    expect(home.status).toBe(200);
    expect(home.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await home.text();
    expect(html).toContain(`${s.url}/api/v1/mcp`);
    expect(html).toContain(`${s.url}/{org}/{repo}.git/info/lfs`);
    expect(html).toMatch(/Batch object API v1\.3/);
    expect(html).toMatch(/Legacy object API v0\.5/);
    expect(html).toContain(`${s.url}/healthz`);
    expect(html).toContain(`${s.url}/readyz`);
    expect(html).toContain('id="object-api-errors"');
    // Every relative link on the page resolves on this server.
    for (const [, href] of html.matchAll(/href="([a-z][^"]*)"/g)) {
      const r = await fetch(new URL(href!, `${s.url}/`));
      expect(r.status, href).toBe(200);
      await r.body?.cancel();
    }
    s.expectConformant();
  });

  it("points documentation_url in object-API errors at this server's landing page", async () => {
    // Without credentials (a batch may be anonymous): the body is judged, and refused.
    const r = await fetch(`${s.url}/acme/site.git/info/lfs/objects/batch`, {
      method: 'POST',
      headers: { accept: GIT_LFS, 'content-type': GIT_LFS },
      body: JSON.stringify({ operation: 'download' }),
    });
    expect(r.status).toBe(422);
    const body = await json(r);
    expect(body.documentation_url).toBe(`${s.url}/#object-api-errors`);
    const statuses = [...(await (await fetch(body.documentation_url)).text()).matchAll(/<tr><td>(\d{3})<\/td>/g)].map((m) => Number(m[1]));
    expect(statuses).toContain(422);
    s.expectConformant();
  });
});

describe('graceful shutdown', () => {
  /** Starts a basic PUT whose body arrives in two halves, the second when `release` is called. */
  async function slowUpload(srv: TestServer, bytes: Buffer) {
    const oid = createHash('sha256').update(bytes).digest('hex');
    const batch = await fetch(`${srv.url}/acme/site.git/info/lfs/objects/batch`, {
      method: 'POST',
      headers: { authorization: AUTH, accept: GIT_LFS, 'content-type': GIT_LFS },
      body: JSON.stringify({ operation: 'upload', transfers: ['basic'], objects: [{ oid, size: bytes.length }] }),
    });
    const upload = (await json(batch)).objects[0].actions.upload;
    let release!: () => void;
    const status = new Promise<number | string>((resolve) => {
      const req = request(upload.href, { method: 'PUT', headers: { ...upload.header, 'content-length': String(bytes.length) } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', (err) => resolve(`error: ${(err as NodeJS.ErrnoException).code}`));
      req.write(bytes.subarray(0, bytes.length / 2));
      release = () => req.end(bytes.subarray(bytes.length / 2));
    });
    // The first half has reached the server when its handler is running; a short wait suffices as a hint, correctness does not depend on it.
    await new Promise((r) => setTimeout(r, 300));
    return { oid, status, release };
  }

  it('lets an upload in flight finish, refuses new connections, then closes', async () => {
    const srv = await startTestServer({ SHUTDOWN_TIMEOUT_MS: '10000' });
    await lfsFixture(srv.services.db, { org: 'acme', repo: 'site', username: 'wally', password: 'wally-password-1', access: 'write' });
    const bytes = randomBytes(256 * 1024);
    const up = await slowUpload(srv, bytes);
    const closing = srv.close();
    await new Promise((r) => setTimeout(r, 200));
    const refused = await fetch(`${srv.directUrl}/healthz`).then((r) => r.status, (err) => `refused: ${err.cause?.code ?? err.message}`);
    expect(String(refused)).toMatch(/^refused/);
    up.release();
    expect(await up.status).toBe(200);
    await closing;
    // The database was closed last.
    await expect(srv.services.db.raw('select 1')).rejects.toThrow();
    // On the same data, the object is there and whole.
    const again = await startTestServer({ DATA_DIR: srv.dataDir });
    const read = await again.services.objects.store.read(up.oid);
    const hash = createHash('sha256');
    for await (const chunk of read) hash.update(chunk as Buffer);
    expect(hash.digest('hex')).toBe(up.oid);
    await again.stop();
    await srv.stop();
  });

  it('cuts an upload that outlives the timeout, and keeps nothing of it', async () => {
    const srv = await startTestServer({ SHUTDOWN_TIMEOUT_MS: '300' });
    await lfsFixture(srv.services.db, { org: 'acme', repo: 'site', username: 'wally', password: 'wally-password-1', access: 'write' });
    const bytes = randomBytes(256 * 1024);
    const up = await slowUpload(srv, bytes);
    await srv.close(); // returns although the upload never finished
    expect(String(await up.status)).toMatch(/^error: /);
    const again = await startTestServer({ DATA_DIR: srv.dataDir });
    expect(await again.services.objects.store.stat(up.oid)).toBeNull();
    await again.stop();
    await srv.stop();
  });
});
