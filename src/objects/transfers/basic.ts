/**
 * The basic transfer: GET and PUT of the raw bytes at /content/{oid} (objects.download,
 * objects.upload) and POST /verify (objects.verify). Shared by both object APIs.
 */
import type { Context } from 'koa';
import { HttpError } from '../../http/errors.js';
import { writeStatus, type Handler } from '../../http/router.js';
import { apiLabel, stateOf } from '../../http/state.js';
import type { ObjectDeps } from '../services.js';
import { authorize } from '../access.js';
import { dropUnusedBytes, findObject, gone, goneForUpload, isLive, isTakenDown, recordObject } from '../objects-table.js';
import { ContentMismatch } from '../store/content-store.js';
import { StoreUnavailable } from '../store/backend.js';
import { SinkGone } from '../store/pump.js';
import type { Logger } from '../../telemetry/log.js';

/** A single `bytes=` range against an object of `size` bytes: null for none, 'unsatisfiable', or the range. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null; // not one we understand: send the whole object (RFC 9110)
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

export function download(s: Pick<ObjectDeps, 'db' | 'metrics' | 'objects'>): Handler<'objects.download'> {
  return async ({ ctx, params, identity }) => {
    const { repo } = await authorize(s.db, params, identity, 'read', 'download');
    const row = await findObject(s.db, repo.id, params.oid);
    if (!row) throw new HttpError(404, `Object ${params.oid} does not exist`);
    if (!isLive(row)) throw new HttpError(410, gone(row));
    const size = Number(row.size);
    const range = parseRange(params.range, size);
    if (range === 'unsatisfiable') throw new HttpError(416, `The range lies outside the object's ${size} bytes`, { 'Content-Range': `bytes */${size}` });
    const length = range ? range.end - range.start + 1 : size;
    await s.objects.limits.checkBandwidth(repo.id, `${repo.org_slug}/${repo.name}`, length);
    if ((await s.objects.store.stat(row.oid)) === null) throw new Error(`object ${row.oid} of ${repo.org_slug}/${repo.name} is missing from the store`);
    await s.objects.limits.chargeBandwidth(repo.id, length);
    // The bytes go straight to the socket (the store reuses its buffers), so Koa steps aside.
    ctx.respond = false;
    ctx.res.writeHead(range ? 206 : 200, {
      'Content-Type': 'application/octet-stream',
      'Content-Length': String(length),
      'Accept-Ranges': 'bytes',
      'X-Request-Id': stateOf(ctx).requestId,
      ...(range ? { 'Content-Range': `bytes ${range.start}-${range.end}/${size}` } : {}),
    });
    if (length === 0) return void ctx.res.end();
    const { objects } = s.metrics;
    const api = apiLabel(ctx);
    objects.transfersInFlight.inc({ direction: 'download' });
    try {
      await s.objects.store.writeTo(row.oid, range ?? { start: 0, end: size - 1 }, ctx.res);
      objects.downloadedBytes.inc({ api, transfer: 'basic' }, length);
      stateOf(ctx).bytesOut = length;
    } catch (err) {
      // The store has closed its file or aborted its S3 request; the client, if still there, sees
      // a cut-off transfer and resumes with Range. A client that left is routine, not an error.
      const log = ctx.state.log as Logger;
      if (err instanceof SinkGone) log.info({ oid: row.oid, length }, 'the client went away mid-download');
      else log.error({ err, oid: row.oid }, 'the store failed mid-download');
      ctx.res.destroy();
    } finally {
      objects.transfersInFlight.dec({ direction: 'download' });
    }
  };
}

function expectedSize(ctx: Context, tokenSize: number | undefined): number {
  const declared = ctx.get('content-length');
  const length = declared === '' ? undefined : Number(declared);
  if (tokenSize !== undefined && length !== undefined && length !== tokenSize) {
    throw new HttpError(422, `Content-Length ${length} does not match the announced size ${tokenSize}; nothing was stored`);
  }
  const size = tokenSize ?? length;
  if (size === undefined) throw new HttpError(411, 'An upload needs Content-Length');
  return size;
}

/**
 * Refuses, before a byte of the body is read, an upload that must not store anything: the object
 * is committed already (409: an upload href is spent once its object is stored, so replaying it
 * does nothing; a client whose answer was lost re-runs the batch, which then asks for nothing),
 * or it was taken down (410, until an administrator lifts it).
 */
export async function refuseSpentUpload(s: Pick<ObjectDeps, 'db'>, repoId: string, oid: string): Promise<void> {
  const row = await findObject(s.db, repoId, oid);
  if (isLive(row)) throw new HttpError(409, `Object ${oid} is stored already; this upload is complete and nothing was read. Request new actions to see what is needed`);
  if (isTakenDown(row)) throw new HttpError(410, goneForUpload(row));
}

/** Records an upload that arrived in full; refuses (410) and drops the bytes when a takedown came first. */
export async function commitUpload(s: Pick<ObjectDeps, 'db' | 'objects'>, repoId: string, oid: string, size: number): Promise<void> {
  if ((await recordObject(s.db, repoId, oid, size)) === 'recorded') return;
  await dropUnusedBytes(s.db, s.objects.store, oid);
  throw new HttpError(410, goneForUpload((await findObject(s.db, repoId, oid))!));
}

export function upload(s: Pick<ObjectDeps, 'db' | 'metrics' | 'objects'>): Handler<'objects.upload'> {
  return async ({ ctx, params, identity }) => {
    const { repo } = await authorize(s.db, params, identity, 'write', 'upload');
    await refuseSpentUpload(s, repo.id, params.oid);
    const size = expectedSize(ctx, identity?.transfer?.size);
    await s.objects.limits.checkSpace(size);
    const { objects } = s.metrics;
    const labels = { api: apiLabel(ctx), transfer: 'basic' };
    objects.transfersInFlight.inc({ direction: 'upload' });
    try {
      // The request's body: its chunks are the store's alone, freed as soon as they are stored.
      await s.objects.store.put(params.oid, size, ctx.req, { ownsChunks: true });
    } catch (err) {
      if (err instanceof ContentMismatch) {
        objects.uploads.inc({ ...labels, outcome: `refused_${err.kind}` });
        throw new HttpError(422, `${err.message}; nothing was stored`);
      }
      // The store failing also ends the request's body early: that is ours (503), not the client's.
      if (err instanceof StoreUnavailable) throw err;
      if (ctx.req.readableAborted || ctx.req.destroyed) {
        objects.uploads.inc({ ...labels, outcome: 'aborted' });
        throw new HttpError(400, 'The upload was cut off; nothing was stored');
      }
      throw err;
    } finally {
      objects.transfersInFlight.dec({ direction: 'upload' });
    }
    objects.uploads.inc({ ...labels, outcome: 'verified' });
    objects.uploadedBytes.inc(labels, size);
    stateOf(ctx).bytesIn = size;
    await commitUpload(s, repo.id, params.oid, size);
    writeStatus(ctx, 200, true);
  };
}

export function verify(s: Pick<ObjectDeps, 'db'>): Handler<'objects.verify'> {
  return async ({ params, body, identity }) => {
    const { oid, size } = body;
    const { repo } = await authorize(s.db, { org: params.org, repo: params.repo, oid }, identity, 'write', 'upload');
    const row = await findObject(s.db, repo.id, oid);
    if (isTakenDown(row)) throw new HttpError(410, goneForUpload(row));
    if (!isLive(row)) throw new HttpError(404, `Object ${oid} is not stored; upload it first`);
    if (Number(row.size) !== size) throw new HttpError(422, `Object ${oid} is stored with ${row.size} bytes, not ${size}`);
    return { status: 200 };
  };
}
