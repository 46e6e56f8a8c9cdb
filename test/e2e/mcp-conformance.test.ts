/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, on the Node that runs the
 * tests) against a running pactum server, once per protocol revision the endpoint serves: 0.1.16
 * (the last release for 2025-11-25) runs its default suite, 0.2.0-alpha.12 (the 0.2 alphas are the
 * only releases with 2026-07-28 scenarios) the scenarios 2026-07-28 requires of a server. Every
 * scenario passes except the checks listed, each with the spec line that excuses it, in the
 * suite's expected-failures.yml (test/conformance/mcp/, test/conformance/mcp-2026-07-28/); the
 * suite itself fails the run on an unexpected failure or on a listed one that passes.
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
import { SUITES, suiteArgs, type Revision } from '../../scripts/mcp-conformance.js';

let s: TestServer;
let proxy: Server;
let proxyPort: number;
let target = '';
let token = '';

beforeAll(async () => {
  for (const [revision, { suite }] of Object.entries(SUITES)) {
    if (!existsSync(suite)) throw new Error(`the MCP conformance suite for ${revision} is not installed: run \`make install-conformance\``);
  }
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

/** Runs one revision's suite; per scenario (from its checks.json) the ids of the checks that failed or warned. */
async function runSuite(revision: Revision) {
  const out = mkdtempSync(join(tmpdir(), `mcp-conformance-${revision}-`));
  const args = suiteArgs(revision, `http://localhost:${proxyPort}/api/v1/mcp`, ['-o', out]);
  const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) =>
    execFile(process.execPath, args, { timeout: 150_000 }, (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout: stdout + stderr })),
  );
  const failing = new Map<string, string[]>();
  for (const d of readdirSync(out)) {
    const scenario = d.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T.*$/, '');
    const checks = JSON.parse(readFileSync(join(out, d, 'checks.json'), 'utf8')) as { status: string; id: string }[];
    failing.set(scenario, checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING').map((c) => c.id).sort());
  }
  return { code, stdout, failing };
}

it('passes the official MCP conformance suite for 2025-11-25 (0.1.16), but for the listed expected failures', async () => {
  const { code, stdout, failing } = await runSuite('2025-11-25');
  expect(code, stdout).toBe(0);
  for (const clean of ['server-initialize', 'ping', 'tools-list', 'resources-list', 'prompts-list', 'dns-rebinding-protection']) expect(failing.get(clean), clean).toEqual([]);
  // 30 scenarios ran; the 24 of expected-failures.yml each failed its one check, nothing else.
  expect(failing.size).toBe(30);
  const failed = [...failing].filter(([, checks]) => checks.length > 0);
  expect(failed.length).toBe(24);
  for (const [scenario, checks] of failed) expect(checks, scenario).toHaveLength(1);
  s.expectConformant();
});

it('passes the official MCP conformance suite for 2026-07-28 (0.2.0-alpha.12), but for the listed expected failures', async () => {
  const { code, stdout, failing } = await runSuite('2026-07-28');
  expect(code, stdout).toBe(0);
  // Every check of these passes: the stateless envelope, discovery, lists, resource-not-found
  // as -32602, the DNS-rebinding guard, the routing headers, InputRequiredResult never sent where
  // the revision forbids it.
  for (const clean of [
    'tools-list',
    'resources-list',
    'prompts-list',
    'sep-2164-resource-not-found',
    'dns-rebinding-protection',
    'server-sse-multiple-streams',
    'input-required-result-unsupported-methods',
    'input-required-result-validate-input',
    // Reported, not scored at this revision (pending); pactum passes it all the same.
    'http-header-validation',
  ]) {
    expect(failing.get(clean), clean).toEqual([]);
  }
  // Of the scenarios with many checks, only those that need the suite's fixture tools or prompts fail.
  expect(failing.get('server-stateless')).toEqual([
    'sep-2575-http-server-no-independent-requests-on-stream',
    'sep-2575-missing-capability-http-400',
    'sep-2575-server-no-log-without-loglevel',
    'sep-2575-server-rejects-undeclared-capability',
  ]);
  expect(failing.get('caching')).toEqual([]);
  s.expectConformant();
});

/** `make mcp-conformance` (scripts/mcp-conformance.ts), as a person runs it against their server. */
it('runs by hand against a server that needs a token: make mcp-conformance TARGET=… TOKEN=…', async () => {
  // A server as started by hand: its default ALLOWED_HOSTS, nothing set up for a proxy.
  const own = await startTestServer();
  try {
    const script = join(import.meta.dirname, '..', '..', 'scripts', 'mcp-conformance.ts');
    const tsx = import.meta.resolve('tsx');
    const run = (token: string, ...more: string[]) =>
      new Promise<{ code: number; out: string; err: string }>((resolve) =>
        execFile(process.execPath, ['--import', tsx, script, '--target', own.url, '--token', token, ...more], { timeout: 180_000 }, (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout, err: stderr }),
        ),
      );
    const refused = await run('not-a-token');
    expect(refused.code).toBe(2);
    expect(refused.err.trim().split('\n')).toEqual([expect.stringMatching(/refuses TOKEN \(401\): make one for this server with pactum token --user <name>$/)]);
    const good = await own.token({ perms: ['admin.system'] });
    const unknown = await run(good, '--revision', '2024-11-05');
    expect(unknown.code).toBe(2);
    expect(unknown.err.trim()).toBe('REVISION 2024-11-05 is not one the suite checks here: 2025-11-25 or 2026-07-28');
    // Both revisions, one after the other.
    const passed = await run(good);
    expect(passed.code, passed.out + passed.err).toBe(0);
    expect(passed.out.match(/^== MCP \S+: the official conformance suite$/gm)).toEqual(['== MCP 2025-11-25: the official conformance suite', '== MCP 2026-07-28: the official conformance suite']);
    expect(passed.out.match(/Baseline check passed: all failures are expected\./g)).toHaveLength(2);
    for (const scenario of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection', 'server-stateless', 'sep-2164-resource-not-found']) expect(passed.out, scenario).toMatch(new RegExp(`${scenario}`));
    expect(passed.out).not.toMatch(/✗ (server-initialize|ping|tools-list|dns-rebinding-protection|sep-2164-resource-not-found)\b/);
  } finally {
    await own.stop();
  }
}, 240_000);
