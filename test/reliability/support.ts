/**
 * Shared pieces of the reliability suite (test/reliability): its size (RELIABILITY=full or the
 * quick form that runs inside `make test`), the printed figures, raw HTTP that a fetch client
 * would refuse to send, and pactum as a child process (`pactum serve` through tsx) on a DATA_DIR
 * the test controls, set up through the CLI, with its log watched for 5xx and unhandled errors.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent as UndiciAgent, fetch as undiciFetch } from 'undici';
import { pactum } from '../helpers/cli.js';
import { backendEnv, backendMode } from '../helpers/backends.js';

export const FULL = process.env.RELIABILITY === 'full';

/**
 * fetch with a connection pool per server process: a restarted server listens on the killed one's
 * port, and a kept-alive connection to the dead process would fail (or hold) the first request
 * after the restart. Call `renew()` after each restart.
 */
export function poolPerProcess() {
  let pool = new UndiciAgent();
  return {
    fetch: (url: string | URL, init: RequestInit = {}) => undiciFetch(url, { ...(init as object), dispatcher: pool }) as unknown as Promise<Response>,
    renew: () => {
      void pool.close();
      pool = new UndiciAgent();
    },
  };
}
/** The quick figure inside `make test`, the full one with RELIABILITY=full. */
export const sized = <T>(quick: T, full: T): T => (FULL ? full : quick);

/** One line of figures, with a prefix that is easy to grep for and quote. */
export function report(line: string) {
  console.log(`[reliability] ${line}`);
}

/** Whether object bytes live in files under DATA_DIR (not in S3), so the store can be walked on disk. */
export const storeOnDisk = backendMode !== 'postgres-s3';

/**
 * The environment of an install on `dataDir` — for the CLI and for `pactum serve` alike: the
 * database and object storage of the selected test backend (PACTUM_TEST_BACKEND), plus `extra`.
 */
export async function installEnv(dataDir: string, extra: Record<string, string> = {}): Promise<Record<string, string>> {
  return { DATA_DIR: dataDir, ...(await backendEnv(dataDir)), ...extra };
}

export const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

export function content(n: number) {
  const bytes = randomBytes(n);
  return { bytes, oid: sha256(bytes), size: n };
}
export type Content = ReturnType<typeof content>;

export const GIT_LFS = 'application/vnd.git-lfs+json';
export const basicHeader = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/**
 * An HTTP/1.1 request through node:http, which sends what fetch would not: any method, a path
 * with odd encodings, any header. `path` is sent as is (it must be ASCII without spaces).
 */
export function rawRequest(
  base: string,
  opts: { method: string; path: string; headers?: Record<string, string>; body?: string | Uint8Array; timeoutMs?: number; keepAlive?: boolean },
): Promise<RawResponse> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        method: opts.method,
        path: opts.path,
        headers: opts.headers,
        agent: opts.keepAlive === false ? false : agent,
        timeout: opts.timeoutMs ?? 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${opts.timeoutMs ?? 30_000} ms`)));
    req.on('error', reject);
    req.end(opts.body === undefined ? undefined : Buffer.from(opts.body));
  });
}

/**
 * Bytes straight onto a socket: for request lines and headers that node:http refuses to build.
 * Resolves with the status of the first response line (0 when the server closed without one).
 */
export function socketRequest(base: string, raw: Buffer | string, timeoutMs = 15_000): Promise<{ status: number; text: string }> {
  const u = new URL(base);
  return new Promise((resolve) => {
    const socket = connect(Number(u.port), u.hostname);
    const chunks: Buffer[] = [];
    const done = () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: m ? Number(m[1]) : 0, text });
    };
    socket.setTimeout(timeoutMs, () => socket.destroy());
    socket.on('data', (c) => {
      chunks.push(c);
      // One response is enough: stop once its headers and (declared) body have arrived.
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end >= 0) {
        const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end));
        if (length && Buffer.byteLength(text.slice(end + 4), 'latin1') >= Number(length[1])) socket.destroy();
        else if (!length && !/transfer-encoding: *chunked/i.test(text.slice(0, end))) socket.destroy();
        else if (/\r\n0\r\n\r\n$/.test(text)) socket.destroy();
      }
    });
    socket.on('error', () => {});
    socket.on('close', done);
    socket.write(raw);
  });
}

export { freePort } from '../helpers/ports.js';

const MAIN = join(import.meta.dirname, '..', '..', 'src', 'cli', 'main.ts');

/** What a child server's log said that a reliability test must not see. */
export interface LogTrouble {
  /** Request lines with a 5xx status. */
  serverErrors: string[];
  /** Lines at level error or fatal (an unhandled error, a crash). */
  errors: string[];
}

export interface ChildServer {
  url: string;
  port: number;
  pid: number;
  dataDir: string;
  env: Record<string, string>;
  trouble: LogTrouble;
  /** Every log line, when the server was started with keepLog. */
  lines: string[];
  /** Resident set size of the server process, in bytes (/proc/<pid>/status VmRSS). */
  rss(): number;
  /** Sends a signal and waits for the process to end. */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** SIGTERM (graceful), waiting for the exit. */
  stop(): Promise<void>;
}

/**
 * A fresh DATA_DIR set up through the CLI, as an operator would: an org, users with passwords, a
 * repository and its grants. The same environment goes to the server, so it sees what was written.
 */
export async function prepareInstall(
  env: Record<string, string>,
  setup: { org: string; repo: string; users: { username: string; password: string; access?: 'read' | 'write' | 'admin'; role?: string }[] },
): Promise<void> {
  const must = async (args: string[], stdin?: string) => {
    const r = await pactum(args, env, stdin);
    if (r.code !== 0) throw new Error(`pactum ${args.join(' ')} failed (${r.code}): ${r.stdout}${r.stderr}`);
    return r.stdout;
  };
  await must(['org', 'create', setup.org]);
  await must(['repo', 'create', `${setup.org}/${setup.repo}`]);
  for (const u of setup.users) {
    await must(['user', 'create', u.username, '--org', setup.org, '--role', u.role ?? 'member', '--password-stdin'], `${u.password}\n`);
    if (u.access) await must(['repo', 'grant', `${setup.org}/${setup.repo}`, u.username, u.access]);
  }
}

/** `pactum token --user <username>`: a bearer JWT the server with the same environment accepts. */
export async function cliToken(env: Record<string, string>, username: string, ttl = '2h'): Promise<string> {
  const r = await pactum(['token', '--user', username, '--ttl', ttl], env);
  if (r.code !== 0) throw new Error(`pactum token failed (${r.code}): ${r.stdout}${r.stderr}`);
  return r.stdout.trim();
}

export function newDataDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `pactum-${prefix}-`));
}

/**
 * `pactum serve` (sources through tsx) in its own process, on `port` (0: any) and `dataDir`.
 * Its stdout log is read line by line: 5xx request lines and error-level lines are collected.
 */
/** `main`: a built entry point (the bundle, dist/pactum/main.js) instead of the sources through tsx. */
export async function spawnServer(opts: { dataDir: string; port?: number; env?: Record<string, string>; keepLog?: boolean; main?: string }): Promise<ChildServer> {
  const env: Record<string, string> = {
    DATA_DIR: opts.dataDir,
    HOST: '127.0.0.1',
    PORT: String(opts.port ?? 0),
    LOG_LEVEL: 'info',
    SHUTDOWN_TIMEOUT_MS: '2000',
    ...opts.env,
  };
  const child: ChildProcess = spawn(process.execPath, [...(opts.main ? [opts.main] : ['--import', 'tsx', MAIN]), 'serve'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const trouble: LogTrouble = { serverErrors: [], errors: [] };
  const lines: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-20_000)));
  let exited = false;
  const exit = new Promise<void>((r) => child.once('exit', () => ((exited = true), r())));
  const url = await new Promise<string>((resolve, reject) => {
    let pending = '';
    let served = false;
    child.once('exit', (code, signal) => {
      if (!served) reject(new Error(`pactum serve exited (${code ?? signal}) before serving:\n${stderr}`));
    });
    child.stdout!.on('data', (d: Buffer) => {
      pending += d.toString('utf8');
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        if (!line) continue;
        if (opts.keepLog) lines.push(line);
        let entry: { level?: number; status?: number; msg?: string; url?: string };
        try {
          entry = JSON.parse(line);
        } catch {
          continue;
        }
        if ((entry.level ?? 0) >= 50) trouble.errors.push(line.slice(0, 2000));
        if (entry.msg === 'request' && (entry.status ?? 0) >= 500) trouble.serverErrors.push(line.slice(0, 2000));
        if (!served && entry.msg === 'pactum is serving' && entry.url) {
          served = true;
          resolve(entry.url);
        }
      }
    });
  });
  const port = Number(new URL(url).port);
  return {
    url,
    port,
    pid: child.pid!,
    dataDir: opts.dataDir,
    env,
    trouble,
    lines,
    rss: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) * 1024,
    async kill(signal) {
      if (!exited) child.kill(signal);
      await exit;
    },
    async stop() {
      if (!exited) child.kill('SIGTERM');
      await exit;
    },
  };
}

export function removeDir(dir: string) {
  rmSync(dir, { recursive: true, force: true });
}

/** Runs `fn` over `items` with at most `n` at once. */
export async function pool<T>(items: T[], n: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(n, items.length)) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

/** A status histogram as "200: 12, 404: 3", sorted by status. */
export const histogram = (h: Map<number | string, number>) =>
  [...h.entries()]
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])))
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');

export const count = <K>(h: Map<K, number>, k: K) => h.set(k, (h.get(k) ?? 0) + 1);
