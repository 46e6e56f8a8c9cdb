/**
 * `pactum mock` (`make mock` in a checkout): three Prism mock servers for client teams, one per spec, on 127.0.0.1:
 *
 *   dashboard  4010   POST /api/v1/mcp (JSON-RPC), tool stubs, auth, /healthz
 *   legacy     4011   /{org}/{repo}.git/info/lfs/…  (Git LFS legacy v0.5 API)
 *   batch      4012   /{org}/{repo}.git/info/lfs/…  (Git LFS batch v1.3 API, tus, locks)
 *
 * MOCK_PORT_BASE moves the three ports (base, base+1, base+2). Each server runs
 * `prism mock <spec>` on the spec deriveMockSpec() derives (spec.ts): the
 * generator's generated/mock/<api>.json when it exists, else derived here from
 * generated/specs/<api>.json. Hrefs in the examples that point at the real server
 * (http://127.0.0.1:8080) are pointed at the mock itself, so a client can follow them; the
 * served files are written to a temporary directory and removed on exit.
 *
 * Ctrl-C or SIGTERM stops all three (src/cli/mock.ts). docs/mock.md says what to send and what Prism does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadBundledSpec, type JsonObject } from '../spec/documents.js';
import { packageRoot } from '../ground/default-data-dir.js';
import { deriveMockSpec, MCP_PATH, type MockApi } from './spec.js';
import { createMockFront } from './front.js';
import { createServer as createNetServer } from 'node:net';
import type { Server as HttpServer } from 'node:http';

export const MOCK_APIS = ['dashboard', 'legacy', 'batch'] as const satisfies readonly MockApi[];
export const DEFAULT_PORT_BASE = 4010;
export const PORT_OFFSETS: Readonly<Record<MockApi, number>> = { dashboard: 0, legacy: 1, batch: 2 };
/** The repository the docs and examples use; the object mocks answer for any org and repo. */
export const EXAMPLE_REPO_PATH = '/acme/site.git/info/lfs';

const root = packageRoot();

/** Prism is an optional dependency of the package (about 100 MB, for the mock alone): without it, `pactum mock` says how to add it. */
export class PrismMissing extends Error {}

/** The file that runs Prism's CLI, from the installed @stoplight/prism-cli. */
export function prismCli(): string {
  let manifest: string;
  try {
    manifest = createRequire(import.meta.url).resolve('@stoplight/prism-cli/package.json');
  } catch {
    throw new PrismMissing(`the mock runs Prism, and @stoplight/prism-cli is not installed beside pactum (an optional dependency, left out by --omit=optional); install it with: npm install -g @stoplight/prism-cli@${PRISM_VERSION}`);
  }
  return join(dirname(manifest), 'dist', 'index.js');
}

/** The Prism the mock is tested with (5.15 and later want Node 24). */
export const PRISM_VERSION = '5.14.2';

export interface MockOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** First of three consecutive ports; default MOCK_PORT_BASE, else 4010. */
  portBase?: number;
  /** Explicit ports, overriding portBase per API. */
  ports?: Partial<Record<MockApi, number>>;
  /** The specs to serve; default generated/mock/<api>.json, else derived from generated/specs. */
  specs?: Partial<Record<MockApi, JsonObject>>;
  /** Point example hrefs at the mock instead of the real server (default true). */
  rewriteLinks?: boolean;
  /** Each line Prism prints, its private address replaced by the mock's; default: kept in memory only (see RunningMock.output). */
  log?: (api: MockApi, line: string) => void;
  /** Extra arguments for `prism mock`, e.g. ['--errors'] or ['-v', 'warn']. */
  prismArgs?: readonly string[];
  /** How long each server may take to listen (default 60 s). */
  startTimeoutMs?: number;
}

export interface RunningMock {
  /** Each server's base URL, e.g. http://127.0.0.1:4010 (object APIs: add /{org}/{repo}.git/info/lfs). */
  urls: Record<MockApi, string>;
  /** The specs as served (after link rewriting) and the files Prism reads them from. */
  specs: Record<MockApi, JsonObject>;
  specFiles: Record<MockApi, string>;
  pids: Record<MockApi, number>;
  /** The last lines each Prism printed (its private address replaced by the mock's). */
  output(api: MockApi): string[];
  /** Settles when that API's Prism process has exited (stopped, or died). */
  exited: Record<MockApi, Promise<void>>;
  /** Stops the three servers (SIGTERM, then SIGKILL after 5 s) and removes the spec files. */
  stop(): Promise<void>;
}

/** The mock spec of each API: the generator's generated/mock/<api>.json, or derived now. */
export function loadMockSpecs(): Record<MockApi, JsonObject> {
  const out = {} as Record<MockApi, JsonObject>;
  for (const api of MOCK_APIS) {
    const file = join(root, 'generated', 'mock', `${api}.json`);
    out[api] = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as JsonObject) : deriveMockSpec(api, loadBundledSpec(api));
  }
  return out;
}

/** The origin of a spec's first server (http://127.0.0.1:8080 for all three). */
export function serverOrigin(spec: JsonObject): string | null {
  const url = ((spec.servers ?? []) as { url: string }[])[0]?.url ?? '';
  return /^([a-z][a-z0-9+.-]*:\/\/[^/]+)/i.exec(url)?.[1] ?? null;
}

/** The spec with every occurrence of the real server's origin replaced by the mock's. */
export function pointLinksAt(spec: JsonObject, mockOrigin: string): JsonObject {
  const origin = serverOrigin(spec);
  if (!origin || origin === mockOrigin) return spec;
  return JSON.parse(JSON.stringify(spec).split(origin).join(mockOrigin)) as JsonObject;
}

function portsOf(opts: MockOptions): Record<MockApi, number> {
  const envBase = process.env.MOCK_PORT_BASE ? Number(process.env.MOCK_PORT_BASE) : undefined;
  const base = opts.portBase ?? envBase ?? DEFAULT_PORT_BASE;
  if (!Number.isInteger(base) || base < 1 || base > 65533) throw new Error(`MOCK_PORT_BASE must be a port number, not ${process.env.MOCK_PORT_BASE}`);
  const ports = {} as Record<MockApi, number>;
  for (const api of MOCK_APIS) ports[api] = opts.ports?.[api] ?? base + PORT_OFFSETS[api];
  return ports;
}

interface Server {
  api: MockApi;
  child: ChildProcess;
  lines: string[];
  exited: Promise<void>;
}

/**
 * A line of Prism's output as the user should read it: Prism listens on a private port behind the
 * front, so its own address is replaced by the mock's (the one to call), and its "listening" line
 * says it is behind the front.
 */
export function publicLine(line: string, prismOrigin: string, mockUrl: string): string {
  if (/Prism is listening on/.test(line)) return line.replace(/Prism is listening on \S+/, `Prism is up behind the mock's front at ${mockUrl}, which opens once all three are up`);
  return line.split(prismOrigin).join(mockUrl);
}

function launch(api: MockApi, file: string, host: string, port: number, opts: MockOptions, mockUrl: string): { server: Server; ready: Promise<void> } {
  const prismOrigin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const child = spawn(process.execPath, [prismCli(), 'mock', file, '--host', host, '--port', String(port), ...(opts.prismArgs ?? [])], {
    cwd: tmpdir(),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
  });
  const lines: string[] = [];
  let exitCode: number | null | undefined;
  let onLine: ((line: string) => void) | undefined;
  const exited = new Promise<void>((done) =>
    child.once('exit', (code, signal) => {
      exitCode = code ?? (signal ? -1 : 0);
      done();
    }),
  );
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop()!;
      for (const line of parts) {
        if (!line.trim()) continue;
        const shown = publicLine(line, prismOrigin, mockUrl);
        lines.push(shown);
        if (lines.length > 500) lines.shift();
        opts.log?.(api, shown);
        onLine?.(line);
      }
    });
  }
  const ready = new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`${api}: Prism did not listen within ${opts.startTimeoutMs ?? 60_000} ms\n${lines.slice(-20).join('\n')}`)), opts.startTimeoutMs ?? 60_000);
    onLine = (line) => {
      if (/Prism is listening on/.test(line)) {
        clearTimeout(timer);
        ok();
      }
    };
    void exited.then(() => {
      clearTimeout(timer);
      if (lines.some((l) => /EADDRINUSE/.test(l))) fail(new Error(`${api}: port ${port} on ${host} is in use (MOCK_PORT_BASE moves the three ports)`));
      else fail(new Error(`${api}: Prism exited (code ${exitCode}) before listening on port ${port}\n${lines.slice(-20).join('\n')}`));
    });
  });
  return { server: { api, child, lines, exited }, ready };
}

/** A port nothing listens on now, for a Prism behind its front. */
function anyFreePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

async function terminate(server: Server) {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 5000);
  await server.exited;
  clearTimeout(timer);
}

/** Starts the three mock servers; resolves once all listen (each Prism first, then the public ports). */
export async function startMock(opts: MockOptions = {}): Promise<RunningMock> {
  const host = opts.host ?? '127.0.0.1';
  const ports = portsOf(opts);
  const given = opts.specs ?? {};
  const loaded = MOCK_APIS.every((api) => given[api]) ? null : loadMockSpecs();
  const dir = mkdtempSync(join(tmpdir(), 'pactum-mock-'));
  const urls = {} as Record<MockApi, string>;
  const specs = {} as Record<MockApi, JsonObject>;
  const specFiles = {} as Record<MockApi, string>;
  const servers: Server[] = [];
  const fronts: HttpServer[] = [];
  const readies: Promise<void>[] = [];
  let stopped: Promise<void> | null = null;
  const stop = () =>
    (stopped ??= (async () => {
      for (const f of fronts) f.closeAllConnections();
      await Promise.all(fronts.map((f) => new Promise((r) => f.close(r))));
      await Promise.all(servers.map(terminate));
      rmSync(dir, { recursive: true, force: true });
    })());

  try {
    for (const api of MOCK_APIS) {
      urls[api] = `http://${host.includes(':') ? `[${host}]` : host}:${ports[api]}`;
      const spec = given[api] ?? loaded![api];
      specs[api] = opts.rewriteLinks === false ? spec : pointLinksAt(spec, urls[api]);
      specFiles[api] = join(dir, `${api}.json`);
      writeFileSync(specFiles[api], JSON.stringify(specs[api], null, 2) + '\n');
      // Prism listens on a private port; the front (front.ts) on the public one picks the
      // example that answers each request and hands it to Prism.
      const prismPort = await anyFreePort(host);
      const { server, ready } = launch(api, specFiles[api], host, prismPort, opts, urls[api]);
      servers.push(server);
      readies.push(ready);
      fronts.push(createMockFront({ api, spec: specs[api], prism: { host, port: prismPort } }));
    }
    // The public ports open only once every Prism answers: a client that starts as soon as it can
    // connect (or once the summary is printed) never meets a front whose Prism is still starting.
    await Promise.all(readies);
    const listening = MOCK_APIS.map((api, i) =>
      new Promise<void>((ok, fail) => {
        const front = fronts[i]!;
        front.once('error', (err: NodeJS.ErrnoException) =>
          fail(err.code === 'EADDRINUSE' ? new Error(`${api}: port ${ports[api]} on ${host} is in use (MOCK_PORT_BASE moves the three ports)`) : err),
        );
        front.listen(ports[api], host, () => ok());
      }),
    );
    readies.push(...listening);
    await Promise.all(listening);
  } catch (err) {
    await Promise.allSettled(readies);
    await stop();
    throw err;
  }

  const pids = {} as Record<MockApi, number>;
  for (const s of servers) pids[s.api] = s.child.pid!;
  return {
    urls,
    specs,
    specFiles,
    pids,
    output: (api) => [...servers.find((s) => s.api === api)!.lines],
    exited: Object.fromEntries(servers.map((s) => [s.api, s.exited])) as Record<MockApi, Promise<void>>,
    stop,
  };
}

/** The example names of each operation's responses that carry more than one, for `Prefer: example=`. */
export function namedExamples(spec: JsonObject): { operation: string; names: string[] }[] {
  const out: { operation: string; names: string[] }[] = [];
  for (const [path, item] of Object.entries((spec.paths ?? {}) as JsonObject)) {
    for (const [method, op] of Object.entries(item as JsonObject)) {
      if (method === 'parameters' || !op || typeof op !== 'object') continue;
      const names = new Set<string>();
      for (const res of Object.values(((op as JsonObject).responses ?? {}) as JsonObject)) {
        const media = (((res as JsonObject).content ?? {}) as JsonObject)['application/json'] ?? Object.values(((res as JsonObject).content ?? {}) as JsonObject)[0];
        for (const name of Object.keys(((media as JsonObject | undefined)?.examples ?? {}) as JsonObject)) names.add(name);
      }
      if (names.size > 1) out.push({ operation: `${method.toUpperCase()} ${path}`, names: [...names] });
    }
  }
  return out;
}

function wrap(words: string[], indent: string, width = 100): string[] {
  const lines: string[] = [];
  let line = indent;
  for (const w of words) {
    if (line.length + w.length + 2 > width && line.trim()) {
      lines.push(line.replace(/,?\s*$/, ','));
      line = indent;
    }
    line += (line.trim() ? ', ' : '') + w;
  }
  if (line.trim()) lines.push(line);
  return lines;
}

/** What `pactum mock` (and `make mock`) prints once the servers listen. */
export function describeMock(mock: RunningMock): string {
  const out = [
    'pactum mock servers (Prism), on the specs pactum was built from; Ctrl-C stops them. Docs: docs/mock.md',
    `One API per port: ${MOCK_APIS.map((a) => `${a} ${new URL(mock.urls[a]).port}`).join(', ')} (MOCK_PORT_BASE=N moves them to N, N+1, N+2).`,
    `Check one with the conformance runner: pactum conformance --target ${mock.urls.batch} --api batch --basic ada:any`,
    '',
    `  dashboard  ${mock.urls.dashboard}${MCP_PATH}   (send Authorization: Bearer <anything>, or Cookie: session=<anything>)`,
    `  legacy     ${mock.urls.legacy}${EXAMPLE_REPO_PATH}   (any org and repo)`,
    `  batch      ${mock.urls.batch}${EXAMPLE_REPO_PATH}   (any org and repo)`,
    '',
    'Choose a response with the header `Prefer: example=<name>` or `Prefer: code=<status>`:',
  ];
  for (const api of MOCK_APIS) {
    for (const { operation, names } of namedExamples(mock.specs[api])) {
      const tools = names.filter((n) => n.startsWith('dashboard_'));
      const others = names.filter((n) => !n.startsWith('dashboard_'));
      out.push(`  ${api} ${operation}: ${others[0]} (the default)`);
      if (others.length > 1) out.push(...wrap(others.slice(1), '    '));
      if (tools.length) {
        out.push(`    and one per tool (${tools.length}), the result of tools/call of that tool:`);
        out.push(...wrap(tools, '    '));
      }
    }
  }
  out.push('  any operation: Prefer: code=<a status the spec declares for it>, e.g. code=404');
  return out.join('\n');
}
