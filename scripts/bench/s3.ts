/**
 * The S3 path against a real S3 server, side by side in one run: a throwaway Ceph RGW cluster
 * (scripts/lib/ceph.ts; Debian's ceph-mon, ceph-osd, radosgw and ceph-common must be installed)
 * and, against the same gateway and the same file,
 *   - upload: pactum's basic PUT with STORAGE=s3 (hash checked before the object is visible)
 *     against the AWS SDK's own fastest ways: PutObject streamed with its length, and
 *     @aws-sdk/lib-storage `Upload` (16 MiB parts, 4 in flight); the faster of the two is the
 *     baseline;
 *     and, to show what any server in between costs, a bare relay (node:http piping the request
 *     into PutObject with its length, in this process);
 *   - download: pactum's basic GET against the SDK's GetObject streamed; and, to show what any
 *     server in between costs, a bare relay (node:http answering with GetObject piped into the
 *     response, in this process);
 *   - pactum's peak RSS during its upload and download (kernel VmHWM), beside its idle RSS.
 * After a warm-up round, rounds alternate, pactum in its own process (`node dist/pactum/main.js serve`, `make
 * build` first); medians and ratios (goals: upload >= 0.8, download >= 0.9).
 *
 * With --parts it measures instead what the write path was chosen by: the SDK's PutObject beside
 * multipart uploads whose parts stream from the file with their lengths, in several layouts
 * (part size × parts awaiting their answer), as pactum streams them from the request.
 *
 *   npx tsx scripts/bench/s3.ts [--rounds 3] [--mib 128] [--parts]
 */
import { createReadStream, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { cephInstalled, cephVersion, startCeph } from '../lib/ceph.js';
import { fmt, median, record } from './lib.js';
import { startPactum } from './pactum-process.js';
import { actionFor, makeFile, send, type TestFile } from './transfers.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, mib: { type: 'string', default: '128' }, parts: { type: 'boolean', default: false } } });
const rounds = Number(values.rounds);
const MiB = 1024 ** 2;
const size = Number(values.mib) * MiB;
const BUCKET = 'bench';

if (!cephInstalled()) {
  console.error('scripts/bench/s3.ts needs Ceph: apt-get install ceph-mon ceph-osd radosgw ceph-common');
  process.exit(2);
}

type File = TestFile;

/** Discards bytes as fast as they come, counting them. */
const sink = () => {
  let bytes = 0;
  return { stream: new Writable({ write: (c: Buffer, _e, cb) => ((bytes += c.length), cb()) }), bytes: () => bytes };
};

const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

console.log(`starting a Ceph RGW cluster (${cephVersion()})…`);
const t0 = performance.now();
// Room for what one round writes several times over, though deleted objects are collected in seconds.
const ceph = await startCeph({ memBytes: Math.max(3 * 1024 ** 3, 16 * size) });
console.log(`RGW answering at ${ceph.gateway.endpoint} after ${fmt((performance.now() - t0) / 1000, 1)} s`);
const sdk = new S3Client({
  region: 'us-east-1',
  endpoint: ceph.gateway.endpoint,
  forcePathStyle: true,
  credentials: { accessKeyId: ceph.accessKeyId, secretAccessKey: ceph.secretAccessKey },
  // RGW 16 refuses the SDK's default streamed checksums (aws-chunked with a trailer).
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
});
await sdk.send(new CreateBucketCommand({ Bucket: BUCKET }));
const s3Env = (prefix: string) => ({
  STORAGE: 's3',
  S3_ENDPOINT: ceph.gateway.endpoint,
  S3_BUCKET: BUCKET,
  S3_ACCESS_KEY_ID: ceph.accessKeyId,
  S3_SECRET_ACCESS_KEY: ceph.secretAccessKey,
  S3_FORCE_PATH_STYLE: 'true',
  S3_PREFIX: prefix,
});

// The bare relay: what a skilled user would write to serve an S3 object through a Node server.
// For uploads, the request body streamed into PutObject with its length.
const relay = createServer((req, res) => {
  const Key = decodeURIComponent(req.url!.slice(1));
  if (req.method === 'PUT') {
    sdk.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: req, ContentLength: Number(req.headers['content-length']) })).then(
      () => res.end(),
      () => res.writeHead(502).end(),
    );
    return;
  }
  sdk.send(new GetObjectCommand({ Bucket: BUCKET, Key })).then(
    (got) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(got.ContentLength) });
      return pipeline(got.Body as NodeJS.ReadableStream, res);
    },
    () => res.writeHead(502).end(),
  );
});
await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
const relayUrl = `http://127.0.0.1:${(relay.address() as { port: number }).port}`;

const rate = (ms: number) => size / (ms / 1000) / MiB;

/** A multipart upload of the file whose parts stream from it with their lengths, `inFlight` at a time. */
async function streamedParts(f: File, Key: string, partLen: number, inFlight: number) {
  const { UploadId } = await sdk.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key }));
  const parts: { PartNumber: number; ETag?: string }[] = [];
  const running = new Set<Promise<void>>();
  for (let start = 0, PartNumber = 1; start < f.size; start += partLen, PartNumber++) {
    const len = Math.min(partLen, f.size - start);
    const n = PartNumber;
    const Body = createReadStream(f.path, { start, end: start + len - 1, highWaterMark: MiB });
    const sent: Promise<void> = sdk.send(new UploadPartCommand({ Bucket: BUCKET, Key, UploadId, PartNumber: n, Body, ContentLength: len })).then((r) => {
      parts.push({ PartNumber: n, ETag: r.ETag });
      running.delete(sent);
    });
    running.add(sent);
    if (running.size >= inFlight) await Promise.race(running);
  }
  await Promise.all(running);
  parts.sort((a, b) => a.PartNumber - b.PartNumber);
  await sdk.send(new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key, UploadId, MultipartUpload: { Parts: parts } }));
}

if (values.parts) {
  const layouts: [string, (f: File, Key: string) => Promise<unknown>][] = [
    ['PutObject', (f, Key) => sdk.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: createReadStream(f.path, { highWaterMark: MiB }), ContentLength: f.size }))],
    ['one part', (f, Key) => streamedParts(f, Key, f.size, 1)],
    ['16 MiB parts, 1 awaiting', (f, Key) => streamedParts(f, Key, 16 * MiB, 1)],
    ['16 MiB parts, 4 awaiting (pactum)', (f, Key) => streamedParts(f, Key, 16 * MiB, 4)],
    ['32 MiB parts, 2 awaiting', (f, Key) => streamedParts(f, Key, 32 * MiB, 2)],
    ['64 MiB parts, 2 awaiting', (f, Key) => streamedParts(f, Key, 64 * MiB, 2)],
  ];
  const took = new Map<string, number[]>(layouts.map(([name]) => [name, []]));
  try {
    for (let round = 0; round <= rounds; round++) {
      const f = await makeFile(size, `s3-parts${round}`);
      for (const [name, upload] of layouts) {
        const started = performance.now();
        await upload(f, `parts/${round}`);
        if (round > 0) took.get(name)!.push(performance.now() - started); // round 0 warms up
        await sdk.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `parts/${round}` }));
      }
      rmSync(f.path);
    }
  } finally {
    relay.close();
    sdk.destroy();
    await ceph.stop();
  }
  const put = rate(median(took.get('PutObject')!));
  console.log(`\n${fmt(size / MiB)} MiB through Ceph RGW ${cephVersion()}, the SDK streaming from a file, medians of ${rounds}`);
  for (const [name, list] of took) console.log(`${name.padEnd(36)} ${fmt(rate(median(list))).padStart(5)} MiB/s   ${fmt(rate(median(list)) / put, 2)}× PutObject`);
  process.exit(0);
}

const times = { put: [] as number[], multipart: [] as number[], relayUp: [] as number[], get: [] as number[], relay: [] as number[], pUp: [] as number[], pDown: [] as number[], pDirect: [] as number[] };
const memory = { idle: [] as number[], peak: [] as number[] };
// One pactum for all rounds, as in production: the warm-up round also warms it (JIT, lazily loaded
// modules, the S3 client's connections), as the SDK baselines warm up in this process.
const p = await startPactum(s3Env('pactum/'));
// The same with S3_SERVE_DIRECT=true: the download action is a presigned URL, fetched from RGW.
const direct = await startPactum({ ...s3Env('direct/'), S3_SERVE_DIRECT: 'true' });
await new Promise((r) => setTimeout(r, 500));
memory.idle.push(rss(p.pid));
try {
  // Round 0 warms up: a fresh RGW (and its memstore) is slower on its first objects.
  for (let round = 0; round <= rounds; round++) {
    const f = await makeFile(size, `s3-r${round}`); // a new object each round: pactum keeps what it stored
    const key = `sdk/${f.oid}`;

    let started = performance.now();
    await sdk.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: createReadStream(f.path, { highWaterMark: MiB }), ContentLength: f.size }));
    times.put.push(performance.now() - started);
    await sdk.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key }));

    started = performance.now();
    await new Upload({ client: sdk, params: { Bucket: BUCKET, Key: key, Body: createReadStream(f.path, { highWaterMark: MiB }) }, partSize: 16 * MiB, queueSize: 4 }).done();
    times.multipart.push(performance.now() - started);
    await sdk.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key }));
    const ru = await send(`${relayUrl}/${encodeURIComponent(key)}`, 'PUT', { 'content-length': String(f.size) }, f.path);
    if (ru.status !== 200) throw new Error(`the relay answered ${ru.status} to the upload`);
    times.relayUp.push(ru.ms);

    started = performance.now();
    const got = await sdk.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    const s1 = sink();
    await pipeline(got.Body as NodeJS.ReadableStream, s1.stream);
    times.get.push(performance.now() - started);
    if (s1.bytes() !== f.size) throw new Error(`GetObject gave ${s1.bytes()} bytes`);
    const r = await send(`${relayUrl}/${encodeURIComponent(key)}`, 'GET', {});
    if (r.status !== 200 || r.bytes !== f.size) throw new Error(`the relay answered ${r.status} with ${r.bytes} bytes`);
    times.relay.push(r.ms);
    await sdk.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key }));

    try {
      p.resetPeak();
      const up = await actionFor(p, 'upload', f);
      const u = await send(up.href, 'PUT', { ...up.header, 'content-length': String(f.size), 'content-type': 'application/octet-stream' }, f.path);
      if (u.status !== 200) throw new Error(`pactum upload answered ${u.status}: ${u.body}`);
      times.pUp.push(u.ms);
      const dl = await actionFor(p, 'download', f);
      const d = await send(dl.href, 'GET', dl.header);
      if (d.status !== 200 || d.bytes !== f.size) throw new Error(`pactum download answered ${d.status} with ${d.bytes} bytes`);
      times.pDown.push(d.ms);
      memory.peak.push(p.peak());

      const upDirect = await actionFor(direct, 'upload', f);
      const ud = await send(upDirect.href, 'PUT', { ...upDirect.header, 'content-length': String(f.size), 'content-type': 'application/octet-stream' }, f.path);
      if (ud.status !== 200) throw new Error(`pactum (direct) upload answered ${ud.status}: ${ud.body}`);
      started = performance.now(); // the batch request is part of a direct download's time
      const presigned = await actionFor(direct, 'download', f);
      const dd = await send(presigned.href, 'GET', presigned.header);
      if (dd.status !== 200 || dd.bytes !== f.size) throw new Error(`the presigned download answered ${dd.status} with ${dd.bytes} bytes`);
      times.pDirect.push(performance.now() - started);
    } finally {
      rmSync(f.path);
    }
    // Every way starts from the same state of the gateway's store: nothing of earlier rounds kept.
    for (const prefix of ['pactum/', 'direct/']) await sdk.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `${prefix}objects/${f.oid.slice(0, 2)}/${f.oid.slice(2, 4)}/${f.oid}` }));
    console.log(
      `${round === 0 ? 'warm-up' : `round ${round}`}: upload PutObject ${fmt(rate(times.put.at(-1)!))} MiB/s, lib-storage ${fmt(rate(times.multipart.at(-1)!))}, bare relay ${fmt(rate(times.relayUp.at(-1)!))}, pactum ${fmt(rate(times.pUp.at(-1)!))}; ` +
        `download GetObject ${fmt(rate(times.get.at(-1)!))}, bare relay ${fmt(rate(times.relay.at(-1)!))}, pactum ${fmt(rate(times.pDown.at(-1)!))}, pactum S3_SERVE_DIRECT ${fmt(rate(times.pDirect.at(-1)!))}`,
    );
    if (round === 0) for (const list of [...Object.values(times), memory.peak]) list.length = 0;
  }
} finally {
  await p.stop();
  await direct.stop();
  relay.close();
  sdk.destroy();
  await ceph.stop();
}

const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, rate(median(v))])) as Record<keyof typeof times, number>;
const bestUpload = Math.max(m.put, m.multipart);
const mb = (n: number) => `${fmt(n / 1024 ** 2)} MB`;
console.log(`
${fmt(size / MiB)} MiB objects through Ceph RGW ${cephVersion()}, medians of ${rounds}
upload     PutObject ${fmt(m.put)} MiB/s   lib-storage Upload ${fmt(m.multipart)} MiB/s   pactum ${fmt(m.pUp)} MiB/s   ratio ${fmt(m.pUp / bestUpload, 2)} (goal >= 0.80, against the faster SDK way)
           bare relay ${fmt(m.relayUp)} MiB/s (${fmt(m.relayUp / bestUpload, 2)}× the SDK: the cost of any server in between)   pactum/relay ${fmt(m.pUp / m.relayUp, 2)}
download   GetObject ${fmt(m.get)} MiB/s   pactum ${fmt(m.pDown)} MiB/s   ratio ${fmt(m.pDown / m.get, 2)} (goal >= 0.90)
           bare relay ${fmt(m.relay)} MiB/s (${fmt(m.relay / m.get, 2)}× GetObject: the cost of any server in between)   pactum/relay ${fmt(m.pDown / m.relay, 2)}
           pactum with S3_SERVE_DIRECT (batch + presigned GET) ${fmt(m.pDirect)} MiB/s   ratio ${fmt(m.pDirect / m.get, 2)} (goal >= 0.90)
pactum RSS idle ${mb(median(memory.idle))}   peak during upload+download ${mb(median(memory.peak))}   (+${mb(median(memory.peak) - median(memory.idle))})`);
record(
  { bench: 's3', measure: `upload ${fmt(size / MiB)} MiB through Ceph RGW`, value: m.pUp, unit: 'MiB/s', baseline: { name: 'faster of PutObject and lib-storage Upload', value: bestUpload }, ratio: m.pUp / bestUpload, goal: '>= 0.80', met: m.pUp / bestUpload >= 0.8 },
  { bench: 's3', measure: `download ${fmt(size / MiB)} MiB through Ceph RGW, relayed by pactum`, value: m.pDown, unit: 'MiB/s', baseline: { name: 'GetObject streamed', value: m.get }, ratio: m.pDown / m.get, goal: '>= 0.90', met: m.pDown / m.get >= 0.9 },
  { bench: 's3', measure: `download ${fmt(size / MiB)} MiB, S3_SERVE_DIRECT (batch + presigned GET)`, value: m.pDirect, unit: 'MiB/s', baseline: { name: 'GetObject streamed', value: m.get }, ratio: m.pDirect / m.get, goal: '>= 0.90', met: m.pDirect / m.get >= 0.9 },
);
