/**
 * Many clients at once: C clients each uploading and downloading 16 MiB objects
 * (alternately, each upload a new object) against one `pactum serve` for D seconds, against the
 * same loop run by one client: aggregate throughput, per-object p50/p99, errors, and pactum's
 * peak RSS. Goals: aggregate >= 0.8 of the single client's, 0 errors, peak <= idle + 60 MB.
 *
 * Objects differ only in their last 8 bytes (a counter), so each oid is the SHA-256 state after
 * the shared 16 MiB prefix, copied and finished with the counter: no client hashes 16 MiB.
 *
 *   npx tsx scripts/bench/concurrency.ts [--clients 32] [--duration 30] [--single 10] [--size-mib 16]
 */
import { createHash, randomFillSync } from 'node:crypto';
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import { fmt, median, record, rssOf } from './lib.js';
import { startPactum, type Pactum } from './pactum-process.js';
import { batch } from './transfers.js';

const { values } = parseArgs({ options: { clients: { type: 'string', default: '32' }, duration: { type: 'string', default: '30' }, single: { type: 'string', default: '10' }, 'size-mib': { type: 'string', default: '16' } } });
const CLIENTS = Number(values.clients);
const SIZE = Number(values['size-mib']) << 20;
const MiB = 1 << 20;

const prefix = Buffer.alloc(SIZE - 8);
randomFillSync(prefix);
const prefixHash = createHash('sha256').update(prefix);
let counter = 0;
/** A new object: the shared prefix and a counter. */
function nextObject() {
  const tail = Buffer.alloc(8);
  tail.writeBigUInt64BE(BigInt(++counter) + (BigInt(process.pid) << 32n));
  return { oid: prefixHash.copy().update(tail).digest('hex'), size: SIZE, tail };
}

interface Stats { bytes: number; errors: string[]; up: number[]; down: number[] }

function transfer(agent: Agent, href: string, method: 'PUT' | 'GET', headers: Record<string, string>, tail?: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(href, { method, agent, headers: method === 'PUT' ? { ...headers, 'content-type': 'application/octet-stream', 'content-length': String(SIZE) } : headers }, (res) => {
      let n = 0;
      let last = Buffer.alloc(0);
      res.on('data', (c: Buffer) => {
        n += c.length;
        if (method === 'GET') last = Buffer.concat([last, c]).subarray(-8);
      });
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${method} answered ${res.statusCode}`));
        if (method === 'GET' && (n !== SIZE || (tail && !last.equals(tail)))) return reject(new Error(`GET gave ${n} bytes or other bytes`));
        resolve(SIZE); // the object's bytes, sent or received
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (method === 'PUT') {
      // The prefix in 1 MiB slices (no copy), then the counter.
      for (let at = 0; at < prefix.length; at += MiB) req.write(prefix.subarray(at, at + MiB));
      req.end(tail);
    } else req.end();
  });
}

/** One client: upload a new object, download an object uploaded earlier, until the deadline. */
async function client(p: Pactum, deadline: number, stored: { oid: string; size: number; tail: Buffer }[], stats: Stats) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    while (performance.now() < deadline) {
      try {
        const o = nextObject();
        let started = performance.now();
        const up = (await batch(p, 'upload', [o])).objects[0]?.actions?.upload;
        if (!up) throw new Error('no upload action');
        const sent = await transfer(agent, up.href, 'PUT', up.header, o.tail);
        stats.bytes += sent; // after the await: `x += await y` would read x before the wait
        stats.up.push(performance.now() - started);
        stored.push(o);
        const pick = stored[Math.floor(Math.random() * stored.length)]!;
        started = performance.now();
        const down = (await batch(p, 'download', [pick])).objects[0]?.actions?.download;
        if (!down) throw new Error('no download action');
        const received = await transfer(agent, down.href, 'GET', down.header, pick.tail);
        stats.bytes += received;
        stats.down.push(performance.now() - started);
      } catch (err) {
        stats.errors.push((err as Error).message);
        if (process.env.BENCH_DEBUG) console.error(err);
      }
    }
  } finally {
    agent.destroy();
  }
}

async function run(p: Pactum, clients: number, seconds: number) {
  const stats: Stats = { bytes: 0, errors: [], up: [], down: [] };
  const stored: { oid: string; size: number; tail: Buffer }[] = [];
  const started = performance.now();
  await Promise.all(Array.from({ length: clients }, () => client(p, started + seconds * 1000, stored, stats)));
  const elapsed = (performance.now() - started) / 1000;
  return { ...stats, rate: stats.bytes / MiB / elapsed };
}

const p99 = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))]! : 0);
const p = await startPactum();
try {
  await new Promise((r) => setTimeout(r, 1000));
  const idle = rssOf(p.pid);
  await run(p, 2, 2); // warm-up
  const single = await run(p, 1, Number(values.single));
  p.resetPeak();
  const many = await run(p, CLIENTS, Number(values.duration));
  const peak = p.peak();
  const ratio = many.rate / single.rate;
  console.log(`one client:   ${fmt(single.rate)} MiB/s, upload p50 ${fmt(median(single.up))} ms p99 ${fmt(p99(single.up))} ms, download p50 ${fmt(median(single.down))} ms p99 ${fmt(p99(single.down))} ms, ${single.errors.length} errors`);
  console.log(`${CLIENTS} clients: ${fmt(many.rate)} MiB/s aggregate (${fmt(ratio, 2)} of one client; goal >= 0.80), ${many.up.length} uploads and ${many.down.length} downloads of ${fmt(SIZE / MiB)} MiB`);
  console.log(`              per object: upload p50 ${fmt(median(many.up))} ms p99 ${fmt(p99(many.up))} ms, download p50 ${fmt(median(many.down))} ms p99 ${fmt(p99(many.down))} ms`);
  console.log(`              errors ${many.errors.length} (goal 0)${many.errors.length ? `: ${[...new Set(many.errors)].slice(0, 3).join('; ')}` : ''}`);
  console.log(`              pactum RSS idle ${fmt(idle / 1e6)} MB, peak ${fmt(peak / 1e6)} MB = idle + ${fmt((peak - idle) / 1e6)} MB (goal <= idle + 60 MB)`);
  record(
    { bench: 'concurrency', measure: `${CLIENTS} clients, ${fmt(SIZE / MiB)} MiB objects, aggregate`, value: many.rate, unit: 'MiB/s', baseline: { name: 'one client', value: single.rate }, ratio, goal: '>= 0.80', met: ratio >= 0.8 },
    { bench: 'concurrency', measure: 'per-object p99 (upload / download)', value: p99(many.up), unit: 'ms', baseline: { name: 'download p99', value: p99(many.down) } },
    { bench: 'concurrency', measure: 'errors', value: many.errors.length, unit: '', goal: '0', met: many.errors.length === 0 },
    { bench: 'concurrency', measure: 'peak RSS', value: peak / 1e6, unit: 'MB', goal: `<= idle (${fmt(idle / 1e6)} MB) + 60 MB`, met: peak - idle <= 60e6 },
  );
  if (many.errors.length || single.errors.length) process.exitCode = 1;
} finally {
  await p.stop();
}
