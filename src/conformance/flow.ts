/**
 * The object APIs as a client uses them, one step feeding the next: announce an upload in a
 * batch, follow its actions (basic PUT, or tus HEAD and PATCH, then verify), download it back
 * (whole, and a range), read it through the legacy API, and lock, list, verify and unlock a path.
 * Each answer gets the ordinary checks; the flow adds what a client relies on.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ApiName } from '../../generated/operations.js';
import type { Target } from './cases.js';
import type { ConformanceRequest, ConformanceResponse } from './http.js';

const LFS = 'application/vnd.git-lfs+json';

/**
 * The steps whose checks need a server that keeps what it was sent. Against a stateless mock
 * (one that says so in X-Pactum-Mock) their flow checks are reported as expected limitations.
 */
export const STATEFUL_STEPS: ReadonlySet<string> = new Set(['download', 'download a range', 'tus HEAD', 'lock it again']);

export type Step = (name: string, api: ApiName, request: ConformanceRequest, expect: (res: ConformanceResponse) => string[]) => Promise<ConformanceResponse | null>;

interface Action { href: string; header?: Record<string, string> }
interface Links { upload?: Action; verify?: Action; download?: Action }

/**
 * What the flow reads of the answers it gets. The server under test may answer anything: the
 * ordinary checks judge the shapes, the flow only follows what it finds.
 */
interface Answer {
  transfer?: string;
  objects?: { actions?: Links }[];
  _links?: Links;
  lock?: { id?: string };
  locks?: { id: string }[];
  ours?: { id: string }[];
}

const json = (res: ConformanceResponse): Answer | null => {
  try {
    return JSON.parse(res.body.toString('utf8')) as Answer | null;
  } catch {
    return null;
  }
};

const status = (want: number) => (res: ConformanceResponse) => (res.status === want ? [] : [`flow: expected ${want}, got ${res.status}: ${res.body.toString('utf8').slice(0, 200)}`]);

export async function objectFlow(target: Target, apis: ApiName[], step: Step): Promise<void> {
  if (!target.credentials.basic) return;
  const base = `${target.base}/${target.repo.split('/').map(encodeURIComponent).join('/')}.git/info/lfs`;
  const auth = { authorization: `Basic ${Buffer.from(target.credentials.basic).toString('base64')}` };
  const api: ApiName = apis.includes('batch') ? 'batch' : 'legacy';

  for (const transfer of apis.includes('batch') ? ['basic', 'tus'] : ['basic']) {
    const bytes = randomBytes(4096 + (transfer === 'tus' ? 1 : 0));
    const oid = createHash('sha256').update(bytes).digest('hex');
    let uploadAction: Action | undefined;
    let verifyAction: Action | undefined;
    if (api === 'batch') {
      const res = await step(`batch upload (${transfer})`, 'batch', {
        method: 'POST', url: `${base}/objects/batch`, headers: { ...auth, accept: LFS, 'content-type': LFS },
        body: JSON.stringify({ operation: 'upload', transfers: [transfer], objects: [{ oid, size: bytes.length }], hash_algo: 'sha256' }),
      }, (r) => {
        const b = json(r);
        if (r.status !== 200) return status(200)(r);
        if (b?.transfer !== transfer) return [`flow: asked for ${transfer}, the server chose ${b?.transfer}`];
        return b?.objects?.[0]?.actions?.upload ? [] : ['flow: a new object got no upload action'];
      });
      const actions = res && json(res)?.objects?.[0]?.actions;
      uploadAction = actions?.upload;
      verifyAction = actions?.verify;
    } else {
      const res = await step('legacy announce upload', 'legacy', {
        method: 'POST', url: `${base}/objects`, headers: { ...auth, accept: LFS, 'content-type': LFS }, body: JSON.stringify({ oid, size: bytes.length }),
      }, status(202));
      const links = res && json(res)?._links;
      uploadAction = links?.upload;
      verifyAction = links?.verify;
    }
    if (!uploadAction) continue;
    if (transfer === 'tus') {
      const head = await step('tus HEAD', 'batch', { method: 'HEAD', url: uploadAction.href, headers: { ...uploadAction.header, 'tus-resumable': '1.0.0' } }, (r) =>
        r.status === 200 && r.headers['upload-offset'] === '0' ? [] : [`flow: a new upload must be at offset 0 (got ${r.status}, Upload-Offset ${r.headers['upload-offset']})`],
      );
      if (!head) continue;
      await step('tus PATCH', 'batch', {
        method: 'PATCH', url: uploadAction.href, headers: { ...uploadAction.header, 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: bytes,
      }, (r) => (r.status === 204 && r.headers['upload-offset'] === String(bytes.length) ? [] : [`flow: PATCH of the whole object must reach its size (got ${r.status}, Upload-Offset ${r.headers['upload-offset']})`]));
    } else {
      await step('basic PUT', api, { method: 'PUT', url: uploadAction.href, headers: { ...uploadAction.header, 'content-type': 'application/octet-stream' }, body: bytes }, status(200));
    }
    if (verifyAction) {
      await step('verify', api, { method: 'POST', url: verifyAction.href, headers: { ...verifyAction.header, accept: LFS, 'content-type': LFS }, body: JSON.stringify({ oid, size: bytes.length }) }, status(200));
    }

    let download: Action | undefined;
    if (api === 'batch') {
      const res = await step('batch download', 'batch', {
        method: 'POST', url: `${base}/objects/batch`, headers: { ...auth, accept: LFS, 'content-type': LFS },
        body: JSON.stringify({ operation: 'download', objects: [{ oid, size: bytes.length }] }),
      }, (r) => (json(r)?.objects?.[0]?.actions?.download ? [] : ['flow: a stored object got no download action']));
      download = res ? json(res)?.objects?.[0]?.actions?.download : undefined;
    }
    if (apis.includes('legacy')) {
      const res = await step('legacy read object', 'legacy', { method: 'GET', url: `${base}/objects/${oid}`, headers: { ...auth, accept: LFS } }, (r) =>
        json(r)?._links?.download ? [] : ['flow: the metadata of a stored object has no download link'],
      );
      download ??= res ? json(res)?._links?.download : undefined;
    }
    if (!download) continue;
    await step('download', api, { method: 'GET', url: download.href, headers: { ...download.header } }, (r) => (r.body.equals(bytes) ? [] : ['flow: the downloaded bytes differ from the uploaded ones']));
    await step('download a range', api, { method: 'GET', url: download.href, headers: { ...download.header, range: 'bytes=100-' } }, (r) =>
      r.status === 206 && r.headers['content-range'] === `bytes 100-${bytes.length - 1}/${bytes.length}` && r.body.equals(bytes.subarray(100))
        ? []
        : [`flow: a range request must answer 206 with Content-Range bytes 100-${bytes.length - 1}/${bytes.length} (got ${r.status}, ${r.headers['content-range']})`],
    );
  }

  if (!apis.includes('batch')) return;
  const path = `conformance/${randomBytes(6).toString('hex')}.bin`;
  const created = await step('lock a path', 'batch', { method: 'POST', url: `${base}/locks`, headers: { ...auth, accept: LFS, 'content-type': LFS }, body: JSON.stringify({ path }) }, status(201));
  const id = created && json(created)?.lock?.id;
  if (!id) return;
  await step('lock it again', 'batch', { method: 'POST', url: `${base}/locks`, headers: { ...auth, accept: LFS, 'content-type': LFS }, body: JSON.stringify({ path }) }, status(409));
  await step('list locks', 'batch', { method: 'GET', url: `${base}/locks?path=${encodeURIComponent(path)}`, headers: { ...auth, accept: LFS } }, (r) =>
    json(r)?.locks?.some((l) => l.id === id) ? [] : ['flow: the new lock is not listed'],
  );
  await step('verify locks', 'batch', { method: 'POST', url: `${base}/locks/verify`, headers: { ...auth, accept: LFS, 'content-type': LFS }, body: '{}' }, (r) =>
    json(r)?.ours?.some((l) => l.id === id) ? [] : ['flow: the caller\'s lock is not among "ours"'],
  );
  await step('unlock', 'batch', { method: 'POST', url: `${base}/locks/${encodeURIComponent(id)}/unlock`, headers: { ...auth, accept: LFS, 'content-type': LFS }, body: '{}' }, status(200));
}
