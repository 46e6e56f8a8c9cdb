/**
 * Which errors are the object storage's file system failing (answered 503, or 507 when full, and
 * counted by kind), and which are not: a client that left, a database error, a plain bug.
 */
import { mkdir, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'node:net';
import { describe, expect, it } from 'vitest';
import { fileSystemFailure } from '../../../src/objects/storage-failure.js';

const caught = (p: Promise<unknown>) => p.then(() => { throw new Error('did not fail'); }, (err: unknown) => err);

describe('fileSystemFailure', () => {
  it('calls a file operation that fails io, and a full disk or quota no_space', async () => {
    const file = join(tmpdir(), `storage-failure-${process.pid}`);
    await writeFile(file, 'a file');
    try {
      expect(fileSystemFailure(await caught(mkdir(join(file, 'sub'))))).toBe('io'); // ENOTDIR
      expect(fileSystemFailure(await caught(open(join(file, 'x'), 'w')))).toBe('io');
    } finally {
      await rm(file);
    }
    for (const code of ['ENOSPC', 'EDQUOT']) {
      expect(fileSystemFailure(Object.assign(new Error(code), { code, syscall: 'write', path: '/data/lfs/tmp/x' }))).toBe('no_space');
    }
  });

  it('leaves alone what is not the file system failing: a socket’s error, an error without a code, anything else', async () => {
    const socketError = await new Promise<unknown>((resolve) => createConnection({ host: '127.0.0.1', port: 1 }).on('error', resolve));
    expect((socketError as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    expect(fileSystemFailure(socketError)).toBeNull();
    expect(fileSystemFailure(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }))).toBeNull();
    expect(fileSystemFailure(new Error('a bug'))).toBeNull();
    expect(fileSystemFailure('ENOSPC')).toBeNull();
    expect(fileSystemFailure(undefined)).toBeNull();
  });
});
