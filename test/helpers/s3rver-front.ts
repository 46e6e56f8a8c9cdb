/**
 * An S3-protocol server for the backend's tests: s3rver (files in a temporary directory), with the
 * three operations s3.ts uses that s3rver 3.7.1 lacks answered in front of it, on s3rver's own files:
 *
 * - ListMultipartUploads (GET /bucket?uploads): 501 NotImplemented in s3rver;
 * - AbortMultipartUpload (DELETE /bucket/key?uploadId=): 405 MethodNotAllowed in s3rver;
 * - UploadPartCopy (PUT /bucket/key?partNumber=&uploadId= with x-amz-copy-source): 501 in s3rver.
 *
 * s3rver keeps an upload in <dir>/<bucket>/._S3rver_uploads/<uploadId>/ (files `key`, `metadata`,
 * and per part `<n>` and `<n>.md5`) and an object in <dir>/<bucket>/<key>._S3rver_object.
 * `knobs` let a test turn the additions off (to see s3.ts cope with a bare s3rver), hold part
 * uploads back, or make them fail.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

export interface Knobs {
  /** Answer ListMultipartUploads and AbortMultipartUpload (else s3rver's 501 / 405). */
  multipartAdmin: boolean;
  /** Answer UploadPartCopy (else s3rver's 501). */
  copyParts: boolean;
  /** When set, UploadPart waits for it before s3rver stores the part. */
  partGate: Promise<void> | null;
  /** When true, UploadPart fails with 404 NoSuchUpload (an upload aborted under our feet). */
  failParts: boolean;
  /** PutObject of a key this accepts fails with 403 AccessDenied. */
  refusePut: ((key: string) => boolean) | null;
}

export interface TestS3 {
  endpoint: string;
  bucket: string;
  dir: string;
  knobs: Knobs;
  /** How often each added operation was answered. */
  answered: { listUploads: number; abortUpload: number; copyPart: number };
  /** Makes multipart upload `uploadId` look initiated `ms` ago. */
  backdateUpload(uploadId: string, ms: number): Promise<void>;
  close(): Promise<void>;
}

const NS = 'http://s3.amazonaws.com/doc/2006-03-01/';
const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export async function startS3(bucket = 'pactum'): Promise<TestS3> {
  const dir = await mkdtemp(join(tmpdir(), 'pactum-s3-test-'));
  const s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [{ name: bucket }] });
  const { port } = await s3.run();
  const knobs: Knobs = { multipartAdmin: true, copyParts: true, partGate: null, failParts: false, refusePut: null };
  /** Where s3rver keeps a bucket's multipart uploads (any bucket: tests may create more). */
  const uploadsOf = (b: string) => join(dir, b, '._S3rver_uploads');
  const uploadsDir = uploadsOf(bucket);
  const answered = { listUploads: 0, abortUpload: 0, copyPart: 0 };

  function send(res: ServerResponse, status: number, body = '') {
    res.writeHead(status, body ? { 'Content-Type': 'application/xml' } : {});
    res.end(body);
  }
  const s3Error = (res: ServerResponse, status: number, code: string) =>
    send(res, status, xml(`<Error><Code>${code}</Code><Message>${code}</Message></Error>`));

  const bucketOf = (url: URL) => decodeURIComponent(url.pathname.split('/')[1] ?? '');

  async function listUploads(url: URL, res: ServerResponse) {
    answered.listUploads++;
    const uploadsDir = uploadsOf(bucketOf(url));
    const prefix = url.searchParams.get('prefix') ?? '';
    const ids = await readdir(uploadsDir).catch(() => [] as string[]);
    const uploads = [];
    for (const id of ids.sort()) {
      const key = await readFile(join(uploadsDir, id, 'key'), 'utf8');
      const initiated = (await stat(join(uploadsDir, id, 'key'))).mtime;
      if (key.startsWith(prefix)) uploads.push(`<Upload><Key>${esc(key)}</Key><UploadId>${id}</UploadId><Initiated>${initiated.toISOString()}</Initiated></Upload>`);
    }
    send(res, 200, xml(`<ListMultipartUploadsResult xmlns="${NS}"><Bucket>${esc(bucketOf(url))}</Bucket><Prefix>${esc(prefix)}</Prefix><IsTruncated>false</IsTruncated>${uploads.join('')}</ListMultipartUploadsResult>`));
  }

  async function abortUpload(url: URL, uploadId: string, res: ServerResponse) {
    answered.abortUpload++;
    const uploadsDir = uploadsOf(bucketOf(url));
    const path = join(uploadsDir, uploadId);
    if (!(await stat(path).catch(() => null))) return s3Error(res, 404, 'NoSuchUpload');
    await rm(path, { recursive: true, force: true });
    send(res, 204);
  }

  async function copyPart(req: IncomingMessage, url: URL, uploadId: string, partNumber: string, res: ServerResponse) {
    answered.copyPart++;
    const uploadsDir = uploadsOf(bucketOf(url));
    const source = decodeURIComponent(String(req.headers['x-amz-copy-source'])).replace(/^\//, '');
    const [srcBucket, ...srcKey] = source.split('/');
    const bytes = await readFile(`${join(dir, srcBucket!, ...srcKey)}._S3rver_object`).catch(() => null);
    if (!bytes) return s3Error(res, 404, 'NoSuchKey');
    if (!(await stat(join(uploadsDir, uploadId)).catch(() => null))) return s3Error(res, 404, 'NoSuchUpload');
    const md5 = createHash('md5').update(bytes).digest('hex');
    await writeFile(join(uploadsDir, uploadId, partNumber), bytes);
    await writeFile(join(uploadsDir, uploadId, `${partNumber}.md5`), md5);
    send(res, 200, xml(`<CopyPartResult xmlns="${NS}"><ETag>"${md5}"</ETag><LastModified>${new Date().toISOString()}</LastModified></CopyPartResult>`));
  }

  /** Reads the body before answering, as S3 does. */
  async function refuse(req: IncomingMessage, res: ServerResponse, status: number, code: string) {
    for await (const _ of req);
    s3Error(res, status, code);
  }

  /** Our answer for the request, or null to leave it to s3rver. Decided before the body is read. */
  function extra(req: IncomingMessage, res: ServerResponse): Promise<void> | null {
    const url = new URL(req.url ?? '/', 'http://s3');
    const isBucket = /^\/[^/]+\/?$/.test(url.pathname);
    const uploadId = url.searchParams.get('uploadId');
    const partNumber = url.searchParams.get('partNumber');
    if (knobs.multipartAdmin && req.method === 'GET' && isBucket && url.searchParams.has('uploads')) return listUploads(url, res);
    if (knobs.multipartAdmin && req.method === 'DELETE' && !isBucket && uploadId) return abortUpload(url, uploadId, res);
    if (req.method === 'PUT' && uploadId && partNumber) {
      if (req.headers['x-amz-copy-source']) return knobs.copyParts ? copyPart(req, url, uploadId, partNumber, res) : null;
      if (knobs.failParts) return refuse(req, res, 404, 'NoSuchUpload');
      if (knobs.partGate) return knobs.partGate.then(() => void s3rverHandler(req, res));
    }
    const key = decodeURIComponent(url.pathname.split('/').slice(2).join('/'));
    if (req.method === 'PUT' && !uploadId && knobs.refusePut?.(key)) return refuse(req, res, 403, 'AccessDenied');
    return null;
  }

  // s3rver's server answers with its Koa callback; ours go in front of it.
  const server = (s3 as unknown as { httpServer: Server }).httpServer;
  const s3rverHandler = server.listeners('request')[0] as RequestListener;
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const ours = extra(req, res);
    if (!ours) return void s3rverHandler(req, res);
    ours.catch((err: Error) => {
      if (!res.headersSent) send(res, 500, xml(`<Error><Code>InternalError</Code><Message>${esc(err.message)}</Message></Error>`));
    });
  });

  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    dir,
    knobs,
    answered,
    async backdateUpload(uploadId, ms) {
      const when = new Date(Date.now() - ms);
      await utimes(join(uploadsDir, uploadId, 'key'), when, when);
    },
    async close() {
      server.closeAllConnections();
      await s3.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The options s3Backend needs for this server (s3rver accepts the S3RVER key pair). */
export const backendOptions = (s3: TestS3, prefix: string, partSize = 5 * 2 ** 20) => ({
  bucket: s3.bucket,
  endpoint: s3.endpoint,
  region: 'us-east-1',
  accessKeyId: 'S3RVER',
  secretAccessKey: 'S3RVER',
  forcePathStyle: true,
  prefix,
  partSize,
});
