/**
 * Large objects and misbehaving transfer clients, for the abort and back-pressure tests: objects
 * of hundreds of MiB generated chunk by chunk (never held whole, so the test process's own memory
 * stays out of the server's figures), uploads streamed from them, and downloads that a client
 * drops mid-body, reads slowly, or never reads at all.
 */
import { createHash, randomBytes } from 'node:crypto';
import { request, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';

const MiB = 1 << 20;

export interface BigObject {
  oid: string;
  size: number;
  /** The bytes, 1 MiB at a time (each chunk a fresh buffer). */
  chunks(): Generator<Buffer>;
}

/** `size` bytes: one random MiB repeated, each copy stamped with its index so no two MiB are equal. */
export function bigObject(size: number): BigObject {
  const block = randomBytes(MiB);
  function* chunks() {
    for (let i = 0, at = 0; at < size; i++, at += MiB) {
      const c = Buffer.from(block.subarray(0, Math.min(MiB, size - at)));
      if (c.length >= 8) c.writeBigUInt64BE(BigInt(i), 0);
      yield c;
    }
  }
  const hash = createHash('sha256');
  for (const c of chunks()) hash.update(c);
  return { oid: hash.digest('hex'), size, chunks };
}

export interface Action {
  href: string;
  header?: Record<string, string>;
}

/** A request with a streamed body; resolves with the status (and body text) of the answer. */
export function streamRequest(action: Action, method: string, headers: Record<string, string>, chunks: Iterable<Buffer>, length: number): Promise<{ status: number; text: string }> {
  const u = new URL(action.href);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, agent: false, headers: { ...action.header, ...headers, 'content-length': String(length) } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    (async () => {
      for (const c of chunks) if (!req.write(c)) await new Promise((r) => req.once('drain', r));
      req.end();
    })().catch(reject);
  });
}

/**
 * A body that stops after `sendBytes` of the `length` it announced: the socket is destroyed
 * (the client vanished). Resolves once the socket is closed.
 */
export function cutUpload(action: Action, method: string, headers: Record<string, string>, chunks: Iterable<Buffer>, length: number, sendBytes: number): Promise<void> {
  const u = new URL(action.href);
  return new Promise((resolve) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, agent: false, headers: { ...action.header, ...headers, 'content-length': String(length) } });
    req.on('error', () => {});
    req.on('close', () => resolve());
    req.on('response', (res) => res.resume());
    void (async () => {
      let sent = 0;
      for (const c of chunks) {
        const piece = c.subarray(0, Math.min(c.length, sendBytes - sent));
        if (!req.write(piece)) await new Promise((r) => req.once('drain', r));
        sent += piece.length;
        if (sent >= sendBytes) break;
      }
      await new Promise((r) => setTimeout(r, 50)); // let the server take the bytes before the cut
      req.destroy();
    })();
  });
}

/**
 * A download that a slow client (about `rate` bytes a second) drops once `stopAfter` bytes
 * arrived: the socket is destroyed mid-body. Resolves with the status and how much arrived.
 */
export function droppedDownload(action: Action, opts: { range?: string; stopAfter: number; rate?: number }): Promise<{ status: number; received: number }> {
  const u = new URL(action.href);
  const rate = opts.rate ?? 32 * MiB;
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, agent: false, headers: { ...action.header, ...(opts.range ? { range: opts.range } : {}) } });
    req.on('error', (err) => (received === 0 && status === 0 ? reject(err) : undefined));
    let status = 0;
    let received = 0;
    req.on('response', (res: IncomingMessage) => {
      status = res.statusCode!;
      const started = Date.now();
      res.on('data', (d: Buffer) => {
        received += d.length;
        if (received >= opts.stopAfter) {
          req.destroy();
          return;
        }
        // Throttle: pause until the elapsed time matches the bytes read at `rate`.
        const ahead = (received / rate) * 1000 - (Date.now() - started);
        if (ahead > 5) {
          res.pause();
          setTimeout(() => res.resume(), ahead);
        }
      });
      res.on('error', () => {});
      res.on('end', () => resolve({ status, received }));
    });
    req.on('close', () => resolve({ status, received }));
    req.end();
  });
}

/** A raw GET that reads the status line and then nothing more: the server meets back-pressure. */
export function stalledDownload(action: Action): Promise<{ socket: Socket; head: string }> {
  const u = new URL(action.href);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname);
    socket.on('error', reject);
    const head = [`GET ${u.pathname}${u.search} HTTP/1.1`, `Host: ${u.host}`, ...Object.entries(action.header ?? {}).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n');
    socket.write(head);
    socket.once('data', (d: Buffer) => {
      socket.pause(); // never read again: the kernel buffers fill, then the server's writes wait
      resolve({ socket, head: d.subarray(0, 200).toString('latin1') });
    });
  });
}

/** GETs `action` in full and returns the sha256 of what arrived, and how many bytes. */
export function downloadDigest(action: Action, range?: string): Promise<{ status: number; sha256: string; bytes: number }> {
  const u = new URL(action.href);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, agent: false, headers: { ...action.header, ...(range ? { range } : {}) } }, (res) => {
      const hash = createHash('sha256');
      let bytes = 0;
      res.on('data', (d: Buffer) => {
        hash.update(d);
        bytes += d.length;
      });
      res.on('end', () => resolve({ status: res.statusCode!, sha256: hash.digest('hex'), bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** sha256 of bytes [start, end] of the object. */
export function rangeDigest(o: BigObject, start: number, end: number): string {
  const hash = createHash('sha256');
  let at = 0;
  for (const c of o.chunks()) {
    const from = Math.max(start - at, 0);
    const to = Math.min(end + 1 - at, c.length);
    if (to > from) hash.update(c.subarray(from, to));
    at += c.length;
    if (at > end) break;
  }
  return hash.digest('hex');
}
