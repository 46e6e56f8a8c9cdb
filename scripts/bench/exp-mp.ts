import { createReadStream, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, CreateMultipartUploadCommand, UploadPartCommand, CompleteMultipartUploadCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startCeph } from '../lib/ceph.js';
const MiB = 1 << 20;
const size = 128 * MiB;
const path = '/tmp/exp/f';
writeFileSync(path, randomBytes(size));
const ceph = await startCeph({ memBytes: 3 * 1024 ** 3 });
const sdk = new S3Client({ region: 'us-east-1', endpoint: ceph.gateway.endpoint, forcePathStyle: true, credentials: { accessKeyId: ceph.accessKeyId, secretAccessKey: ceph.secretAccessKey }, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
const Bucket = 'bench';
await sdk.send(new CreateBucketCommand({ Bucket }));
const rate = (t: number) => (size / MiB / ((performance.now() - t) / 1000)).toFixed(0);
async function mp(Key: string, partLen: number, inflight: number) {
  const { UploadId } = await sdk.send(new CreateMultipartUploadCommand({ Bucket, Key }));
  const parts: { PartNumber: number; ETag?: string }[] = [];
  const running = new Set<Promise<void>>();
  for (let off = 0, n = 1; off < size; off += partLen, n++) {
    const len = Math.min(partLen, size - off);
    const PartNumber = n;
    const p = sdk.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber, ContentLength: len, Body: createReadStream(path, { start: off, end: off + len - 1, highWaterMark: MiB }) })).then((r) => { parts.push({ PartNumber, ETag: r.ETag }); running.delete(p); });
    running.add(p);
    if (running.size >= inflight) await Promise.race(running);
  }
  await Promise.all(running);
  parts.sort((a, b) => a.PartNumber - b.PartNumber);
  await sdk.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts: parts } }));
}
for (let r = 0; r < 3; r++) {
  let t = performance.now();
  await sdk.send(new PutObjectCommand({ Bucket, Key: `put${r}`, ContentLength: size, Body: createReadStream(path, { highWaterMark: MiB }) }));
  const put = rate(t);
  const res: string[] = [];
  for (const [pl, inf] of [[128, 1], [16, 1], [16, 4], [32, 2]] as const) {
    t = performance.now();
    await mp(`mp${r}-${pl}-${inf}`, pl * MiB, inf);
    res.push(`mp ${pl}MiB×${inf} ${rate(t)}`);
  }
  console.log(`put ${put}  ${res.join('  ')}`);
}
sdk.destroy();
await ceph.stop();
