/**
 * The generated TypeScript client (`make clients` → .build/clients/typescript, typescript-fetch,
 * with the MCP tool wrapper and the object-API fetch added) type-checked, then used against a live
 * pactum that this file starts: both object APIs through `createObjectsFetch()` as the fetch, and
 * every dashboard tool through `McpTools`. Every response the server sent is checked against the
 * specs, as in every other server test.
 */
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { toolNames, tools as catalogue, type ToolName as CatalogueToolName } from '../../generated/tools.js';
import { clientsDir, requireClient, root, run } from './run.js';
import {
  BatchApi,
  Configuration,
  LocksApi,
  McpError,
  McpToolError,
  McpTools,
  ObjectsApi,
  ObjectsApiError,
  ResponseError,
  ToolsOrgsApi,
  TransferApi,
  createObjectsFetch,
  expectOk,
  type Link,
  type ToolName,
} from '../../.build/clients/typescript/src/index.js';

// The wrapper knows exactly the server's tools: checked when this file is type-checked (below).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameTools: Same<ToolName, CatalogueToolName> = true;

let s: TestServer;
let orgId: string;
let token: string;
const USER = { username: 'wally', password: 'wally-password-1' };
const ORG = 'acme';
const REPO = 'site';

beforeAll(async () => {
  requireClient('typescript', 'package.json');
  s = await startTestServer();
  orgId = (await lfsFixture(s.services.db, { org: ORG, repo: REPO, ...USER, access: 'write' })).org.id;
  token = await s.token({ orgId, perms: ['admin.system'] });
});
afterAll(() => s?.stop());
afterEach(() => s.expectConformant());

const userConfig = () => new Configuration({ basePath: s.url, ...USER, fetchApi: createObjectsFetch() });
/** An action or link: only the headers the server signed for it (its transfer token). */
const actionConfig = (link: Link) => new Configuration({ basePath: s.url, headers: link.header, fetchApi: createObjectsFetch() });
const content = (oid: string) => `${s.url}/${ORG}/${REPO}.git/info/lfs/content/${oid}`;

function object(size: number) {
  const bytes = randomBytes(size);
  return { bytes, oid: createHash('sha256').update(bytes).digest('hex') };
}

describe('the generated TypeScript client', () => {
  it("type-checks: the package with its own tsconfig, and this file against it in the project's strict mode", async () => {
    expect(sameTools).toBe(true);
    const pkg = join(clientsDir, 'typescript');
    for (const project of [join(pkg, 'tsconfig.json'), join(root, 'test', 'clients', 'tsconfig.json')]) {
      const r = await run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', project]);
      expect(r.code, `${project}:\n${r.output}`).toBe(0);
    }
  });

  it('negotiates, uploads and downloads through the batch API (bytes compared)', async () => {
    const { bytes, oid } = object(100_000);
    const batch = new BatchApi(userConfig());
    const up = await batch.batchBatch({ org: ORG, repo: REPO, batchRequest: { operation: 'upload', transfers: ['basic'], objects: [{ oid, size: bytes.length }] } });
    expect(up.transfer).toBe('basic');
    const upload = up.objects[0]!.actions!.upload!;
    expect(upload.href).toBe(content(oid));
    await new TransferApi(actionConfig(upload)).objectsUpload({ org: ORG, repo: REPO, oid, body: new Blob([new Uint8Array(bytes)]) });

    const down = await batch.batchBatch({ org: ORG, repo: REPO, batchRequest: { operation: 'download', objects: [{ oid, size: bytes.length }] } });
    const download = down.objects[0]!.actions!.download!;
    const blob = await new TransferApi(actionConfig(download)).objectsDownload({ org: ORG, repo: REPO, oid });
    expect(Buffer.from(await blob.arrayBuffer()).equals(bytes)).toBe(true);

    const missing = await batch.batchBatch({ org: ORG, repo: REPO, batchRequest: { operation: 'download', objects: [{ oid: object(8).oid, size: 8 }] } });
    expect(missing.objects[0]!.error?.code).toBe(404);
  });

  it('announces, uploads, verifies and reads back through the legacy API; errors carry the server message', async () => {
    const { bytes, oid } = object(4096);
    const legacy = new ObjectsApi(userConfig());
    const announced = await legacy.legacyCreateObject({ org: ORG, repo: REPO, legacyObjectRequest: { oid, size: bytes.length } });
    await new TransferApi(actionConfig(announced.links.upload!)).objectsUpload({ org: ORG, repo: REPO, oid, body: new Blob([new Uint8Array(bytes)]) });
    await new TransferApi(actionConfig(announced.links.verify!)).objectsVerify({ org: ORG, repo: REPO, verifyRequest: { oid, size: bytes.length } });
    const stored = await legacy.legacyGetObject({ org: ORG, repo: REPO, oid });
    expect(stored).toMatchObject({ oid, size: 4096 });
    const blob = await new TransferApi(actionConfig(stored.links.download!)).objectsDownload({ org: ORG, repo: REPO, oid });
    expect(Buffer.from(await blob.arrayBuffer()).equals(bytes)).toBe(true);

    const err = await legacy.legacyGetObject({ org: ORG, repo: REPO, oid: '0'.repeat(64) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseError);
    expect((err as ResponseError).response.status).toBe(404);
    // The object-API runtime shows the server's message, documentation link and request id.
    const shown = await expectOk((err as ResponseError).response).catch((e: unknown) => e);
    expect(shown).toBeInstanceOf(ObjectsApiError);
    expect((shown as ObjectsApiError).message).toMatch(/^Object 0{64} does not exist \(see .*#object-api-errors\) \[request id [0-9A-Z]{26}\]$/);
  });

  it('creates and lists locks', async () => {
    const locks = new LocksApi(userConfig());
    const created = await locks.locksCreate({ org: ORG, repo: REPO, lockCreateRequest: { path: 'assets/ts.bin' } });
    expect(created.lock.path).toBe('assets/ts.bin');
    const listed = await locks.locksList({ org: ORG, repo: REPO, path: 'assets/ts.bin' });
    expect(listed.locks.map((l) => l.id)).toEqual([created.lock.id]);
  });
});

describe('McpTools: the dashboard tools over MCP with the generated types', () => {
  const tools = () => new McpTools({ basePath: s.url, accessToken: token });

  it('calls a tool by name and returns its typed output (dates as Date)', async () => {
    const org = await tools().call('dashboard_get_org', { targetOrgId: orgId });
    expect(org.slug).toBe(ORG);
    expect(org.createdAt).toBeInstanceOf(Date);
  });

  it('creates a user and reads it back; lists through the grouped stub functions', async () => {
    const t = tools();
    const user = await t.call('dashboard_create_user', { username: 'grace', password: 'an eight+ char secret', role: 'member', targetOrgId: orgId });
    expect(user).toMatchObject({ username: 'grace', role: 'member' });
    const again = await t.call('dashboard_get_user', { userId: user.id });
    expect(again.id).toBe(user.id);
    const page = await t.users.mcpToolDashboardListUsers({ dashboardListUsersInput: { targetOrgId: orgId } });
    expect(page.isError ?? false).toBe(false);
    expect(page.structuredContent?.users.map((u) => u.username)).toContain('grace');
    // A tool whose arguments are a free-form object.
    const connections = await t.call('dashboard_list_service_connections', {});
    expect(Array.isArray(connections.connections)).toBe(true);
  });

  it("throws McpToolError when the tool reports a failure, ResponseError on the endpoint's HTTP errors", async () => {
    const missing = await tools().call('dashboard_get_user', { userId: 'usr_00000000000000000000000000' }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(McpToolError);
    expect((missing as McpToolError).tool).toBe('dashboard_get_user');
    const unauthenticated = await new McpTools({ basePath: s.url, accessToken: 'not-a-token' }).call('dashboard_list_orgs', {}).catch((e: unknown) => e);
    expect(unauthenticated).toBeInstanceOf(ResponseError);
    expect((unauthenticated as ResponseError).response.status).toBe(401);
  });

  it("reaches every tool of the catalogue with its spec example's arguments: an output, or the tool's own refusal", async () => {
    const t = tools();
    const outcomes: Record<string, string> = {};
    for (const name of toolNames) {
      const spec = catalogue[name];
      let args = JSON.stringify((spec.inputSchema.examples as unknown[])[0]);
      // Tools that reach out to the web get a loopback address (the examples name public hosts),
      // and the connection test a service that has no connection.
      if (spec.annotations.openWorldHint) args = args.replace(/"https?:\/\/[^"]*"/g, '"http://127.0.0.1:9/"').replace('"serviceId":"compliance"', '"serviceId":"llm"');
      outcomes[name] = await t.call(name, JSON.parse(args) as never).then(
        () => 'output',
        (e: unknown) => (e instanceof McpToolError ? 'tool error' : e instanceof McpError ? `JSON-RPC ${e.code}: ${e.message}` : String(e)),
      );
    }
    expect(Object.keys(outcomes)).toHaveLength(toolNames.length);
    expect(Object.entries(outcomes).filter(([, outcome]) => outcome !== 'output' && outcome !== 'tool error')).toEqual([]);
    // Most examples name things this server does not have; those that it has give outputs.
    expect(Object.values(outcomes)).toContain('output');
  });

  it('the stub itself answers 405, which is why the wrapper exists', async () => {
    const err = await new ToolsOrgsApi(new Configuration({ basePath: s.url, accessToken: token }))
      .mcpToolDashboardGetOrg({ dashboardGetOrgInput: { targetOrgId: orgId } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseError);
    expect((err as ResponseError).response.status).toBe(405);
  });
});
