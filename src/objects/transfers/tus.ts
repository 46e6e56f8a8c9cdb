/**
 * The resumable upload, as git-lfs speaks tus (tus.head, tus.patch, tus.options): no creation
 * step, so HEAD of an upload not yet started answers offset 0; PATCH appends at Upload-Offset.
 * The full size is reported only once the object is committed with its hash checked: git-lfs then
 * skips both PATCH and verify. Only a transfer token from a batch action can start one, because
 * the token carries the size the upload must reach.
 */
import { HttpError } from '../../http/errors.js';
import { writeStatus, type Handler } from '../../http/router.js';
import type { ObjectDeps } from '../services.js';
import { authorize } from '../access.js';
import { findObject, goneForUpload, isLive, isTakenDown } from '../objects-table.js';
import { commitUpload } from './basic.js';
import { OffsetConflict, TooLarge, UploadBusy } from '../store/backend.js';
import { ContentMismatch } from '../store/content-store.js';
import { apiLabel, stateOf } from '../../http/state.js';

const TUS = { 'Tus-Resumable': '1.0.0' };
const uploadKey = (repoId: string, oid: string) => `${repoId}/${oid}`;

export const tusOptions: Handler<'tus.options'> = ({ ctx }) => {
  ctx.set({ ...TUS, 'Tus-Version': '1.0.0', 'Tus-Extension': 'expiration' });
  writeStatus(ctx, 204, true);
};

/**
 * The size of the committed object (tus reports it as the offset, and stores nothing more), or
 * null while it is not committed; 410 for an object taken down, whose upload is refused until an
 * administrator lifts the takedown.
 */
async function committedSize(s: Pick<ObjectDeps, 'db'>, repoId: string, oid: string) {
  const row = await findObject(s.db, repoId, oid);
  if (isTakenDown(row)) throw new HttpError(410, goneForUpload(row));
  return isLive(row) ? Number(row.size) : null;
}

export function tusHead(s: Pick<ObjectDeps, 'db' | 'objects'>): Handler<'tus.head'> {
  return async ({ ctx, params, identity }) => {
    const { repo } = await authorize(s.db, params, identity, 'write', 'upload');
    const size = identity!.transfer!.size;
    const committed = await committedSize(s, repo.id, params.oid);
    const offset = committed ?? (await s.objects.store.uploadOffset(uploadKey(repo.id, params.oid)));
    ctx.set({ ...TUS, 'Upload-Offset': String(offset), 'Upload-Length': String(size), 'Cache-Control': 'no-store' });
    writeStatus(ctx, 200, true);
  };
}

export function tusPatch(s: Pick<ObjectDeps, 'config' | 'db' | 'metrics' | 'objects'>): Handler<'tus.patch'> {
  return async ({ ctx, params, identity }) => {
    const { repo } = await authorize(s.db, params, identity, 'write', 'upload');
    const size = identity!.transfer!.size;
    const offset = params['upload-offset'];
    const key = uploadKey(repo.id, params.oid);
    const reply = (reached: number) => {
      ctx.set({ ...TUS, 'Upload-Offset': String(reached) });
      // An incomplete upload is swept once nothing is appended for the TTL (objects/store/open.ts).
      if (reached < size) ctx.set('Upload-Expires', new Date(Date.now() + s.config.lfs.partialTtlSeconds * 1000).toUTCString());
      writeStatus(ctx, 204, true);
    };
    const committed = await committedSize(s, repo.id, params.oid);
    if (committed !== null) {
      if (offset !== committed) throw new HttpError(409, `The upload is complete at offset ${committed}`);
      return reply(committed);
    }
    if (offset > size) throw new HttpError(409, `Upload-Offset ${offset} is past the object's ${size} bytes`);
    await s.objects.limits.checkSpace(size - offset);
    // Counted (or its count renewed) before a byte is stored: 507 past the partial-upload caps.
    await s.objects.partialQuota.reserve(repo, `${repo.org_slug}/${repo.name}`, params.oid, size);
    const done = () => s.objects.partialQuota.release(repo.id, params.oid);
    const { objects } = s.metrics;
    const labels = { api: apiLabel(ctx), transfer: 'tus' };
    objects.transfersInFlight.inc({ direction: 'upload' });
    try {
      const result = await s.objects.store.appendUpload(key, params.oid, size, offset, ctx.req, { ownsChunks: true });
      objects.uploadedBytes.inc(labels, result.offset - offset);
      stateOf(ctx).bytesIn = result.offset - offset;
      if (result.committed) {
        objects.uploads.inc({ ...labels, outcome: 'verified' });
        await done();
        await commitUpload(s, repo.id, params.oid, size);
      }
      reply(result.offset);
    } catch (err) {
      if (err instanceof OffsetConflict) throw new HttpError(409, `Upload-Offset ${offset} does not match the ${err.expected} bytes stored; HEAD the upload and resume from there`);
      if (err instanceof UploadBusy) throw new HttpError(409, 'Another request is appending to this upload');
      if (err instanceof TooLarge) {
        await s.objects.store.discardUpload(key);
        await done();
        throw new HttpError(413, `The body goes past the object's ${size} bytes; the upload was discarded`);
      }
      if (err instanceof ContentMismatch) {
        objects.uploads.inc({ ...labels, outcome: `refused_${err.kind}` });
        await done();
        throw new HttpError(422, err.message);
      }
      throw err;
    } finally {
      objects.transfersInFlight.dec({ direction: 'upload' });
    }
  };
}
