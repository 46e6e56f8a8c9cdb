/**
 * What the transfer benchmarks (objects.ts, s3.ts) share: a test file, one HTTP request timed
 * from this process, and pactum's batch API.
 */
import { execFile } from 'node:child_process';
import { createHash, randomFillSync } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pactum } from './pactum-process.js';

export interface TestFile {
  path: string;
  oid: string;
  size: number;
}

/** A file of `size` pseudo-random bytes (each 16 MiB block varied cheaply) and its SHA-256. */
export async function makeFile(size: number, tag = 'object'): Promise<TestFile> {
  const path = join(tmpdir(), `bench-${tag}-${size}`);
  const out = createWriteStream(path);
  const hash = createHash('sha256');
  const block = Buffer.alloc(16 << 20);
  for (let left = size; left > 0; left -= block.length) {
    randomFillSync(block, 0, Math.min(4096, block.length));
    const chunk = Buffer.from(left >= block.length ? block : block.subarray(0, left));
    hash.update(chunk);
    if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(() => r()));
  return { path, oid: hash.digest('hex'), size };
}

export interface Sent {
  status: number;
  ms: number;
  /** The body, unless it is octets (only counted). */
  body: string;
  bytes: number;
}

/** One request, its body read from `file` in 1 MiB reads; the time until the response ended. */
export function send(url: string, method: string, headers: Record<string, string>, file?: string): Promise<Sent> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let body = '';
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (body.length < 100_000 && !/octet/.test(res.headers['content-type'] ?? '')) body += c.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode!, ms: performance.now() - started, body, bytes }));
    });
    req.on('error', reject);
    if (file) createReadStream(file, { highWaterMark: 1 << 20 }).pipe(req);
    else req.end();
  });
}

export interface Action {
  href: string;
  header: Record<string, string>;
}

/**
 * A basic-transfer batch request to a Git LFS server (`lfs`: its .../info/lfs; `auth`: the
 * Authorization header); throws unless it answered 200. `ms`: from sending to the answer's end.
 */
export async function batch(p: Pick<Pactum, 'lfs' | 'auth'>, operation: 'upload' | 'download', objects: { oid: string; size: number }[]) {
  const body = JSON.stringify({ operation, transfers: ['basic'], objects });
  const headers = { authorization: p.auth, accept: 'application/vnd.git-lfs+json', 'content-type': 'application/vnd.git-lfs+json', 'content-length': String(Buffer.byteLength(body)) };
  const started = performance.now();
  const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(`${p.lfs}/objects/batch`, { method: 'POST', headers }, (r) => {
      let text = '';
      r.on('data', (c) => (text += c));
      r.on('end', () => resolve({ status: r.statusCode!, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
  if (res.status !== 200) throw new Error(`batch answered ${res.status}: ${res.body}`);
  const answer = JSON.parse(res.body) as { objects: { oid: string; actions?: Record<string, Action> }[] };
  return { ms: performance.now() - started, objects: answer.objects };
}

/** The one action of a batch request for a single object. */
export async function actionFor(p: Pick<Pactum, 'lfs' | 'auth'>, operation: 'upload' | 'download', f: { oid: string; size: number }): Promise<Action> {
  return (await actionsFor(p, operation, f)).action;
}

/** The batch request for a single object: its action, the verify action an upload may carry, and the request's time. */
export async function actionsFor(p: Pick<Pactum, 'lfs' | 'auth'>, operation: 'upload' | 'download', f: { oid: string; size: number }) {
  const b = await batch(p, operation, [f]);
  const actions = b.objects[0]?.actions;
  const action = actions?.[operation];
  if (!action) throw new Error(`no ${operation} action for ${f.oid} (${operation === 'upload' ? 'stored already?' : 'not stored?'})`);
  return { action, verify: actions.verify, ms: b.ms };
}

/** The verify request a Git LFS client sends after an upload whose batch answer had one; its time. */
export async function verify(action: Action, f: { oid: string; size: number }): Promise<number> {
  const body = JSON.stringify({ oid: f.oid, size: f.size });
  const headers = { ...action.header, accept: 'application/vnd.git-lfs+json', 'content-type': 'application/vnd.git-lfs+json', 'content-length': String(Buffer.byteLength(body)) };
  const started = performance.now();
  const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(action.href, { method: 'POST', headers }, (r) => {
      let text = '';
      r.on('data', (c) => (text += c));
      r.on('end', () => resolve({ status: r.statusCode!, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
  if (res.status !== 200) throw new Error(`verify answered ${res.status}: ${res.body}`);
  return performance.now() - started;
}

/**
 * One transfer by curl, the client the figures were taken with: a C client costs the
 * two cores far less than a Node one, so the servers, not the client, are what is measured.
 * The time is curl's own (connect to last byte).
 */
export function curl(url: string, method: 'PUT' | 'GET', headers: Record<string, string>, file?: string): Promise<Sent> {
  const args = ['-s', '-S', '-o', '/dev/null', '-w', '%{http_code} %{time_total} %{size_download}', '-X', method, ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`])];
  if (file) args.push('-T', file, '-H', 'Expect:'); // no 100-continue round trip
  args.push(url);
  return new Promise((resolve, reject) => {
    execFile('curl', args, { maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`curl ${method} ${url}: ${stderr || err.message}`));
      const [status, seconds, bytes] = stdout.trim().split(' ');
      resolve({ status: Number(status), ms: Number(seconds) * 1000, body: '', bytes: Number(bytes) });
    });
  });
}
