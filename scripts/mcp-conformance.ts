/**
 * `make mcp-conformance TARGET=http://127.0.0.1:8080 TOKEN=<jwt>`: the official MCP conformance
 * suite (@modelcontextprotocol/conformance, installed by `make install-conformance`) against a
 * running server that requires a bearer token.
 *
 * The suite cannot send headers, so it talks to a proxy on localhost that adds
 * `Authorization: Bearer <token>` to every request. The proxy presents itself as the target:
 * the Host and Origin of its own address become the target's, so the server's DNS-rebinding
 * guard accepts them; any other Host or Origin (the suite's rebinding probe sends
 * evil.example.com) reaches the server untouched, for the guard to refuse.
 *
 *   npx tsx scripts/mcp-conformance.ts --target URL --token JWT [--expected-failures FILE] [-- suite arguments]
 *
 * Exit status: the suite's (0 when every scenario passed, but for the expected failures).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const suiteDir = join(root, 'test', 'conformance', 'mcp');
export const SUITE = join(suiteDir, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
export const EXPECTED_FAILURES = join(suiteDir, 'expected-failures.yml');
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
    options: { target: { type: 'string' }, token: { type: 'string' }, 'expected-failures': { type: 'string', default: EXPECTED_FAILURES } },
  });
  if (!values.target || !values.token) {
    console.error('usage: make mcp-conformance TARGET=http://127.0.0.1:8080 TOKEN=<a bearer token of that server> (pactum token --user <name> makes one)');
    return 2;
  }
  let target: URL;
  try {
    target = new URL(values.target);
  } catch {
    console.error(`TARGET ${values.target} is not a URL (the server's base URL, e.g. http://127.0.0.1:8080)`);
    return 2;
  }
  if (!existsSync(SUITE)) {
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
    const child = spawn(process.execPath, [SUITE, 'server', '--url', `${proxy.url}${MCP_PATH}`, '--expected-failures', values['expected-failures'], ...positionals], { stdio: 'inherit' });
    return await new Promise<number>((done) => child.on('close', (code) => done(code ?? 1)));
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
