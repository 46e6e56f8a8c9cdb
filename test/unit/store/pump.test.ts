/**
 * pumpFile sends a byte range of a file to a writable. Ranges past 2 GiB are where a position
 * stops being a small integer; a sparse file puts marked bytes there without writing gigabytes.
 * A few downloads at once read with large buffers; the count of them bounds the memory.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeSync, ftruncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, expect, it, vi } from 'vitest';
import { LARGE_READERS, LARGE_TRANSFER_BUFFER, TRANSFER_BUFFER } from '../../../src/objects/store/buffer-pool.js';
import { largeReadersNow, pumpFile, SinkGone } from '../../../src/objects/store/pump.js';

const dir = mkdtempSync(join(tmpdir(), 'pactum-pump-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const GiB = 2 ** 30;
const MiB = 2 ** 20;

/** A sparse file of `size` bytes with `marks` written at their offsets. */
function sparse(size: number, marks: [number, Buffer][]) {
  const path = join(dir, `sparse-${Math.random().toString(36).slice(2)}`);
  const fd = openSync(path, 'w');
  ftruncateSync(fd, size);
  for (const [at, bytes] of marks) writeSync(fd, bytes, 0, bytes.length, at);
  closeSync(fd);
  return path;
}

function collector() {
  const parts: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      parts.push(Buffer.from(chunk)); // the pump reuses its buffers: keep a copy
      cb();
    },
  });
  return { sink, bytes: () => Buffer.concat(parts) };
}

it('sends a range that crosses 2 GiB, and one that starts past it, byte for byte', async () => {
  const edge = 2 * GiB;
  const before = Buffer.from('the last bytes below 2 GiB');
  const after = Buffer.from('the first bytes at and past 2 GiB');
  const far = Buffer.from('three GiB and a little');
  const path = sparse(3 * GiB + MiB, [[edge - before.length, before], [edge, after], [3 * GiB, far]]);

  const across = collector();
  await pumpFile(path, edge - MiB, edge + MiB - 1, across.sink);
  const got = across.bytes();
  expect(got.length).toBe(2 * MiB);
  expect(got.subarray(MiB - before.length, MiB).equals(before)).toBe(true);
  expect(got.subarray(MiB, MiB + after.length).equals(after)).toBe(true);
  expect(got.subarray(0, MiB - before.length).every((b) => b === 0)).toBe(true);

  const past = collector();
  await pumpFile(path, 3 * GiB, 3 * GiB + far.length + 99, past.sink);
  expect(past.bytes().length).toBe(far.length + 100);
  expect(past.bytes().subarray(0, far.length).equals(far)).toBe(true);
});

it('refuses a range past the end of the file', async () => {
  const path = sparse(1000, []);
  await expect(pumpFile(path, 0, 1999, collector().sink)).rejects.toThrow(/ended at 1000, before 2000/);
});

it('reads with large buffers for at most LARGE_READERS downloads at once, and gives the places back', async () => {
  const path = sparse(8 * MiB, [[0, Buffer.from('start')], [8 * MiB - 3, Buffer.from('end')]]);
  // Sinks that hold their first write until released: every pump stays in flight.
  const held: (() => void)[] = [];
  const sinks = Array.from({ length: LARGE_READERS + 2 }, () => {
    const parts: Buffer[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        parts.push(Buffer.from(chunk));
        if (parts.length === 1) held.push(cb);
        else cb();
      },
    });
    return { sink, parts };
  });
  const pumps = sinks.map(({ sink }) => pumpFile(path, 0, 8 * MiB - 1, sink));
  await vi.waitFor(() => expect(held.length).toBe(sinks.length));
  expect(largeReadersNow()).toBe(LARGE_READERS);
  // LARGE_READERS of them read large buffers at a time, the others small ones (whichever opened its file first).
  const firstReads = sinks.map(({ parts }) => parts[0]!.length).sort((a, b) => b - a);
  expect(firstReads).toEqual([...Array(LARGE_READERS).fill(LARGE_TRANSFER_BUFFER), TRANSFER_BUFFER, TRANSFER_BUFFER]);
  for (const release of held) release();
  await Promise.all(pumps);
  expect(largeReadersNow()).toBe(0);
  for (const { parts } of sinks) {
    const got = Buffer.concat(parts);
    expect(got.length).toBe(8 * MiB);
    expect(got.subarray(0, 5).toString()).toBe('start');
    expect(got.subarray(8 * MiB - 3).toString()).toBe('end');
  }
});

it('a small range and a pump whose client went away leave no large place taken', async () => {
  const path = sparse(4 * MiB, []);
  const small = collector();
  await pumpFile(path, 0, 200 * 1024, small.sink);
  expect(small.bytes().length).toBe(200 * 1024 + 1);
  const gone = new Writable({ write(_chunk, _enc, cb) { cb(new Error('client went away')); } });
  gone.on('error', () => {});
  await expect(pumpFile(path, 0, 4 * MiB - 1, gone)).rejects.toThrow(SinkGone);
  expect(largeReadersNow()).toBe(0);
});
