/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, on the Node that runs the
 * tests) against a running pactum server. Every scenario of the default suite passes except those
 * listed, with reasons, in test/conformance/mcp/expected-failures.yml; the suite itself fails the
 * run on an unexpected failure or on a listed scenario that passes.
 *
 * The suite cannot send headers, so a small proxy in front of the server adds the bearer token;
 * it forwards Host and Origin untouched, so the DNS-rebinding scenario still reaches the guard.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

const dir = join(import.meta.dirname, '..', 'conformance', 'mcp');
const suite = join(dir, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

let s: TestServer;
let proxy: Server;
let proxyPort: number;
let target = '';
let token = '';

beforeAll(async () => {
  if (!existsSync(suite)) throw new Error('the MCP conformance suite is not installed: run `make install-conformance`');
  proxy = createServer((req, res) => {
    const up = request(`${target}${req.url}`, { method: req.method, headers: { ...req.headers, authorization: `Bearer ${token}` } }, (r) => {
      res.writeHead(r.statusCode!, r.headers);
      r.pipe(res);
    });
    up.on('error', (e) => res.writeHead(502).end(String(e)));
    req.pipe(up);
  }).listen(0, '127.0.0.1');
  await new Promise((r) => proxy.once('listening', r));
  proxyPort = (proxy.address() as AddressInfo).port;
  const hosts = [`127.0.0.1:${proxyPort}`, `localhost:${proxyPort}`];
  s = await startTestServer({ ALLOWED_HOSTS: hosts.join(','), ALLOWED_ORIGINS: hosts.map((h) => `http://${h}`).join(',') });
  target = s.url;
  token = await s.token({ perms: ['admin.system'] });
});
afterAll(async () => {
  proxy?.close();
  await s?.stop();
});

it('passes the official MCP conformance suite, but for the listed expected failures', async () => {
  const out = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
  const args = [suite, 'server', '--url', `http://localhost:${proxyPort}/api/v1/mcp`, '--expected-failures', join(dir, 'expected-failures.yml'), '-o', out];
  const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) =>
    execFile(process.execPath, args, { timeout: 120_000 }, (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout: stdout + stderr })),
  );
  // One line per scenario from its checks.json, for the log and for the assertions below.
  const results = new Map<string, string[]>();
  for (const d of readdirSync(out)) {
    const scenario = d.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T.*$/, '');
    const checks = JSON.parse(readFileSync(join(out, d, 'checks.json'), 'utf8')) as { status: string; name: string; errorMessage?: string }[];
    results.set(scenario, checks.filter((c) => c.status === 'FAILURE').map((c) => `${c.name}: ${c.errorMessage ?? ''}`));
  }
  expect(code, stdout).toBe(0);
  for (const generic of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection', 'json-schema-2020-12', 'server-sse-polling']) {
    if (results.has(generic)) expect(results.get(generic), generic).toEqual([]);
  }
  for (const must of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection']) expect(results.has(must), `${must} ran`).toBe(true);
  s.expectConformant();
});

/** `make mcp-conformance` (scripts/mcp-conformance.ts), as a person runs it against their server. */
it('runs by hand against a server that needs a token: make mcp-conformance TARGET=… TOKEN=…', async () => {
  // A server as started by hand: its default ALLOWED_HOSTS, nothing set up for a proxy.
  const own = await startTestServer();
  try {
    const script = join(import.meta.dirname, '..', '..', 'scripts', 'mcp-conformance.ts');
    const tsx = import.meta.resolve('tsx');
    const run = (token: string) =>
      new Promise<{ code: number; out: string; err: string }>((resolve) =>
        execFile(process.execPath, ['--import', tsx, script, '--target', own.url, '--token', token], { timeout: 180_000 }, (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout, err: stderr }),
        ),
      );
    const refused = await run('not-a-token');
    expect(refused.code).toBe(2);
    expect(refused.err.trim().split('\n')).toEqual([expect.stringMatching(/refuses TOKEN \(401\): make one for this server with pactum token --user <name>$/)]);
    const passed = await run(await own.token({ perms: ['admin.system'] }));
    expect(passed.code, passed.out + passed.err).toBe(0);
    for (const scenario of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection']) expect(passed.out, scenario).toMatch(new RegExp(`${scenario}`));
    expect(passed.out).not.toMatch(/✗ (server-initialize|ping|tools-list|dns-rebinding-protection)\b/);
  } finally {
    await own.stop();
  }
}, 240_000);
