/**
 * pactum behind `prism proxy --errors`, one Prism per spec, so the end-to-end suites can run once
 * more with Prism judging every response (PACTUM_VIA_PRISM=1). Any `sl-violations` header Prism
 * adds — errors, and warnings such as an undeclared status — is collected for the test to fail on.
 *
 *   client ─► front (strips /{org}/{repo}.git/info/lfs, remembers it)
 *               ├─► prism dashboard ─────────────────────────► pactum
 *               ├─► prism legacy ─► back (puts the prefix back) ─► pactum
 *               └─► prism batch  ─► back ──────────────────────► pactum
 *
 * Prism matches the spec's paths without the servers' base path, hence front and back. And
 * Prism proxy decodes bodies as text, which corrupts binary content (1,000 random bytes arrive
 * as some 1,800), so the raw transfers (/content/*, /tus/*) bypass it; the suites' own checker
 * still validates those answers against the specs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';

const SPECS = join(import.meta.dirname, '..', '..', 'generated', 'specs');
const BASE = /^(\/[^/]+\/[^/]+\.git\/info\/lfs)(\/.*)?$/;
const LEGACY = /^\/objects(\/[0-9a-zA-Z_.-]+)?$/; // GET /objects/{oid}, POST /objects (not /objects/batch)

export interface PrismViolation { method: string; path: string; status: number; violations: string }

function forward(req: IncomingMessage, res: ServerResponse, url: string, headers: Record<string, string | string[] | undefined>, onResponse?: (status: number, headers: IncomingMessage['headers']) => void) {
  const up = request(url, { method: req.method, headers }, (r) => {
    onResponse?.(r.statusCode!, r.headers);
    res.writeHead(r.statusCode!, r.headers);
    r.pipe(res);
  });
  up.on('error', (err) => (res.headersSent ? res.destroy() : res.writeHead(502, { 'content-type': 'text/plain' }).end(String(err))));
  // A client that goes away mid-body must cut the upstream request too, as a direct connection would.
  req.on('close', () => {
    if (!req.complete) up.destroy();
  });
  req.pipe(up);
}

const listen = (server: Server) =>
  new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

async function startPrism(spec: string, upstream: string): Promise<{ url: string; child: ChildProcess }> {
  const probe = createServer();
  const port = await listen(probe);
  await new Promise((r) => probe.close(r));
  const child = spawn(process.execPath, [join(import.meta.dirname, '..', '..', 'node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js'), 'proxy', '--errors', '--validate-request', 'false', '-v', 'error', '-h', '127.0.0.1', '-p', String(port), join(SPECS, `${spec}.json`), upstream], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Ready when its port answers (its log level is kept low, so there is no banner to wait for).
  const deadline = Date.now() + 60_000;
  // Set by the exit listener (a plain `number | null = null` would be narrowed to null below).
  let exited = null as number | null;
  child.once('exit', (code) => (exited = code ?? -1));
  for (;;) {
    if (exited !== null) throw new Error(`prism ${spec} exited with ${exited}`);
    const up = await new Promise<boolean>((r) => {
      const sock = connect(port, '127.0.0.1', () => (sock.end(), r(true)));
      sock.on('error', () => r(false));
    });
    if (up) break;
    if (Date.now() > deadline) throw new Error(`prism ${spec} did not start within 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url: `http://127.0.0.1:${port}`, child };
}

export interface PrismFront {
  /** Where clients (and pactum's PUBLIC_URL) point. */
  url: string;
  violations: PrismViolation[];
  /** Call once pactum listens. */
  connect(pactumUrl: string): Promise<void>;
  close(): Promise<void>;
}

export async function prismFront(): Promise<PrismFront> {
  const violations: PrismViolation[] = [];
  let pactum = '';
  let prisms: Record<'dashboard' | 'legacy' | 'batch', { url: string; child: ChildProcess }> | null = null;

  const back = createServer((req, res) => forward(req, res, `${pactum}${String(req.headers['x-pactum-base'] ?? '')}${req.url}`, { ...req.headers }));
  const backPort = await listen(back);

  const front = createServer((req, res) => {
    const url = new URL(req.url!, 'http://front');
    const m = BASE.exec(url.pathname);
    const record = (status: number, headers: IncomingMessage['headers']) => {
      const v = headers['sl-violations'];
      if (v) violations.push({ method: req.method!, path: url.pathname, status, violations: String(v) });
    };
    if (!m) return forward(req, res, `${prisms!.dashboard.url}${req.url}`, { ...req.headers }, record);
    const rest = (m[2] ?? '/') + url.search;
    if (/^\/(content|tus)\//.test(m[2] ?? '')) return forward(req, res, `${pactum}${req.url}`, { ...req.headers });
    const api = LEGACY.test(m[2] ?? '') && !(m[2] ?? '').endsWith('/batch') ? 'legacy' : 'batch';
    forward(req, res, `${prisms![api].url}${rest}`, { ...req.headers, 'x-pactum-base': m[1] }, record);
  });
  const frontPort = await listen(front);

  return {
    url: `http://127.0.0.1:${frontPort}`,
    violations,
    async connect(pactumUrl) {
      pactum = pactumUrl;
      const [dashboard, legacy, batch] = await Promise.all([
        startPrism('dashboard', pactumUrl),
        startPrism('legacy', `http://127.0.0.1:${backPort}`),
        startPrism('batch', `http://127.0.0.1:${backPort}`),
      ]);
      prisms = { dashboard, legacy, batch };
    },
    async close() {
      for (const p of Object.values(prisms ?? {})) p.child.kill();
      await Promise.all([front, back].map((s) => new Promise((r) => s.close(r))));
    },
  };
}
