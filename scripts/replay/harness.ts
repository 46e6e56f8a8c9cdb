/**
 * What every attack of the security replay shares: a pactum build's CLI and server, started
 * fresh (its own DATA_DIR, SQLite, fs store), and the small clients the attacks speak through.
 *
 * An attack group is a file next to this one whose default export takes a `Replay` and calls
 * `report(attack, result)` once per attack; scripts/security-replay.ts runs every group against
 * the build it is given, so one build's answers can be set beside another's.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { freePort } from '../lib/free-port.js';

export const LFS_JSON = 'application/vnd.git-lfs+json';
/** A download batch naming one absent object (older builds refused an empty list). */
export const PROBE = { operation: 'download', objects: [{ oid: 'a'.repeat(64), size: 1 }] };

export function report(attack: string, result: string) {
  console.log(`${attack.padEnd(72)} ${result}`);
}

export const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** The message of a refusal, whether a tool error result or an HTTP error the transport threw. */
export const reason = (t: string) => /"message":"([^"]{0,70})/.exec(t)?.[1] ?? t.slice(0, 70);
export const text = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;

export async function mcp(url: string, token: string) {
  const client = new Client({ name: 'security-replay', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/api/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

export async function call(client: Client, name: string, args: Record<string, unknown>) {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { ok: !r.isError, text: text(r) };
}

export interface Action { href: string; header: Record<string, string> }
/** What the replay reads of a batch answer. */
export interface BatchAnswer { objects: { actions?: { upload?: Action; download?: Action } }[] }

export async function batch(lfs: string, auth: string | null, body: unknown) {
  const res = await fetch(`${lfs}/objects/batch`, {
    method: 'POST',
    headers: { accept: LFS_JSON, 'content-type': LFS_JSON, ...(auth ? { authorization: auth } : {}) },
    // A ref, which older builds required, unless the attack is about the ref itself.
    body: JSON.stringify({ ref: { name: 'refs/heads/main' }, ...(body as object) }),
  });
  return { status: res.status, json: (await res.json().catch(() => null)) as BatchAnswer | null };
}

export async function alive(url: string) {
  try {
    return (await fetch(`${url}/healthz`)).status === 200;
  } catch {
    return false;
  }
}

/** One pactum of the build under test: its CLI, and its server once started. */
export interface Replay {
  /** The build's dist directory. */
  dist: string;
  /** The server's environment (DATA_DIR, PORT, …), which the CLI shares. */
  env: NodeJS.ProcessEnv;
  dataDir: string;
  /** Runs the build's CLI with this server's environment; stdout, trimmed. */
  run: (args: string[], input?: string) => string;
  /**
   * Starts the server (once the attack group has set up what it needs through the CLI).
   * `descriptorLimit`: its soft and hard limit on open files, set by the shell that starts it.
   */
  start: (opts?: { descriptorLimit?: number }) => Promise<{ url: string; child: ChildProcess }>;
}

/**
 * A fresh pactum (its own DATA_DIR and port) for `fn`, stopped and removed afterwards. `extraEnv`
 * sets what an attack needs (short windows, private networks for a local target site, …).
 */
export async function withPactum<T>(dist: string, extraEnv: Record<string, string>, fn: (p: Replay) => Promise<T>): Promise<T> {
  const cli = join(dist, 'src', 'cli', 'main.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'security-replay-'));
  // Tokens name the server's URL as their audience, so the CLI must know the port before it signs.
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'silent', ...extraEnv };
  const children: ChildProcess[] = [];
  const replay: Replay = {
    dist,
    env,
    dataDir,
    run: (args, input) => execFileSync(process.execPath, [cli, ...args], { env, input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'ignore'] }).trim(),
    async start(opts = {}) {
      const limit = opts.descriptorLimit;
      const [file, args] = limit ? ['/bin/sh', ['-c', `ulimit -Sn ${limit} && ulimit -Hn ${limit} && exec "$0" "$@"`, process.execPath, cli, 'serve']] : [process.execPath, [cli, 'serve']];
      const child = spawn(file, args, { env: { ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'ignore'] });
      children.push(child);
      const url = await new Promise<string>((ok, fail) => {
        let buf = '';
        child.once('exit', (code) => fail(new Error(`serve exited with ${code}`)));
        child.stdout.on('data', (d) => {
          buf += d;
          const m = /"url":"([^"]+)"/.exec(buf);
          if (m) ok(m[1]!);
        });
      });
      child.stdout.resume();
      return { url, child };
    },
  };
  try {
    return await fn(replay);
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : Promise.resolve())));
    rmSync(dataDir, { recursive: true, force: true });
  }
}
