/**
 * `make mcp-conformance TARGET=http://127.0.0.1:8080 TOKEN=<jwt>`: the official MCP conformance
 * suite (@modelcontextprotocol/conformance, installed by `make install-conformance`) against a
 * running server that requires a bearer token, for each protocol revision the server serves:
 * 2025-11-25 with the suite's 0.1.16 release (its last for that revision, the default suite), and
 * 2026-07-28 with 0.2.0-alpha.12 (the 0.2 alphas are the only releases with its scenarios; the
 * scenarios that revision requires of a server, `--requirements 2026-07-28`). Each revision has
 * its own directory, pinned exactly, and its own list of expected failures.
 *
 * The suite cannot send headers, so it talks to a proxy on localhost that adds
 * `Authorization: Bearer <token>` to every request. The proxy presents itself as the target:
 * the Host and Origin of its own address become the target's, so the server's DNS-rebinding
 * guard accepts them; any other Host or Origin (the suite's rebinding probe sends
 * evil.example.com) reaches the server untouched, for the guard to refuse.
 *
 *   npx tsx scripts/mcp-conformance.ts --target URL --token JWT [--revision 2025-11-25|2026-07-28] [-- suite arguments]
 *
 * Exit status: 0 when every scenario of each suite passed, but for the expected failures; else
 * the first failing suite's.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface ConformanceSuite {
  /** The suite's entry point, in its own directory under test/conformance/. */
  suite: string;
  expectedFailures: string;
  /** Which scenarios to run. */
  select: string[];
}

function suiteIn(dir: string, select: string[]): ConformanceSuite {
  const at = join(root, 'test', 'conformance', dir);
  return { suite: join(at, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js'), expectedFailures: join(at, 'expected-failures.yml'), select };
}

/** The suite of each revision the endpoint serves. */
export const SUITES = {
  '2025-11-25': suiteIn('mcp', []),
  '2026-07-28': suiteIn('mcp-2026-07-28', ['--requirements', '2026-07-28']),
} satisfies Record<string, ConformanceSuite>;
export type Revision = keyof typeof SUITES;

/** The suite's command line against an MCP endpoint URL. */
export function suiteArgs(revision: Revision, url: string, extra: string[] = []): string[] {
  const s = SUITES[revision];
  return [s.suite, 'server', '--url', url, ...s.select, '--expected-failures', s.expectedFailures, ...extra];
}
const MCP_PATH = '/api/v1/mcp';

/** A proxy on localhost that adds the bearer token and stands in for the target's Host and Origin. */
export async function bearerProxy(target: string, token: string): Promise<{ url: string; close(): void }> {
  const up = new URL(target);
  let own = '';
  const proxy: Server = createServer((req, res) => {
    const headers: IncomingHttpHeaders = { ...req.headers, authorization: `Bearer ${token}` };
    if (headers.host === own) headers.host = up.host;
    if (headers.origin === `http://${own}`) headers.origin = up.origin;
    const forwarded = request(new URL(req.url ?? '/', up), { method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`cannot reach ${target}: ${err.message}`);
    });
    req.pipe(forwarded);
  });
  await new Promise<void>((ok) => proxy.listen(0, '127.0.0.1', ok));
  own = `localhost:${(proxy.address() as AddressInfo).port}`;
  return { url: `http://${own}`, close: () => proxy.close() };
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { target: { type: 'string' }, token: { type: 'string' }, revision: { type: 'string' } },
  });
  if (!values.target || !values.token) {
    console.error('usage: make mcp-conformance TARGET=http://127.0.0.1:8080 TOKEN=<a bearer token of that server> [REVISION=2025-11-25|2026-07-28] (pactum token --user <name> makes one)');
    return 2;
  }
  const revisions = Object.keys(SUITES) as Revision[];
  if (values.revision !== undefined && !revisions.includes(values.revision as Revision)) {
    console.error(`REVISION ${values.revision} is not one the suite checks here: ${revisions.join(' or ')}`);
    return 2;
  }
  const chosen = values.revision ? [values.revision as Revision] : revisions;
  let target: URL;
  try {
    target = new URL(values.target);
  } catch {
    console.error(`TARGET ${values.target} is not a URL (the server's base URL, e.g. http://127.0.0.1:8080)`);
    return 2;
  }
  if (chosen.some((r) => !existsSync(SUITES[r].suite))) {
    console.error('the MCP conformance suite is not installed: run make install-conformance');
    return 2;
  }
  const base = target.href.replace(/\/$/, '').replace(new RegExp(`${MCP_PATH}$`), '');
  // The same check the suite would make 40 times, made once: a refused token is one line.
  const probe = await fetch(`${base}${MCP_PATH}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${values.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  }).catch((err: unknown) => err as Error);
  if (probe instanceof Error) {
    console.error(`cannot reach ${base}: ${(probe.cause as { code?: string } | undefined)?.code ?? probe.message}`);
    return 2;
  }
  if (probe.status === 401 || probe.status === 403) {
    console.error(`${base} refuses TOKEN (${probe.status}): make one for this server with pactum token --user <name>`);
    return 2;
  }
  const proxy = await bearerProxy(base, values.token);
  try {
    let status = 0;
    for (const revision of chosen) {
      console.log(`== MCP ${revision}: the official conformance suite`);
      const child = spawn(process.execPath, suiteArgs(revision, `${proxy.url}${MCP_PATH}`, positionals), { stdio: 'inherit' });
      const code = await new Promise<number>((done) => child.on('close', (c) => done(c ?? 1)));
      if (status === 0) status = code;
    }
    return status;
  } finally {
    proxy.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : String(err));
      process.exit(1);
    },
  );
}
