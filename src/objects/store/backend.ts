/**
 * Where object bytes live. A backend only moves bytes: it knows nothing of hashes, sizes the
 * client announced, or repositories. Verification, limits and accounting are layers above it
 * (content-store.ts), so every backend gets them and none re-implements them.
 */
import type { Readable, Writable } from 'node:stream';

export interface ByteRange {
  start: number;
  /** Inclusive. */
  end: number;
}

/**
 * How a backend may treat the chunks of a body it is given. `ownsChunks`: nobody else holds
 * them (a request's body), so a backend that copies them may free each one once copied
 * (transient-buffers.ts, freeNow); one that hands them on (to an S3 client) leaves them be.
 */
export interface BodyOptions {
  ownsChunks?: boolean;
}

/** Bytes being written where no reader can see them until commit. */
export interface PendingWrite {
  stream: Writable;
  /** Makes the bytes durable and visible as the object named at beginWrite (replacing identical content if present). */
  commit(): Promise<void>;
  /** Discards the bytes. */
  abort(): Promise<void>;
}

/** The state of resumable (tus) uploads, which must survive restarts and be visible to every instance. */
export interface PartialUploads {
  /** Bytes durably stored for `key`; 0 when there is no such upload. */
  size(key: string): Promise<number>;
  /**
   * Appends `body` at `offset`, which must equal size(key) (else OffsetConflict). Writes at most
   * `limit` bytes (more is TooLarge, and the upload is left as it was). When the body breaks off,
   * what arrived is kept: the returned offset is where the client resumes.
   */
  append(key: string, offset: number, body: Readable, limit: number, opts?: BodyOptions): Promise<number>;
  read(key: string, range: ByteRange): Promise<Readable>;
  /** Makes the complete upload object `oid`. */
  promote(key: string, oid: string): Promise<void>;
  remove(key: string): Promise<void>;
  /** Removes uploads nothing was appended to for `idleMs` (abandoned), except the keys in `busy`; returns how many went. */
  expire(idleMs: number, busy?: ReadonlySet<string>): Promise<number>;
}

export interface BlobBackend {
  readonly name: string;
  /**
   * Starts writing object `oid`; nothing is visible under that name until commit (the caller
   * commits only after the bytes hash to `oid`). Knowing the name up front lets a backend stream
   * straight to the final place (an S3 multipart upload) instead of copying afterwards; knowing
   * the `size` the client announced lets it stream parts of known length without holding them.
   * The layer above never writes more than `size` bytes.
   */
  beginWrite(oid: string, size: number, opts?: BodyOptions): Promise<PendingWrite>;
  read(oid: string, range?: ByteRange): Promise<Readable>;
  /** Writes the object (or a range) into `sink` and ends it; a backend may do so without allocating per chunk. */
  writeTo?(oid: string, range: ByteRange, sink: Writable): Promise<void>;
  /** The stored size, or null when absent. */
  stat(oid: string): Promise<number | null>;
  delete(oid: string): Promise<void>;
  partials: PartialUploads;
  /** Free space for new objects, or null when unknown or unlimited. */
  freeBytes(): Promise<number | null>;
  /** Throws when the store cannot be reached (readiness). */
  ping(): Promise<void>;
  /**
   * Where a client can download the object itself for `ttlSeconds` (a presigned URL), when the
   * backend serves downloads directly; absent otherwise.
   */
  directReadUrl?: (oid: string, ttlSeconds: number) => Promise<string>;
}

export class OffsetConflict extends Error {
  constructor(readonly expected: number) {
    super(`the upload is at offset ${expected}`);
  }
}

export class TooLarge extends Error {}

export class UploadBusy extends Error {
  constructor() {
    super('another request is appending to this upload');
  }
}

/**
 * The storage service did not answer or failed on its side (a network error, a 5xx): nothing of
 * this request was kept, and a retry may succeed. The object APIs answer 503 with Retry-After.
 */
export class StoreUnavailable extends Error {
  constructor(override readonly cause: unknown) {
    const e = cause as { code?: string; name?: string; $metadata?: { httpStatusCode?: number } };
    const why = e.$metadata?.httpStatusCode ? `HTTP ${e.$metadata.httpStatusCode}` : (e.code ?? e.name ?? 'no answer');
    super(`the object storage is unavailable (${why})`);
  }
}
