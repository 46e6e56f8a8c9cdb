/**
 * The TypeScript clients generated into generated/clients (as partners get them from
 * `make generate`) against a live pactum: the dashboard's MCP endpoint, and both object APIs
 * through the object client runtime (src/clients/objects-fetch.ts) as their fetch.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as dashboard from '../../generated/clients/dashboard/index.js';
import { createClient as createDashboardClient, createConfig as dashboardConfig } from '../../generated/clients/dashboard/client/index.js';
import * as legacy from '../../generated/clients/legacy/index.js';
import { createClient as createLegacyClient, createConfig as legacyConfig } from '../../generated/clients/legacy/client/index.js';
import * as batch from '../../generated/clients/batch/index.js';
import { createClient as createBatchClient, createConfig as batchConfig } from '../../generated/clients/batch/client/index.js';
import { createObjectsFetch, expectOk, ObjectsApiError } from '../../src/clients/objects-fetch.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';

let s: TestServer;
let orgId: string;
let token: string;
const LFS = 'application/vnd.git-lfs+json';

beforeAll(async () => {
  s = await startTestServer();
  orgId = (await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: 'wally-password-1', access: 'write' })).org.id;
  token = await s.token({ orgId, perms: ['admin.system'] });
});
afterAll(() => s.stop());
afterEach(() => s.expectConformant());

const objectsClient = <T extends typeof createLegacyClient | typeof createBatchClient>(create: T, config: typeof legacyConfig) =>
  create(
    config({
      baseUrl: `${s.url}/acme/site.git/info/lfs`,
      fetch: createObjectsFetch(),
      auth: (a: { scheme?: string }) => (a.scheme === 'basic' ? 'wally:wally-password-1' : undefined),
    }),
  );

describe('generated clients', () => {
  it('calls a tool through the dashboard client', async () => {
    const client = createDashboardClient(dashboardConfig({ baseUrl: s.url, auth: () => token }));
    const { data, response } = await dashboard.mcpPost({
      client,
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dashboard_get_org', arguments: { targetOrgId: orgId } } },
    });
    expect(response.status).toBe(200);
    expect((data as { result: { structuredContent: { slug: string } } }).result.structuredContent.slug).toBe('acme');
    const stub = await dashboard.mcpToolDashboardGetOrg({ client, body: { targetOrgId: orgId } });
    expect(stub.response.status).toBe(405);
    expect(stub.error).toMatchObject({ error: 'Method Not Allowed', statusCode: 405 });
  });

  it('uploads through the legacy client (announce, follow the links, verify) and reads the object back', async () => {
    const client = objectsClient(createLegacyClient, legacyConfig);
    const bytes = randomBytes(2048);
    const oid = createHash('sha256').update(bytes).digest('hex');
    const announced = await legacy.legacyCreateObject({ client, body: { oid, size: bytes.length }, headers: { accept: LFS, 'content-type': LFS } });
    expect(announced.response.status).toBe(202);
    const links = announced.data!._links;
    await expectOk(await fetch(links.upload!.href, { method: 'PUT', headers: links.upload!.header, body: new Uint8Array(bytes) }));
    await expectOk(await fetch(links.verify!.href, { method: 'POST', headers: { ...links.verify!.header, 'content-type': LFS }, body: JSON.stringify({ oid, size: bytes.length }) }));
    const meta = await legacy.legacyGetObject({ client, path: { oid }, headers: { accept: LFS } });
    expect(meta.data).toMatchObject({ oid, size: 2048 });
    const missing = await legacy.legacyGetObject({ client, path: { oid: '0'.repeat(64) }, headers: { accept: LFS } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toMatchObject({ message: expect.stringMatching(/does not exist/), request_id: expect.any(String) });
    // The runtime surfaces the server's message and request id, as seed 001 asks.
    const raw = await createObjectsFetch()(`${s.url}/acme/site.git/info/lfs/objects/${'0'.repeat(64)}`, { headers: { accept: LFS, authorization: `Basic ${Buffer.from('wally:wally-password-1').toString('base64')}` } });
    const err = await expectOk(raw).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ObjectsApiError);
    expect((err as ObjectsApiError).requestId).toMatch(/^[0-9A-Z]{26}$/);
    // documentation_url: this server's own landing page, which explains each status.
    expect((err as ObjectsApiError).message).toBe(`Object ${'0'.repeat(64)} does not exist (see ${s.url}/#object-api-errors) [request id ${(err as ObjectsApiError).requestId}]`);
  });

  it('negotiates, uploads and downloads through the batch client', async () => {
    const client = objectsClient(createBatchClient, batchConfig);
    const bytes = randomBytes(4096);
    const oid = createHash('sha256').update(bytes).digest('hex');
    const up = await batch.batchBatch({ client, headers: { accept: LFS, 'content-type': LFS }, body: { operation: 'upload', transfers: ['basic'], objects: [{ oid, size: bytes.length }] } });
    expect(up.data?.transfer).toBe('basic');
    const action = up.data!.objects[0]!.actions!.upload!;
    await expectOk(await fetch(action.href, { method: 'PUT', headers: action.header, body: new Uint8Array(bytes) }));
    const down = await batch.batchBatch({ client, headers: { accept: LFS, 'content-type': LFS }, body: { operation: 'download', objects: [{ oid, size: bytes.length }] } });
    const dl = down.data!.objects[0]!.actions!.download!;
    const got = await expectOk(await createObjectsFetch()(dl.href, { headers: dl.header }));
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    const lock = await batch.locksCreate({ client, headers: { accept: LFS, 'content-type': LFS }, body: { path: 'a/b.bin' } });
    expect(lock.response.status).toBe(201);
    const list = await batch.locksList({ client, headers: { accept: LFS } });
    expect(list.data?.locks.map((l) => l.path)).toEqual(['a/b.bin']);
  });
});
