/**
 * The MCP Inspector's CLI (@modelcontextprotocol/inspector-cli, its `--cli` mode, as docs/mcp.md
 * shows it) against a pactum server: it lists the tools and calls one with a bearer token in a
 * `--header`, and prints what the server answered as JSON on stdout. A missing or refused token
 * makes it fail with the server's 401.
 *
 * The CLI reads its own package.json through a path relative to the working directory (an
 * Inspector bug): it finds it only from a directory whose parent has a package.json, so it runs in
 * test/ of this checkout.
 */
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, mcpClient } from '../helpers/mcp.js';
import { insertOrg } from '../../src/db/users.js';

const root = join(import.meta.dirname, '..', '..');
const cli = fileURLToPath(import.meta.resolve('@modelcontextprotocol/inspector-cli'));

let s: TestServer;
let orgId: string;
let otherOrgId: string;
let token: string;

beforeAll(async () => {
  s = await startTestServer();
  orgId = (await insertOrg(s.services.db, { name: 'Acme', slug: 'acme' })).id;
  otherOrgId = (await insertOrg(s.services.db, { name: 'Globex', slug: 'globex' })).id;
  token = await s.token({ sub: 'svc_acme_admin', orgId, role: 'org_admin', perms: [] });
});
afterAll(async () => {
  await s?.stop();
});
afterEach(() => s.expectConformant());

/** One run of the Inspector CLI against the server's endpoint: its exit status, stdout and stderr. */
function inspector(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [cli, '--cli', `${s.url}/api/v1/mcp`, '--transport', 'http', ...args],
      // The CLI starts its client with `node` from PATH: the Node that runs the tests.
      { cwd: join(root, 'test'), timeout: 60_000, env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` } },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

it('lists the tools the token may use, as the SDK client sees them', async () => {
  const { code, stdout, stderr } = await inspector('--method', 'tools/list', '--header', `Authorization: Bearer ${token}`);
  expect(code, stderr).toBe(0);
  const listed = JSON.parse(stdout) as { tools: { name: string; inputSchema: { type: string } }[] };
  const client = await mcpClient(s.url, bearer(token));
  try {
    expect(listed).toEqual(JSON.parse(JSON.stringify(await client.listTools())));
  } finally {
    await client.close();
  }
  const names = listed.tools.map((t) => t.name);
  expect(names).toContain('dashboard_get_org');
  // An org admin's list: no tool that needs admin.system.
  expect(names).not.toContain('dashboard_create_org');
  expect(names).toEqual([...names].sort());
  for (const t of listed.tools) expect(t.inputSchema.type, t.name).toBe('object');
});

it('calls a tool with a bearer token header, and prints its structured result', async () => {
  const { code, stdout, stderr } = await inspector('--method', 'tools/call', '--tool-name', 'dashboard_get_org', '--tool-arg', `targetOrgId=${orgId}`, '--header', `Authorization: Bearer ${token}`);
  expect(code, stderr).toBe(0);
  const result = JSON.parse(stdout) as { content: { type: string; text: string }[]; structuredContent: Record<string, unknown>; isError?: boolean };
  expect(result.isError).toBeUndefined();
  expect(result.structuredContent).toEqual({ id: orgId, name: 'Acme', slug: 'acme', createdAt: expect.any(String), updatedAt: expect.any(String) });
  expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(result.structuredContent) }]);
});

it("answers another org's id exactly as an unknown one, as a tool error result", async () => {
  const call = (id: string) => inspector('--method', 'tools/call', '--tool-name', 'dashboard_get_org', '--tool-arg', `targetOrgId=${id}`, '--header', `Authorization: Bearer ${token}`);
  const [other, unknown] = await Promise.all([call(otherOrgId), call('org_nope')]);
  expect(other.code, other.stderr).toBe(0);
  expect(unknown.code, unknown.stderr).toBe(0);
  const refusal = { error: 'forbidden', message: 'Only admin.system may act on an organization other than your own' };
  expect(JSON.parse(other.stdout)).toEqual({ content: [{ type: 'text', text: JSON.stringify(refusal) }], isError: true });
  expect(JSON.parse(unknown.stdout)).toEqual(JSON.parse(other.stdout));
});

it('fails with the server’s 401 without a token, or with one the server refuses', async () => {
  for (const header of [[], ['--header', 'Authorization: Bearer not-a-token']]) {
    const { code, stdout, stderr } = await inspector('--method', 'tools/list', ...header);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/\b401\b/);
  }
});

it('fails on a tool that does not exist, naming it', async () => {
  const { code, stdout, stderr } = await inspector('--method', 'tools/call', '--tool-name', 'dashboard_nope', '--header', `Authorization: Bearer ${token}`);
  expect(code).toBe(1);
  expect(stdout).toBe('');
  expect(stderr).toMatch(/dashboard_nope/);
});
