/**
 * pumpFile sends a byte range of a file to a writable. Ranges past 2 GiB are where a position
 * stops being a small integer; a sparse file puts marked bytes there without writing gigabytes.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeSync, ftruncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, expect, it } from 'vitest';
import { pumpFile } from '../../../src/objects/store/pump.js';

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
