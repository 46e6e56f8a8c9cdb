/**
 * The legacy API v0.5: GET /objects/{oid} (legacy.getObject) and POST /objects
 * (legacy.createObject). Content moves through the links, to the same transfer endpoints the
 * batch API's basic actions use.
 */
import type { components as L } from '../../generated/types/legacy.js';
import { HttpError } from '../http/errors.js';
import type { Handler } from '../http/router.js';
import type { ObjectDeps } from './services.js';
import { authorize } from './access.js';
import { actionFactory } from './links.js';
import { findObject, gone, goneForUpload, isLive, isTakenDown } from './objects-table.js';

type LegacyObject = L['schemas']['legacy-object'];

export function getObject(s: Pick<ObjectDeps, 'config' | 'db' | 'objects'>): Handler<'legacy.getObject'> {
  return async ({ params, identity }) => {
    const { repo } = await authorize(s.db, params, identity, 'read');
    const row = await findObject(s.db, repo.id, params.oid);
    if (!row) throw new HttpError(404, `Object ${params.oid} does not exist`);
    if (!isLive(row)) throw new HttpError(410, gone(row));
    const size = Number(row.size);
    const links = actionFactory({ publicUrl: s.config.publicUrl, ttlSeconds: s.config.lfs.actionTtlSeconds, tokens: s.objects.tokens, repo, identity });
    // Served by the storage itself (S3_SERVE_DIRECT): counted now, as the bytes bypass this server.
    const presign = s.objects.store.backend.directReadUrl;
    let download = links.action(`/content/${row.oid}`, links.header(row.oid, size, 'download'));
    if (presign) {
      await s.objects.limits.checkBandwidth(repo.id, `${repo.org_slug}/${repo.name}`, size);
      download = links.direct(await presign(row.oid, s.config.lfs.actionTtlSeconds));
      await s.objects.limits.chargeBandwidth(repo.id, size);
    }
    const body: LegacyObject = { oid: row.oid, size, _links: { self: { href: links.href(`/objects/${row.oid}`) }, download } };
    return { status: 200, body };
  };
}

export function createObject(s: Pick<ObjectDeps, 'config' | 'db' | 'objects'>): Handler<'legacy.createObject'> {
  return async ({ params, body, identity }) => {
    const { oid, size } = body;
    const { repo } = await authorize(s.db, params, identity, 'write');
    const links = actionFactory({ publicUrl: s.config.publicUrl, ttlSeconds: s.config.lfs.actionTtlSeconds, tokens: s.objects.tokens, repo, identity });
    const row = await findObject(s.db, repo.id, oid);
    if (isTakenDown(row)) throw new HttpError(410, goneForUpload(row));
    if (isLive(row) && Number(row.size) === size) {
      return {
        status: 200,
        body: { oid, size, _links: { self: { href: links.href(`/objects/${oid}`) }, download: links.action(`/content/${oid}`, links.header(oid, size, 'download')) } } satisfies LegacyObject,
      };
    }
    await s.objects.limits.checkSpace(size);
    const header = links.header(oid, size, 'upload');
    return {
      status: 202,
      body: { oid, size, _links: { upload: links.action(`/content/${oid}`, header), verify: links.action('/verify', header) } } satisfies LegacyObject,
    };
  };
}
