/**
 * POST /objects/batch (operation batch.batch): per object, the actions to take or why not.
 * v1.3 transfer negotiation: the server prefers tus for uploads when the client lists it, and
 * basic otherwise (always supported, even when not listed); the order of `transfers` is the
 * client's whim (git-lfs shuffles it), so only membership counts.
 */
import { JsonText, type Handler } from '../http/router.js';
import { HttpError } from '../http/errors.js';
import type { ObjectDeps } from './services.js';
import { authorize } from './access.js';
import { actionFactory } from './links.js';
import { findObjects, gone, goneForUpload, isLive, isTakenDown, type FoundObject } from './objects-table.js';

const OID = /^[0-9a-f]{64}$/;
const PREFERENCE = { upload: ['tus', 'basic'], download: ['basic'] } as const;

export function chooseTransfer(operation: 'upload' | 'download', offered: string[] | null | undefined): 'basic' | 'tus' {
  const listed = new Set(offered ?? []);
  return PREFERENCE[operation].find((t) => t === 'basic' || listed.has(t)) ?? 'basic';
}

/** Whether an upload batch gives this object an upload action: it is neither here already nor taken down. */
const needsUpload = (row: FoundObject | undefined, size: number) => !(isLive(row) && Number(row.size) === size) && !isTakenDown(row);

export function batch(s: Pick<ObjectDeps, 'config' | 'db' | 'metrics' | 'objects'>): Handler<'batch.batch'> {
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
    const wellFormed = req.objects.map((o) => OID.test(o.oid) && Number.isSafeInteger(o.size) && o.size >= 0);
    const valid = req.objects.filter((_, i) => wellFormed[i]);
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

    // The answer is written as JSON text from fixed templates, one per shape of batch-object
    // (schemas/objects/batch-object.json): for a thousand objects JSON.stringify of the object tree
    // cost more than the rest of the answer. Only values checked here (hex oids, safe integers,
    // tokens, the ISO expiry) are written unescaped; what the client sent otherwise goes through
    // JSON.stringify. test/unit/objects/batch-json.test.ts holds the templates to JSON.stringify.
    const J = JSON.stringify;
    const failed = (oid: unknown, size: unknown, code: number, message: string) => `{"oid":${J(oid)},"size":${J(size)},"error":{"code":${code},"message":${J(message)}}}`;
    let text = `{"transfer":"${transfer}","hash_algo":"sha256","objects":[`;
    for (let i = 0; i < req.objects.length; i++) {
      const { oid, size } = req.objects[i]!;
      if (i) text += ',';
      if (!hashOk) text += failed(oid, size, 409, `Unsupported hash algorithm ${req.hash_algo}; this server speaks sha256`);
      else if (wellFormed[i]) text += answer(oid, size, rows.get(oid));
      else if (!OID.test(oid)) text += failed(oid, size, 422, 'Invalid oid: expected 64 lower-case hex digits (SHA-256)');
      else text += failed(oid, size, 422, 'Invalid size: expected a non-negative integer');
    }
    return { status: 200, body: new JsonText(`${text}]}`) };

    /** A well-formed object's entry. */
    function answer(oid: string, size: number, row: FoundObject | undefined): string {
      if (req.operation === 'download') {
        if (!row) return failed(oid, size, 404, 'Object does not exist');
        if (!isLive(row)) return failed(oid, size, 410, gone(row));
        const stored = Number(row.size);
        const href = direct.get(oid);
        const download = href ? actions.directJson(href) : actions.actionJson(`/content/${oid}`, actions.authorization(oid, stored, 'download'));
        return `{"oid":"${oid}","size":${stored},"authenticated":true,"actions":{"download":${download}}}`;
      }
      if (isLive(row) && Number(row.size) === size) return `{"oid":"${oid}","size":${size}}`; // already here: nothing to do
      if (isTakenDown(row)) return failed(oid, size, 410, goneForUpload(row));
      // Upload and verify carry the same grant (this object, this size, upload): one token.
      const authorization = actions.authorization(oid, size, 'upload');
      const upload = actions.actionJson(transfer === 'tus' ? `/tus/${oid}` : `/content/${oid}`, authorization);
      return `{"oid":"${oid}","size":${size},"authenticated":true,"actions":{"upload":${upload},"verify":${actions.actionJson('/verify', authorization)}}}`;
    }
  };
}
