/**
 * Object transfer throughput and memory, and batch latency:
 *   - 1 GiB basic upload through pactum (SHA-256 checked while streaming, fsync, atomic rename)
 *     against a bare node:http server that writes the body to a file and fsyncs it;
 *   - 1 GiB download through pactum against a bare node:http server streaming the same file;
 *     alternating rounds, medians, ratios (goals: upload >= 0.85, download >= 0.9);
 *   - pactum's peak RSS over a 1 GiB and a 4 GiB upload+download (goal <= 120 MB, within 10%),
 *     read from the kernel (VmHWM) of the production entry point, `node dist/src/cli/main.js serve`;
 *   - p50 of batch requests naming 100 and 1000 objects (goal: 100 objects <= 5 ms).
 *
 *   npx tsx scripts/bench/objects.ts [--rounds 3] [--big-gib 4] [--skip-big]
 */
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fmt, median, startTarget } from './lib.js';
import { startPactum, type Pactum } from './pactum-process.js';
import { actionFor, batch, makeFile, send } from './transfers.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, 'big-gib': { type: 'string', default: '4' }, 'skip-big': { type: 'boolean' } } });
const rounds = Number(values.rounds);
const script = new URL('./targets/object-servers.ts', import.meta.url).href;
const GiB = 1024 ** 3;

async function pactumUpload(t: Pactum, f: { path: string; oid: string; size: number }) {
  const up = await actionFor(t, 'upload', f);
  const r = await send(up.href, 'PUT', { ...up.header, 'content-length': String(f.size), 'content-type': 'application/octet-stream' }, f.path);
  if (r.status !== 200) throw new Error(`upload answered ${r.status}: ${r.body}`);
  return r.ms;
}

async function pactumDownload(t: Pactum, f: { oid: string; size: number }) {
  const dl = await actionFor(t, 'download', f);
  const r = await send(dl.href, 'GET', dl.header);
  if (r.status !== 200) throw new Error(`download answered ${r.status}`);
  return r.ms;
}

const rate = (bytes: number, ms: number) => `${fmt(bytes / (ms / 1000) / 1024 ** 2)} MiB/s`;

console.log('preparing a 1 GiB object…');
const one = await makeFile(GiB);
const up: Record<'baseline' | 'pactum', number[]> = { baseline: [], pactum: [] };
const down: Record<'baseline' | 'pactum', number[]> = { baseline: [], pactum: [] };
for (let round = 1; round <= rounds; round++) {
  const bu = await startTarget(script, ['upload-baseline']);
  up.baseline.push((await send(bu.url, 'PUT', { 'content-length': String(GiB) }, one.path)).ms);
  await bu.stop();
  const p = await startPactum();
  up.pactum.push(await pactumUpload(p, one));
  down.pactum.push(await pactumDownload(p, one));
  await p.stop();
  const bd = await startTarget(script, ['download-baseline'], { BENCH_FILE: one.path });
  down.baseline.push((await send(bd.url, 'GET', {})).ms);
  await bd.stop();
  console.log(`round ${round}: upload baseline ${rate(GiB, up.baseline.at(-1)!)}, pactum ${rate(GiB, up.pactum.at(-1)!)}; download baseline ${rate(GiB, down.baseline.at(-1)!)}, pactum ${rate(GiB, down.pactum.at(-1)!)}`);
}

// Memory: one server, a 1 GiB round trip, then a bigger one.
const mem = await startPactum();
mem.resetPeak();
const small = await makeFile(GiB + 1); // a distinct object
await pactumUpload(mem, small);
await pactumDownload(mem, small);
const peak1 = mem.peak();
mem.resetPeak();
let peakBig: number | null = null;
const bigGiB = Number(values['big-gib']);
if (!values['skip-big']) {
  console.log(`preparing a ${bigGiB} GiB object…`);
  const big = await makeFile(bigGiB * GiB);
  await pactumUpload(mem, big);
  await pactumDownload(mem, big);
  peakBig = mem.peak();
  rmSync(big.path);
}

// Batch latency, sequential requests on one server.
const objectsOf = (n: number) => Array.from({ length: n }, (_, i) => ({ oid: createHash('sha256').update(`bench ${n} ${i}`).digest('hex'), size: 1000 + i }));
const batchP50: Record<number, number> = {};
for (const n of [100, 1000]) {
  const objects = objectsOf(n);
  const times: number[] = [];
  for (let i = 0; i < 20; i++) await batch(mem, 'upload', objects); // warm-up
  for (let i = 0; i < 200; i++) times.push((await batch(mem, 'upload', objects)).ms);
  batchP50[n] = median(times);
}
await mem.stop();
rmSync(one.path);
rmSync(small.path);

const u = { b: median(up.baseline), p: median(up.pactum) };
const d = { b: median(down.baseline), p: median(down.pactum) };
const mb = (n: number) => `${fmt(n / 1024 ** 2)} MB`;
console.log(`
upload 1 GiB     baseline ${rate(GiB, u.b)}   pactum ${rate(GiB, u.p)}   ratio ${fmt(u.b / u.p, 2)} (goal >= 0.85, hash checked)
download 1 GiB   baseline ${rate(GiB, d.b)}   pactum ${rate(GiB, d.p)}   ratio ${fmt(d.b / d.p, 2)} (goal >= 0.90)
peak RSS         1 GiB ${mb(peak1)}${peakBig !== null ? `   ${bigGiB} GiB ${mb(peakBig)}   (${fmt((100 * (peakBig - peak1)) / peak1, 1)}% apart)` : ''} (goal <= 120 MB, within 10%)
batch p50        100 objects ${fmt(batchP50[100]!, 2)} ms   1000 objects ${fmt(batchP50[1000]!, 2)} ms (goal: 100 <= 5 ms)`);
