/**
 * The S3-compatible backend (AWS S3, MinIO, Ceph RGW, ...). Objects at <prefix>objects/ab/cd/<oid>.
 * A write streams into a multipart upload of the final key that is completed only on commit,
 * after the layer above verified the hash, so an object is never visible half written (a body
 * that fits in one part is a single PutObject instead). A resumable upload is a run of chunk
 * objects <prefix>partials/<sha256(key)>/<offset>, each written whole: its size is the run of
 * chunks that continue each other from offset 0, so it survives restarts and every instance sees
 * the same state with nothing but the bucket.
 *
 * Memory stays bounded whatever the object's size: a write streams its parts straight through
 * (holding only bodies up to BUFFERED_MAX), an append holds at most one chunk.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  UploadPartCopyCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { OffsetConflict, StoreUnavailable, TooLarge, type BlobBackend, type ByteRange, type PendingWrite } from './backend.js';
import { relay, SinkGone } from './pump.js';

const MiB = 1 << 20;
/** S3's minimum size of every part but the last. */
const MIN_PART = 5 * MiB;
const MAX_PARTS = 10_000;
/** Bodies up to this size are held and sent whole: one PutObject instead of a three-request multipart upload. */
const BUFFERED_MAX = MiB;
/** Parts whose bytes were all sent and whose answer is awaited; S3 stores them in parallel. */
const PARTS_IN_FLIGHT = 4;
/** Buffering between the request and a part's upload: small, the sockets do the rest. */
const PIECE = 256 * 1024;
/** Deletes and copies in flight at once (single DeleteObject calls: see deleteKeys). */
const PARALLEL = 8;

export interface S3Options {
  bucket: string;
  endpoint?: string | null;
  region: string;
  accessKeyId?: string | null;
  secretAccessKey?: string | null;
  forcePathStyle: boolean;
  /** '' or e.g. 'lfs/' */
  prefix: string;
  /** Bytes per multipart part and per chunk of a resumable upload; default 16 MiB, at least 5 MiB. */
  partSize?: number;
  /** Offer presigned GET URLs for downloads (S3_SERVE_DIRECT). */
  serveDirect?: boolean;
  /** Told of each request's command (PutObject, UploadPart, …) and how long it took, for the metrics. */
  onRequest?: (command: string, seconds: number) => void;
}

export type S3Backend = BlobBackend & {
  /** Aborts multipart uploads under our prefix older than maxAgeMs (left by a crash); returns how many. */
  sweep(maxAgeMs: number): Promise<number>;
  /**
   * Lists one key under our prefix: throws when the bucket is unreachable, missing or not ours to
   * use. (A listing, not HeadBucket: its error names the cause, where HEAD's has no body, and it
   * needs the permission the backend needs anyway.)
   */
  ping(): Promise<void>;
  destroy(): void;
};

interface Chunk {
  key: string;
  offset: number;
  size: number;
}

export function s3Backend(opts: S3Options): S3Backend {
  const Bucket = opts.bucket;
  const partSize = Math.max(opts.partSize ?? 16 * MiB, MIN_PART);
  const client = new S3Client({
    region: opts.region,
    endpoint: opts.endpoint ?? undefined,
    forcePathStyle: opts.forcePathStyle,
    // Without both keys, the SDK's default chain (environment, profile, instance role).
    credentials: opts.accessKeyId && opts.secretAccessKey ? { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey } : undefined,
    // The SDK's default CRC checksums on every request are not understood by s3rver, older MinIO or Ceph.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // An unreachable endpoint fails in seconds, not after the operating system's TCP timeout.
    requestHandler: { connectionTimeout: 10_000 },
  });

  /**
   * Every request goes through here: a storage service that is away becomes StoreUnavailable,
   * and so does one that let a request that moves no body (BOUNDED) go unanswered.
   */
  const send: S3Client['send'] = ((command: Parameters<S3Client['send']>[0], options?: Parameters<S3Client['send']>[1]) => {
    const started = performance.now();
    const timed = () => opts.onRequest?.(command.constructor.name.replace(/Command$/, ''), (performance.now() - started) / 1000);
    const bounded = !options?.abortSignal && BOUNDED.has(command.constructor) ? answerWithin() : undefined;
    return client.send(command, bounded ? { ...options, ...bounded } : options).then(
      (out) => {
        timed();
        return out;
      },
      (err: unknown) => {
        timed();
        if (bounded?.abortSignal.aborted) throw new StoreUnavailable({ code: `no answer within ${METADATA_ANSWER_MS / 1000} s` });
        throw unavailable(err) && !options?.abortSignal?.aborted ? new StoreUnavailable(err) : err;
      },
    );
  }) as S3Client['send'];

  const objectKey = (oid: string) => `${opts.prefix}objects/${oid.slice(0, 2)}/${oid.slice(2, 4)}/${oid}`;
  const partialDir = (key: string) => `${opts.prefix}partials/${createHash('sha256').update(key).digest('hex')}/`;
  const chunkKey = (key: string, offset: number) => partialDir(key) + String(offset).padStart(16, '0');

  const put = (Key: string, Body: Buffer) => send(new PutObjectCommand({ Bucket, Key, Body, ContentLength: Body.length }));

  async function get(Key: string, range?: ByteRange, abortSignal?: AbortSignal): Promise<Readable> {
    try {
      const res = await send(new GetObjectCommand({ Bucket, Key, Range: range && `bytes=${range.start}-${range.end}` }), { abortSignal });
      const body = res.Body as Readable;
      // The length was promised to the client already: a server that answers another range (s3rver
      // does for bytes=0-0) must not put the wrong bytes on the wire.
      if (range && res.ContentLength !== range.end - range.start + 1) {
        body.destroy();
        throw new Error(`the S3 server answered ${res.ContentLength} bytes for bytes=${range.start}-${range.end} of ${Key}`);
      }
      return body;
    } catch (err) {
      if (isMissing(err)) throw Object.assign(new Error(`ENOENT: no object ${Key} in bucket ${Bucket}`), { code: 'ENOENT' });
      throw err;
    }
  }

  /**
   * One DeleteObject per key: DeleteObjects needs a Content-MD5 or checksum header, and which one
   * is accepted differs between S3 implementations. The first key goes alone, so when keys are
   * chunks in offset order an interrupted delete leaves a shorter run, never a gap that counts.
   */
  async function deleteKeys(keys: string[]) {
    if (keys.length === 0) return;
    await send(new DeleteObjectCommand({ Bucket, Key: keys[0] }));
    await eachLimit(keys.slice(1), PARALLEL, (Key) => send(new DeleteObjectCommand({ Bucket, Key })));
  }

  /** A multipart upload of `Key`, created with its first part. */
  function multipartUpload(Key: string) {
    let id: Promise<string> | null = null;
    let count = 0;
    const parts: CompletedPart[] = [];
    const uploadId = () => (id ??= send(new CreateMultipartUploadCommand({ Bucket, Key })).then((r) => r.UploadId!));
    const next = () => {
      if (count === MAX_PARTS) throw new Error(`${Key} needs more than ${MAX_PARTS} parts of ${partSize} bytes`);
      return ++count; // numbered when called, so parts sent in parallel keep their order
    };
    return {
      get started() {
        return id !== null;
      },
      async upload(Body: Readable, ContentLength: number, abortSignal: AbortSignal) {
        const PartNumber = next();
        const UploadId = await uploadId();
        const { ETag } = await send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body, ContentLength }), { abortSignal });
        parts.push({ PartNumber, ETag });
      },
      async copy(source: string) {
        const PartNumber = next();
        const UploadId = await uploadId();
        const res = await send(new UploadPartCopyCommand({ Bucket, Key, UploadId, PartNumber, CopySource: copySource(Bucket, source) }));
        parts.push({ PartNumber, ETag: res.CopyPartResult?.ETag });
      },
      async complete() {
        const UploadId = await uploadId();
        parts.sort((a, b) => a.PartNumber! - b.PartNumber!);
        await send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts: parts } }));
      },
      /**
       * Best effort: the parts are invisible anyway, and failing here would hide the error that
       * made the caller abort. What is left behind is sweep()'s (or a lifecycle rule's) to remove.
       * s3rver, for one, has no AbortMultipartUpload (405).
       */
      async abort() {
        const UploadId = await id?.catch(() => null);
        if (UploadId) await send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId })).catch(() => {});
      },
    };
  }

  /** Where the object goes once the layer above saw every byte hash to its oid: the small ones in one request. */
  const pendingWrite = (Key: string, size: number) => (size <= BUFFERED_MAX ? bufferedWrite(Key, size) : streamedWrite(Key, size));

  /** A body small enough to hold: kept in memory and sent as one PutObject at commit (one request, not three). */
  function bufferedWrite(Key: string, size: number): PendingWrite {
    let chunks: Buffer[] = [];
    let buffered = 0;
    let state: 'open' | 'committed' | 'aborted' = 'open';
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        if (buffered + chunk.length > size) return cb(new Error(`more than the ${size} bytes announced for ${Key}`));
        chunks.push(chunk);
        buffered += chunk.length;
        cb();
      },
    });
    return {
      stream,
      async commit() {
        if (state !== 'open') throw new Error(`the write of ${Key} was already ${state}`);
        state = 'committed';
        const body = Buffer.concat(chunks, buffered);
        chunks = [];
        await put(Key, body);
      },
      abort() {
        if (state === 'open') {
          state = 'aborted';
          stream.destroy();
          chunks = [];
        }
        return Promise.resolve();
      },
    };
  }

  /**
   * A multipart upload fed straight from the stream: each part is an UploadPart whose body is the
   * next `partLen` bytes as they arrive, so nothing is buffered but the sockets' own windows.
   * When a part's last byte is handed over, the next part starts at once while S3 still stores
   * the previous ones (up to PARTS_IN_FLIGHT await their answers): the stream never waits for a
   * round trip. Completed only at commit, so the object stays invisible until the hash matched.
   */
  function streamedWrite(Key: string, size: number): PendingWrite {
    const upload = multipartUpload(Key);
    const partLen = Math.max(partSize, Math.ceil(size / MAX_PARTS / MiB) * MiB);
    let part: { body: PassThrough; left: number; abort: AbortController } | null = null;
    const answers = new Set<Promise<void>>();
    let received = 0;
    let state: 'open' | 'committed' | 'aborted' = 'open';
    // What the S3 client and the streams fail with (errors, as stream.destroy expects).
    let failed: Error | null = null;
    // Settles only by rejecting, when a part failed or the write was aborted: whatever waits races it.
    let fail!: (err: unknown) => void;
    const failure = new Promise<never>((_, reject) => (fail = reject));
    failure.catch(() => {});
    const failWith = (err: unknown) => {
      if (failed) return;
      failed = err as Error;
      fail(err);
      part?.abort.abort();
      stream.destroy(failed);
    };

    function openPart() {
      const len = Math.min(partLen, size - received);
      const body = new PassThrough({ highWaterMark: PIECE });
      const abort = new AbortController();
      const answer: Promise<void> = upload.upload(body, len, abort.signal).then(
        () => void answers.delete(answer),
        (err: unknown) => {
          answers.delete(answer);
          failWith(err);
        },
      );
      answers.add(answer);
      return { body, left: len, abort };
    }

    async function take(chunk: Buffer) {
      if (received + chunk.length > size) throw new Error(`more than the ${size} bytes announced for ${Key}`);
      for (let at = 0; at < chunk.length; ) {
        if (failed) throw failed;
        if (!part) {
          // The backpressure: a new part waits until S3 answered for one of the older ones.
          while (answers.size >= PARTS_IN_FLIGHT) await Promise.race([...answers, failure]);
          part = openPart();
        }
        const n = Math.min(part.left, chunk.length - at);
        const room = part.body.write(n === chunk.length ? chunk : chunk.subarray(at, at + n));
        part.left -= n;
        received += n;
        at += n;
        if (part.left === 0) {
          part.body.end();
          part = null;
        } else if (!room) await Promise.race([once(part.body, 'drain'), failure]);
      }
    }

    const stream = new Writable({
      highWaterMark: PIECE,
      write: (chunk: Buffer, _enc, cb) => void take(chunk).then(() => cb(), cb),
      // Every part's answer is awaited here, so a failure of S3 fails the stream, not the commit.
      final(cb) {
        if (received < size) {
          // The body ended short: the part that waits for the rest is given up (quietly: this is
          // no failure of S3), and the layer above, seeing the count, aborts the whole write.
          failed = new Error(`the body of ${Key} ended after ${received} of ${size} bytes`);
          part?.abort.abort();
          part?.body.destroy();
          part = null;
          return cb();
        }
        Promise.race([Promise.all(answers), failure]).then(() => cb(), cb);
      },
    });
    stream.on('error', (err) => failWith(err));

    return {
      stream,
      async commit() {
        if (state !== 'open') throw new Error(`the write of ${Key} was already ${state}`);
        state = 'committed';
        try {
          if (received !== size) throw new Error(`the write of ${Key} has ${received} of ${size} bytes`);
          await Promise.race([Promise.all(answers), failure]);
          await upload.complete();
        } catch (err) {
          await upload.abort();
          throw err;
        }
      },
      async abort() {
        if (state !== 'open') return;
        state = 'aborted';
        failWith(new Error(`the write of ${Key} was aborted`));
        part?.body.destroy();
        part = null;
        await Promise.allSettled(answers);
        await upload.abort();
      },
    };
  }

  /** Every chunk object of a resumable upload, in offset order. */
  async function listChunks(key: string): Promise<Chunk[]> {
    const Prefix = partialDir(key);
    const chunks: Chunk[] = [];
    let ContinuationToken: string | undefined;
    do {
      const page = await send(new ListObjectsV2Command({ Bucket, Prefix, ContinuationToken }));
      for (const o of page.Contents ?? []) {
        const name = o.Key!.slice(Prefix.length);
        if (/^\d{16}$/.test(name)) chunks.push({ key: o.Key!, offset: Number(name), size: o.Size ?? 0 });
      }
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
    // S3 lists in key order already; s3rver lists in directory order.
    return chunks.sort((a, b) => a.offset - b.offset);
  }

  /** The chunks continuing each other from offset 0 (the upload), and the others (never acknowledged). */
  async function chunksOf(key: string) {
    const run: Chunk[] = [];
    const stray: Chunk[] = [];
    let size = 0;
    for (const c of await listChunks(key)) {
      if (c.offset === size && c.size > 0) {
        run.push(c);
        size += c.size;
      } else stray.push(c);
    }
    return { run, stray, size };
  }

  /** The bytes of `range` out of the chunks covering it, fetched one chunk at a time. */
  async function* chunkBytes(run: Chunk[], range: ByteRange) {
    for (const c of run) {
      if (c.offset + c.size <= range.start || c.offset > range.end) continue;
      const start = Math.max(range.start, c.offset) - c.offset;
      const end = Math.min(range.end, c.offset + c.size - 1) - c.offset;
      yield* await get(c.key, { start, end });
    }
  }

  /** Writes the chunks as object `Key`, on the server's side when S3 allows it. */
  async function assemble(run: Chunk[], size: number, Key: string) {
    if (run.length === 0) {
      await put(Key, Buffer.alloc(0));
      return;
    }
    if (run.length === 1) {
      // A chunk is about partSize: far below CopyObject's 5 GiB limit.
      await send(new CopyObjectCommand({ Bucket, Key, CopySource: copySource(Bucket, run[0]!.key) }));
      return;
    }
    if (run.slice(0, -1).every((c) => c.size >= MIN_PART)) {
      const upload = multipartUpload(Key);
      try {
        await eachLimit(run, PARALLEL, (c) => upload.copy(c.key));
        return await upload.complete();
      } catch (err) {
        await upload.abort();
        // s3rver has no UploadPartCopy: fall back to copying the bytes through here.
        if ((err as Error).name !== 'NotImplemented') throw err;
      }
    }
    const write = pendingWrite(Key, size);
    try {
      await pipeline(Readable.from(chunkBytes(run, { start: 0, end: size - 1 }), { objectMode: false }), write.stream);
    } catch (err) {
      await write.abort();
      throw err;
    }
    await write.commit();
  }

  return {
    name: 's3',

    // Its callers await it at once, so a throw of pendingWrite reaches them as a rejection would.
    beginWrite: (oid, size) => Promise.resolve(pendingWrite(objectKey(oid), size)),

    read: (oid, range) => get(objectKey(oid), range),

    /**
     * The GetObject is tied to the sink: when the client goes away (even before S3 answered),
     * the request is aborted and its socket released, instead of reading on into nothing.
     */
    async writeTo(oid, range, sink) {
      const abort = new AbortController();
      const stop = () => abort.abort(new SinkGone());
      sink.once('close', stop);
      try {
        if (sink.destroyed) throw new SinkGone();
        const body = await get(objectKey(oid), range, abort.signal).catch((err) => {
          throw abort.signal.aborted ? new SinkGone(err) : err;
        });
        await relay(body, sink).catch((err) => {
          body.destroy();
          throw err instanceof SinkGone || abort.signal.aborted || sink.destroyed ? new SinkGone(err) : err;
        });
      } finally {
        sink.off('close', stop);
      }
    },

    async stat(oid) {
      try {
        return (await send(new HeadObjectCommand({ Bucket, Key: objectKey(oid) }))).ContentLength ?? 0;
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
    },

    async delete(oid) {
      await send(new DeleteObjectCommand({ Bucket, Key: objectKey(oid) })); // S3 succeeds when absent too
    },

    partials: {
      size: async (key) => (await chunksOf(key)).size,

      async append(key, offset, body, limit) {
        const { size, stray } = await chunksOf(key);
        if (offset !== size) throw new OffsetConflict(size);
        // Chunks past the end were never acknowledged (a cleanup that broke off): cut them before appending.
        await deleteKeys(stray.map((c) => c.key));
        const written: string[] = [];
        let reached = offset;
        let pending: Buffer[] = [];
        let buffered = 0;
        let total = 0;
        const store = async () => {
          if (buffered === 0) return;
          const Key = chunkKey(key, reached);
          await put(Key, Buffer.concat(pending, buffered)); // an S3 failure is thrown: ours, not the client's
          written.push(Key);
          reached += buffered;
          pending = [];
          buffered = 0;
        };
        try {
          for await (const chunk of arrivals(body)) {
            total += chunk.length;
            if (total > limit) throw new TooLarge(`more than the ${limit} bytes left of this upload`);
            pending.push(chunk);
            buffered += chunk.length;
            if (buffered >= partSize) await store();
          }
        } catch (err) {
          if (err instanceof TooLarge) await deleteKeys(written);
          throw err;
        }
        await store();
        return reached;
      },

      async read(key, range) {
        const { run } = await chunksOf(key);
        return Readable.from(chunkBytes(run, range), { objectMode: false });
      },

      async promote(key, oid) {
        const { run, stray, size } = await chunksOf(key);
        await assemble(run, size, objectKey(oid));
        await deleteKeys([...run, ...stray].map((c) => c.key));
      },

      async remove(key) {
        await deleteKeys((await listChunks(key)).map((c) => c.key));
      },

      async expire(idleMs, busy = new Set()) {
        const before = Date.now() - idleMs;
        const held = new Set([...busy].map(partialDir));
        // Every chunk under partials/, grouped by upload: its newest chunk is its last append.
        const uploads = new Map<string, { keys: string[]; newest: number }>();
        let ContinuationToken: string | undefined;
        do {
          const page = await send(new ListObjectsV2Command({ Bucket, Prefix: `${opts.prefix}partials/`, ContinuationToken }));
          for (const o of page.Contents ?? []) {
            const upload = o.Key!.slice(0, o.Key!.lastIndexOf('/') + 1);
            const u = uploads.get(upload) ?? { keys: [], newest: 0 };
            u.keys.push(o.Key!);
            u.newest = Math.max(u.newest, o.LastModified?.getTime() ?? 0);
            uploads.set(upload, u);
          }
          ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
        } while (ContinuationToken);
        let removed = 0;
        for (const [upload, u] of uploads) {
          if (u.newest >= before || held.has(upload)) continue;
          await deleteKeys(u.keys.sort()); // offset order: the first chunk goes first
          removed++;
        }
        return removed;
      },
    },

    freeBytes: () => Promise.resolve(null),

    async sweep(maxAgeMs) {
      const before = Date.now() - maxAgeMs;
      let aborted = 0;
      let KeyMarker: string | undefined;
      let UploadIdMarker: string | undefined;
      do {
        // Only objects/ ever has multipart uploads of ours, even when the bucket is shared.
        const page = await send(new ListMultipartUploadsCommand({ Bucket, Prefix: `${opts.prefix}objects/`, KeyMarker, UploadIdMarker }));
        for (const u of page.Uploads ?? []) {
          if (!u.Initiated || u.Initiated.getTime() >= before) continue;
          try {
            await send(new AbortMultipartUploadCommand({ Bucket, Key: u.Key, UploadId: u.UploadId }));
            aborted++;
          } catch (err) {
            if ((err as Error).name !== 'NoSuchUpload') throw err; // completed or aborted meanwhile
          }
        }
        [KeyMarker, UploadIdMarker] = page.IsTruncated ? [page.NextKeyMarker, page.NextUploadIdMarker] : [undefined, undefined];
      } while (KeyMarker);
      return aborted;
    },

    async ping() {
      await send(new ListObjectsV2Command({ Bucket, Prefix: opts.prefix, MaxKeys: 1 }));
    },

    // Signed locally (no request to S3): the URL is its own authorization until it expires.
    ...(opts.serveDirect ? { directReadUrl: (oid: string, ttlSeconds: number) => getSignedUrl(client, new GetObjectCommand({ Bucket, Key: objectKey(oid) }), { expiresIn: ttlSeconds }) } : {}),

    destroy: () => client.destroy(),
  };
}

/** The body's chunks; a body that breaks off (the client went away) just ends, so what arrived is kept. */
async function* arrivals(body: Readable): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of body) yield chunk as Buffer;
  } catch {
    // not an error of ours: the client resumes from the offset we return
  }
}

/**
 * How long a request that streams no body (listing, aborting, the readiness ping) may go
 * unanswered. The SDK bounds connecting, not answering: an endpoint that accepts connections and
 * never answers (a mistyped S3_ENDPOINT naming some other service) held the start forever, and
 * left a socket behind every readiness probe. Transfers and server-side copies stay unbounded: a
 * download paused by a slow client must not be cut, and completing or copying a large object can
 * take S3 minutes.
 */
export const METADATA_ANSWER_MS = 10_000;
const answerWithin = () => ({ abortSignal: AbortSignal.timeout(METADATA_ANSWER_MS) });
/** The requests bounded by it: none moves an object's bytes or copies them inside S3. */
const BOUNDED = new Set<unknown>([ListObjectsV2Command, ListMultipartUploadsCommand, HeadObjectCommand, DeleteObjectCommand, CreateMultipartUploadCommand, AbortMultipartUploadCommand]);

/** A failure of the storage service itself (unreachable, cut off, 5xx), as opposed to an answer about our request. */
function unavailable(err: unknown): boolean {
  const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  // 501 is an answer (an operation this server lacks: assemble() falls back), not an outage.
  if (status !== undefined && status >= 500 && status !== 501) return true;
  const code = e.code ?? e.name ?? '';
  return ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'TimeoutError', 'NetworkingError'].includes(code) || /socket hang up/i.test(String((err as Error)?.message));
}

/** HeadObject's 404 has no body to name it: the SDK calls it NotFound. */
const isMissing = (err: unknown) => {
  const e = err as { name?: string };
  return e.name === 'NoSuchKey' || e.name === 'NotFound';
};

/** x-amz-copy-source, encoded per segment: s3rver decodes it with decodeURI, which keeps %2F. */
const copySource = (bucket: string, key: string) => `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;

async function eachLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
