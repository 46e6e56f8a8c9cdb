/**
 * Transfer buffers are reused (buffer-pool.ts), never handed out while a write still uses them
 * (file-writer.ts), and a body's dead chunks are collected as they go (transient-buffers.ts).
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterEach, expect, it } from 'vitest';
import { bufferPool, type BufferPool } from '../../../src/objects/store/buffer-pool.js';
import { pooledFileWriter } from '../../../src/objects/store/file-writer.js';
import { FREED_FROM, MAX_PACE, PACE, PACE_PER_HOLDER, freeNow, paceFor, setCollector, transientBytes } from '../../../src/http/transient-buffers.js';

const dirs: string[] = [];
const scratch = () => {
  const d = mkdtempSync(join(tmpdir(), 'pactum-buffers-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A pool that records which buffers are out, so a test sees one handed out twice. */
function watchedPool(size: number, keep: number) {
  const inner = bufferPool(size, keep);
  const out = new Set<Buffer>();
  let taken = 0;
  let handedOutWhileOut = 0;
  const pool: BufferPool = {
    size,
    take() {
      const b = inner.take();
      if (out.has(b)) handedOutWhileOut++;
      out.add(b);
      taken++;
      return b;
    },
    give(b) {
      out.delete(b);
      inner.give(b);
    },
    get free() {
      return inner.free;
    },
  };
  return { pool, out, stats: () => ({ taken, handedOutWhileOut }) };
}

it('hands a given-back buffer out again, keeps at most `keep` free, and refuses a buffer given twice', () => {
  const pool = bufferPool(1024, 1);
  const a = pool.take();
  const b = pool.take();
  expect(a).not.toBe(b);
  pool.give(a);
  pool.give(b); // beyond `keep`: left to the collector
  expect(pool.free).toBe(1);
  expect(pool.take()).toBe(a);
  expect(() => pool.give(b)).toThrow(/not out of this pool/);
});

it('writes a body in pooled buffers, reusing two of them whatever its size, each given back only after its write', async () => {
  const dir = scratch();
  const { pool, out, stats } = watchedPool(64 * 1024, 4);
  const data = randomBytes(1_000_000 + 123);
  // Chunks of odd sizes, as a socket delivers them, straddling buffer boundaries.
  const chunks: Buffer[] = [];
  for (let at = 0; at < data.length; at += 40_000 + (at % 7)) chunks.push(data.subarray(at, at + 40_000 + (at % 7)));
  const path = join(dir, 'out');
  await pipeline(Readable.from(chunks), pooledFileWriter(path, { flags: 'wx', pool }));
  expect(readFileSync(path).equals(data)).toBe(true);
  expect(stats().handedOutWhileOut).toBe(0);
  expect(out.size).toBe(0); // every buffer came back
  expect(pool.free).toBeLessThanOrEqual(2); // never more than two were needed at once
  expect(stats().taken).toBe(Math.ceil(data.length / pool.size));
});

it('writes from an offset into an existing file (a resumable upload appending)', async () => {
  const dir = scratch();
  const path = join(dir, 'partial');
  const head = randomBytes(100_000);
  const tail = randomBytes(300_000);
  await pipeline(Readable.from([head]), pooledFileWriter(path, { flags: 'wx' }));
  await pipeline(Readable.from([tail]), pooledFileWriter(path, { flags: 'r+', start: head.length }));
  expect(readFileSync(path).equals(Buffer.concat([head, tail]))).toBe(true);
});

it('cut off mid-body, keeps every byte it took, gives every buffer back and closes the file', async () => {
  const dir = scratch();
  const { pool, out } = watchedPool(64 * 1024, 4);
  const path = join(dir, 'cut');
  const sent = randomBytes(150_000);
  const body = new Readable({ read() {} });
  const writing = pipeline(body, pooledFileWriter(path, { flags: 'wx', pool }));
  body.push(sent);
  await new Promise((r) => setTimeout(r, 50));
  body.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
  await expect(writing).rejects.toThrow(/aborted/);
  await new Promise((r) => setTimeout(r, 50));
  expect(statSync(path).size).toBe(sent.length);
  expect(readFileSync(path).equals(sent)).toBe(true);
  expect(out.size).toBe(0);
});

it('a file that cannot be opened fails the stream, and no buffer stays out', async () => {
  const { pool, out } = watchedPool(64 * 1024, 4);
  await expect(pipeline(Readable.from([randomBytes(200_000)]), pooledFileWriter(join(scratch(), 'no', 'such', 'dir'), { flags: 'wx', pool }))).rejects.toThrow(/ENOENT/);
  expect(out.size).toBe(0);
});

it('collects the young generation once per PACE bytes of transient buffers', () => {
  let collections = 0;
  const restore = setCollector(() => collections++);
  try {
    for (let i = 0; i < (3 * PACE) / 65536; i++) transientBytes(65536);
    expect(collections).toBe(3);
    transientBytes(PACE - 1);
    expect(collections).toBe(3);
  } finally {
    restore();
  }
});

it('spaces the collections wider while many uploads give bytes at once, so that a chunk queued behind the others dies young', () => {
  let collections = 0;
  const restore = setCollector(() => collections++);
  try {
    const uploads = Array.from({ length: 32 }, () => ({}));
    const pace = paceFor(32);
    expect(pace).toBe(32 * PACE_PER_HOLDER);
    expect(pace).toBeGreaterThan(PACE);
    // 32 uploads taking turns with 64 KiB chunks: no collection at PACE, one at 32 uploads' pace.
    let given = 0;
    for (let i = 0; given + 65536 < pace; i++, given += 65536) transientBytes(65536, uploads[i % 32]);
    expect(given).toBeGreaterThan(PACE);
    expect(collections).toBe(0);
    transientBytes(65536, uploads[0]);
    expect(collections).toBe(1);
    // The next interval keeps the wider pace while the uploads go on (one gave so far).
    transientBytes(PACE, uploads[1]);
    expect(collections).toBe(1);
    // Once a whole interval had a single upload, the pace is PACE again.
    transientBytes(pace, uploads[1]);
    expect(collections).toBe(2);
    transientBytes(PACE, uploads[1]);
    expect(collections).toBe(3);
  } finally {
    restore();
  }
});

it('never lets more than MAX_PACE bytes of transient buffers wait for a collection, however many uploads', () => {
  expect(paceFor(10_000)).toBe(MAX_PACE);
  expect(paceFor(0)).toBe(PACE);
  let collections = 0;
  const restore = setCollector(() => collections++);
  try {
    for (let i = 0; i < MAX_PACE / 4096; i++) transientBytes(4096, {});
    expect(collections).toBe(1);
  } finally {
    restore();
  }
});

it("reaches V8's young-generation collection without exposing gc to the program or to contexts made later", async () => {
  const { spawnSync } = await import('node:child_process');
  const module = join(import.meta.dirname, '..', '..', '..', 'src', 'http', 'transient-buffers.ts');
  const script = `
    import { PerformanceObserver } from 'node:perf_hooks';
    import { constants } from 'node:perf_hooks';
    import { runInNewContext } from 'node:vm';
    import { transientBytes, PACE } from ${JSON.stringify(module)};
    const kinds = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) kinds.push(e.detail.kind); }).observe({ entryTypes: ['gc'] });
    transientBytes(PACE);
    const later = runInNewContext('typeof gc');
    setTimeout(() => console.log(JSON.stringify({ minor: kinds.includes(constants.NODE_PERFORMANCE_GC_MINOR), exposed: typeof globalThis.gc, later })), 50);`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(JSON.parse(r.stdout)).toEqual({ minor: true, exposed: 'undefined', later: 'undefined' });
});

it('frees a chunk that spans a buffer of its own at once, and leaves slices and pooled small buffers to the collector', () => {
  const own = Buffer.alloc(1 << 20, 7);
  const before = process.memoryUsage().arrayBuffers;
  expect(freeNow(own)).toBe(true);
  expect(own.length).toBe(0); // its ArrayBuffer is detached: the bytes went back to malloc
  expect(before - process.memoryUsage().arrayBuffers).toBeGreaterThanOrEqual(1 << 20);
  const larger = Buffer.alloc(200_000, 1);
  const slice = larger.subarray(0, 100_000);
  expect(freeNow(slice)).toBe(false);
  expect(larger.subarray(100_000).length).toBe(100_000);
  expect(slice.length).toBe(100_000);
  const pooled = Buffer.from('from the shared pool'); // a piece of Node's 8 KiB slab, shared with others
  expect(freeNow(pooled)).toBe(false);
  expect(pooled.toString()).toBe('from the shared pool');
  expect(freeNow(Buffer.alloc(0))).toBe(false);
  const small = Buffer.alloc(FREED_FROM - 1, 3); // a buffer of its own, but too small to be worth a detach
  expect(freeNow(small)).toBe(false);
  expect(small.length).toBe(FREED_FROM - 1);
  expect(freeNow(Buffer.alloc(FREED_FROM))).toBe(true);
});

it('takes a freed chunk off the bytes that wait for a collection', () => {
  let collections = 0;
  const restore = setCollector(() => collections++);
  try {
    // An upload whose chunks are counted as they are hashed and freed once stored: no collection.
    const upload = {};
    for (let i = 0; i < (4 * PACE) / 65536; i++) {
      const chunk = Buffer.alloc(65536);
      transientBytes(chunk.length, upload);
      freeNow(chunk, true);
    }
    expect(collections).toBe(0);
    // A chunk nobody counted (a JSON body's) does not take bytes off what others left waiting.
    transientBytes(PACE - 65536);
    freeNow(Buffer.alloc(1 << 20));
    transientBytes(65536);
    expect(collections).toBe(1);
    collections = 0;
    // Chunks that are not freed still bring the collection at PACE.
    for (let i = 0; i < PACE / 65536; i++) transientBytes(65536);
    expect(collections).toBe(1);
  } finally {
    restore();
  }
});

it('frees each chunk once copied when it owns them, and leaves a caller\'s chunks alone otherwise', async () => {
  const dir = scratch();
  const chunks = Array.from({ length: 40 }, (_, i) => Buffer.alloc(50_000 + i, i)); // each a buffer of its own
  const expected = Buffer.concat(chunks);
  await pipeline(Readable.from(chunks), pooledFileWriter(join(dir, 'kept'), { flags: 'wx' }));
  expect(chunks.every((c, i) => c.length === 50_000 + i)).toBe(true);
  await pipeline(Readable.from(chunks), pooledFileWriter(join(dir, 'owned'), { flags: 'wx', ownsChunks: true }));
  expect(readFileSync(join(dir, 'kept')).equals(expected)).toBe(true);
  expect(readFileSync(join(dir, 'owned')).equals(expected)).toBe(true);
  expect(chunks.every((c) => c.length === 0)).toBe(true);
});

it("frees a request body's chunks as the store takes them: an upload over HTTP runs no paced collection", async () => {
  const { createServer, request } = await import('node:http');
  const { createHash } = await import('node:crypto');
  const { fsBackend } = await import('../../../src/objects/store/fs.js');
  const { contentStore } = await import('../../../src/objects/store/content-store.js');
  const store = contentStore(fsBackend(scratch()));
  const data = randomBytes(32 << 20);
  const oid = createHash('sha256').update(data).digest('hex');
  let owns = true;
  const server = createServer((req, res) => {
    store.put(oid, data.length, req, { ownsChunks: owns }).then(
      () => res.end('stored'),
      (err: Error) => res.writeHead(500).end(err.message),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as import('node:net').AddressInfo;
  const upload = () =>
    new Promise<string>((resolve, reject) => {
      const req = request({ port, host: '127.0.0.1', method: 'PUT', headers: { 'content-length': data.length } }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(`${res.statusCode} ${text}`));
      });
      req.on('error', reject);
      req.end(data);
    });
  let collections = 0;
  const restore = setCollector(() => collections++);
  try {
    expect(await upload()).toBe('200 stored');
    expect(collections).toBe(0);
    // The same upload with chunks the store may not free: one collection per PACE bytes or so.
    owns = false;
    await store.delete(oid);
    expect(await upload()).toBe('200 stored');
    expect(collections).toBeGreaterThanOrEqual((data.length / PACE) * 0.5);
  } finally {
    restore();
    await new Promise<void>((r) => server.close(() => r()));
  }
});
