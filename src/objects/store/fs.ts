/**
 * The embedded backend: files under DATA_DIR/objects. Objects at ab/cd/<oid>; a write goes to
 * tmp/ and is fsynced and renamed into place on commit, so an object is never visible half
 * written. A resumable upload is a data file plus an offset file that is rewritten (atomically)
 * only after the data up to that offset is fsynced: after a crash the offset never points past
 * durable bytes, and the next append truncates whatever followed.
 */
import { constants, createReadStream } from 'node:fs';
import { access, mkdir, open, readdir, readFile, rename, rm, stat, statfs, truncate, unlink, writeFile } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pumpFile } from './pump.js';
import { pooledFileWriter } from './file-writer.js';
import { OffsetConflict, TooLarge, type BlobBackend, type ByteRange, type PendingWrite } from './backend.js';

const CHUNK = 1 << 20; // 1 MiB reads (of a stored prefix, or a whole object as a stream): fewer syscalls per GiB; writes go through file-writer.ts

export function fsBackend(root: string): BlobBackend {
  const objectPath = (oid: string) => join(root, 'objects', oid.slice(0, 2), oid.slice(2, 4), oid);
  const tmpDir = join(root, 'tmp');
  const partialDir = join(root, 'partials');
  const partialPath = (key: string) => join(partialDir, createHash('sha256').update(key).digest('hex'));

  /** fsync applies to the file, whichever descriptor asks; returns the size that is now durable. */
  async function fsyncFile(path: string): Promise<number> {
    const h = await open(path, 'r+');
    try {
      await h.sync();
      return (await h.stat()).size;
    } finally {
      await h.close();
    }
  }

  async function fsyncDir(dir: string) {
    const h = await open(dir, 'r');
    try {
      await h.sync();
    } finally {
      await h.close();
    }
  }

  async function place(from: string, oid: string) {
    const to = objectPath(oid);
    await mkdir(dirname(to), { recursive: true, mode: 0o700 });
    await rename(from, to);
    await fsyncDir(dirname(to));
  }

  async function readOffset(key: string): Promise<number> {
    try {
      return Number((JSON.parse(await readFile(`${partialPath(key)}.offset`, 'utf8')) as { offset?: unknown }).offset) || 0;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
  }

  async function writeOffset(key: string, offset: number) {
    const file = `${partialPath(key)}.offset`;
    const tmp = `${file}.${randomBytes(6).toString('hex')}`;
    await writeFile(tmp, JSON.stringify({ offset }), { mode: 0o600 });
    await rename(tmp, file);
  }

  return {
    name: 'fs',

    async beginWrite(oid, _size, opts): Promise<PendingWrite> {
      await mkdir(tmpDir, { recursive: true, mode: 0o700 });
      const path = join(tmpDir, randomBytes(12).toString('hex'));
      // The stream owns its descriptor; durability comes from an fsync of the file afterwards.
      // It writes through pooled buffers, so the body's own chunks die as soon as they are copied.
      const stream = pooledFileWriter(path, { flags: 'wx', mode: 0o600, ownsChunks: opts?.ownsChunks });
      let done = false;
      return {
        stream,
        async commit() {
          done = true;
          await fsyncFile(path);
          await place(path, oid);
        },
        async abort() {
          if (done) return;
          done = true;
          stream.destroy();
          await unlink(path).catch(() => {});
        },
      };
    },

    async read(oid, range) {
      const path = objectPath(oid);
      await stat(path); // fail here, not mid-response, when it is missing
      return createReadStream(path, { start: range?.start, end: range?.end, highWaterMark: CHUNK });
    },

    writeTo: (oid, range, sink) => pumpFile(objectPath(oid), range.start, range.end, sink),

    async stat(oid) {
      try {
        return (await stat(objectPath(oid))).size;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
    },

    async delete(oid) {
      await unlink(objectPath(oid)).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
    },

    partials: {
      size: readOffset,

      async append(key, offset, body, limit, opts) {
        const current = await readOffset(key);
        if (offset !== current) throw new OffsetConflict(current);
        await mkdir(partialDir, { recursive: true, mode: 0o700 });
        const path = partialPath(key);
        // Bytes after the recorded offset were never acknowledged: cut them before appending.
        const cut = await open(path, 'a+', 0o600);
        try {
          await cut.truncate(offset);
        } finally {
          await cut.close();
        }
        let written = 0;
        const counter = new Transform({
          transform(chunk: Buffer, _enc, cb) {
            if (written + chunk.length > limit) return cb(new TooLarge(`more than the ${limit} bytes left of this upload`));
            written += chunk.length;
            cb(null, chunk);
          },
        });
        const sink = pooledFileWriter(path, { flags: 'r+', start: offset, ownsChunks: opts?.ownsChunks });
        const failure = await pipeline(body, counter, sink).then(() => null, (err: unknown) => err);
        if (failure instanceof TooLarge) {
          await truncate(path, offset);
          throw failure;
        }
        // What reached the file is what counts (a broken-off pipeline may drop buffered
        // chunks): make it durable, then record it as the offset the client resumes from.
        const reached = await fsyncFile(path);
        await writeOffset(key, reached);
        if (failure && isServerSide(failure)) throw failure;
        return reached;
      },

      // Its one caller awaits it at once, so a throw of createReadStream reaches it as a rejection would.
      read(key, range: ByteRange) {
        return Promise.resolve(createReadStream(partialPath(key), { start: range.start, end: range.end, highWaterMark: CHUNK }));
      },

      async promote(key, oid) {
        await place(partialPath(key), oid);
        await rm(`${partialPath(key)}.offset`, { force: true });
      },

      async remove(key) {
        await rm(partialPath(key), { force: true });
        await rm(`${partialPath(key)}.offset`, { force: true });
      },

      async expire(idleMs, busy = new Set()) {
        const held = new Set([...busy].map((key) => partialPath(key).slice(partialDir.length + 1)));
        let names: string[];
        try {
          names = await readdir(partialDir);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
          throw err;
        }
        // An upload is its data file and its offset file; the later of their times is its last append.
        const lastTouched = new Map<string, number>();
        for (const name of names) {
          const info = await stat(join(partialDir, name)).catch(() => null);
          if (!info) continue;
          const upload = name.replace(/\.offset$/, '');
          lastTouched.set(upload, Math.max(lastTouched.get(upload) ?? 0, info.mtimeMs));
        }
        let removed = 0;
        for (const [upload, touched] of lastTouched) {
          if (Date.now() - touched <= idleMs || held.has(upload)) continue;
          // The offset first: without it the upload reads as empty, whatever is left of the data.
          await rm(join(partialDir, `${upload}.offset`), { force: true });
          await rm(join(partialDir, upload), { force: true });
          removed++;
        }
        return removed;
      },
    },

    async ping() {
      await mkdir(root, { recursive: true, mode: 0o700 });
      await access(root, constants.W_OK);
    },

    async freeBytes() {
      await mkdir(root, { recursive: true, mode: 0o700 });
      const s = await statfs(root);
      return s.bavail * s.bsize;
    },
  };
}

/** A failed write, fsync or open on our side, as opposed to a client that went away. */
const isServerSide = (err: unknown): err is NodeJS.ErrnoException => {
  const e = err as NodeJS.ErrnoException;
  return Boolean(e.syscall) && e.code !== 'ECONNRESET' && e.code !== 'EPIPE';
};

export type { Readable };

/**
 * Removes temporary files of writes nobody finishes: a process killed mid-upload leaves them.
 * A live upload touches its file continuously, and the server closes a connection idle for two
 * minutes, so a file untouched for longer is dead. Returns how many went.
 */
export async function sweepTemporaryFiles(root: string, maxIdleMs = 2 * 60_000): Promise<number> {
  const dir = join(root, 'tmp');
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  let removed = 0;
  for (const name of names) {
    const path = join(dir, name);
    const info = await stat(path).catch(() => null);
    if (info && Date.now() - info.mtimeMs > maxIdleMs) {
      await unlink(path).catch(() => {});
      removed++;
    }
  }
  return removed;
}
