/**
 * POST /objects/batch (operation batch.batch): per object, the actions to take or why not.
 * v1.3 transfer negotiation: the server prefers tus for uploads when the client lists it, and
 * basic otherwise (always supported, even when not listed); the order of `transfers` is the
 * client's whim (git-lfs shuffles it), so only membership counts.
 */
import type { components as B } from '../../generated/types/batch.js';
import type { Handler } from '../http/router.js';
import { HttpError } from '../http/errors.js';
import type { Services } from '../services.js';
import { authorize } from './access.js';
import { actionFactory } from './links.js';
import { findObjects, gone, goneForUpload, isLive, isTakenDown, type ObjectRow } from './objects-table.js';

type BatchObject = B['schemas']['batch-object'];

const OID = /^[0-9a-f]{64}$/;
const PREFERENCE = { upload: ['tus', 'basic'], download: ['basic'] } as const;

export function chooseTransfer(operation: 'upload' | 'download', offered: string[] | null | undefined): 'basic' | 'tus' {
  const listed = new Set(offered ?? []);
  return PREFERENCE[operation].find((t) => t === 'basic' || listed.has(t)) ?? 'basic';
}

/** Whether an upload batch gives this object an upload action: it is neither here already nor taken down. */
const needsUpload = (row: ObjectRow | undefined, size: number) => !(isLive(row) && Number(row.size) === size) && !isTakenDown(row);

export function batch(s: Services): Handler<'batch.batch'> {
  return async ({ params, body, identity }) => {
    const req = body;
    const { repo } = await authorize(s.db, params, identity, req.operation === 'upload' ? 'write' : 'read');
    if (req.objects.length > s.config.lfs.maxBatchObjects) {
      throw new HttpError(413, `A batch may name at most ${s.config.lfs.maxBatchObjects} objects (the server's LFS_MAX_BATCH_OBJECTS setting); this one names ${req.objects.length}`);
    }
    s.metrics.objects.batchObjects.observe({ operation: req.operation }, req.objects.length);
    let transfer = chooseTransfer(req.operation, req.transfers);
    // Left out or null is the documented default, sha256. `ref` plays no part: access is per repository.
    const hashOk = req.hash_algo == null || req.hash_algo === 'sha256';
    const valid = req.objects.filter((o) => OID.test(o.oid) && Number.isSafeInteger(o.size) && o.size >= 0);
    const rows = await findObjects(s.db, repo.id, valid.map((o) => o.oid));
    const actions = actionFactory({ publicUrl: s.config.publicUrl, ttlSeconds: s.config.lfs.actionTtlSeconds, tokens: s.objects.tokens, repo, identity });
    const name = `${repo.org_slug}/${repo.name}`;

    if (req.operation === 'upload') {
      const uploads = valid.filter((o) => needsUpload(rows.get(o.oid), o.size));
      const incoming = uploads.reduce((n, o) => n + o.size, 0);
      if (incoming) await s.objects.limits.checkSpace(incoming);
      // Resumable uploads only while the partial-upload caps can hold these; basic leaves nothing unfinished.
      if (transfer === 'tus' && !(await s.objects.partialQuota.fits(repo, uploads))) transfer = 'basic';
    }
    // Downloads the storage serves itself (S3_SERVE_DIRECT): a presigned URL per object, and the
    // bandwidth counted now, since the bytes will not pass through here.
    const direct = new Map<string, string>();
    if (req.operation === 'download') {
      const live = valid.filter((o) => isLive(rows.get(o.oid)));
      const outgoing = live.reduce((n, o) => n + Number(rows.get(o.oid)!.size), 0);
      await s.objects.limits.checkBandwidth(repo.id, name, outgoing);
      const presign = s.objects.store.backend.directReadUrl;
      if (presign) {
        for (const o of live) direct.set(o.oid, await presign(o.oid, s.config.lfs.actionTtlSeconds));
        await s.objects.limits.chargeBandwidth(repo.id, outgoing);
      }
    }

    const objects = req.objects.map((o): BatchObject => {
      const { oid, size } = o;
      if (!hashOk) return { oid, size, error: { code: 409, message: `Unsupported hash algorithm ${req.hash_algo}; this server speaks sha256` } };
      if (!OID.test(oid)) return { oid, size, error: { code: 422, message: 'Invalid oid: expected 64 lower-case hex digits (SHA-256)' } };
      if (!Number.isSafeInteger(size) || size < 0) return { oid, size, error: { code: 422, message: 'Invalid size: expected a non-negative integer' } };
      const row = rows.get(oid);
      if (req.operation === 'download') {
        if (!row) return { oid, size, error: { code: 404, message: 'Object does not exist' } };
        if (!isLive(row)) return { oid, size, error: { code: 410, message: gone(row) } };
        const stored = Number(row.size);
        const href = direct.get(oid);
        const download = href ? actions.direct(href) : actions.action(`/content/${oid}`, actions.header(oid, stored, 'download'));
        return { oid, size: stored, authenticated: true, actions: { download } };
      }
      if (isLive(row) && Number(row.size) === size) return { oid, size }; // already here: nothing to do
      if (isTakenDown(row)) return { oid, size, error: { code: 410, message: goneForUpload(row) } };
      // Upload and verify carry the same grant (this object, this size, upload): one signature.
      const header = actions.header(oid, size, 'upload');
      const upload = actions.action(transfer === 'tus' ? `/tus/${oid}` : `/content/${oid}`, header);
      return { oid, size, authenticated: true, actions: { upload, verify: actions.action('/verify', header) } };
    });
    return { status: 200, body: { transfer, hash_algo: 'sha256', objects } };
  };
}
