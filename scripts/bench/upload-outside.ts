/**
 * What can separate an upload figure taken from outside, as a git-lfs user takes it, from the
 * objects bench's (docs/benchmarks.md, "Why the outside upload figure differed"):
 *   auth   batch requests to `pactum serve` (dist/) with HTTP Basic: the password's first check
 *          (scrypt), the password once remembered, and a personal access token (`pactum user
 *          token`), alternating; each one's latency and the server's CPU a batch (/proc).
 *   cache  a freshly written file uploaded twice in a row to the same bare hashing server
 *          (targets/object-servers.ts upload-hashing) by curl, --wait seconds after it was
 *          written, with and without `sync` before each upload (in alternating order): each
 *          upload's MiB/s, the dirty page cache before it and what the disk wrote during it
 *          (/sys/dev/block/<device>/stat), which shows whose upload paid the file's writeback.
 *
 *   npx tsx scripts/bench/upload-outside.ts [--rounds 4] [--size-mib 1024] [--wait 25] [--batches 200] [--only auth|cache]
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { cpuOf, fmt, median, startTarget } from './lib.js';
import { startPactum } from './pactum-process.js';
import { batch, curl, makeFile } from './transfers.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '4' },
    'size-mib': { type: 'string', default: '1024' },
    wait: { type: 'string', default: '25' },
    batches: { type: 'string', default: '200' },
    only: { type: 'string' },
  },
});
const MiB = 1024 ** 2;
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

if (values.only !== 'cache') {
  const p = await startPactum();
  try {
    const objects = (i: number) => [{ oid: i.toString(16).padStart(64, 'a'), size: MiB }];
    const withCpu = async (auth: string, i: number) => {
      const from = cpuOf(p.pid);
      const { ms } = await batch({ lfs: p.lfs, auth }, 'upload', objects(i));
      return { ms, cpu: cpuOf(p.pid) - from };
    };
    await withCpu(p.tokenAuth, 0); // the route's first use, with the token: its compile costs count for neither
    const first = await withCpu(p.auth, 1);
    const n = Number(values.batches);
    const runs = { password: [] as number[], token: [] as number[] };
    const cpu = { password: 0, token: 0 };
    for (let i = 0; i < n; i++) {
      for (const k of i % 2 ? (['password', 'token'] as const) : (['token', 'password'] as const)) {
        const r = await withCpu(k === 'password' ? p.auth : p.tokenAuth, 2 + 2 * i + (k === 'token' ? 1 : 0));
        runs[k].push(r.ms);
        cpu[k] += r.cpu;
      }
    }
    console.log(
      `auth (load average ${load()}): the password's first check ${fmt(first.ms, 1)} ms, server CPU ${fmt(first.cpu * 1000)} ms; ` +
        `then ${n} batches each, alternating: the remembered password p50 ${fmt(median(runs.password), 2)} ms, CPU ${fmt((cpu.password / n) * 1e6)} µs a batch; ` +
        `a personal access token p50 ${fmt(median(runs.token), 2)} ms, CPU ${fmt((cpu.token / n) * 1e6)} µs a batch`,
    );
  } finally {
    await p.stop();
  }
}

if (values.only !== 'auth') {
  const size = Number(values['size-mib']) * MiB;
  const dev = statSync(tmpdir()).dev;
  const stat = `/sys/dev/block/${Math.floor(dev / 256) & 0xfff}:${(dev & 0xff) | ((Math.floor(dev / 4096) & 0xfff00))}/stat`;
  const writtenMiB = () => (Number(readFileSync(stat, 'utf8').trim().split(/\s+/)[6]) * 512) / MiB;
  const dirtyMiB = () => Number(/Dirty:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))![1]) / 1024;
  const server = await startTarget(new URL('./targets/object-servers.ts', import.meta.url).href, ['upload-hashing']);
  const ratios = { 'no sync': [] as number[], sync: [] as number[] };
  try {
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const mode of round % 2 ? (['sync', 'no sync'] as const) : (['no sync', 'sync'] as const)) {
        const f = await makeFile(size, `outside-${round}`);
        await new Promise((r) => setTimeout(r, Number(values.wait) * 1000));
        const seen: string[] = [];
        const rates: number[] = [];
        for (let i = 0; i < 2; i++) {
          const dirty = dirtyMiB();
          if (mode === 'sync') execFileSync('sync');
          const from = writtenMiB();
          const r = await curl(server.url, 'PUT', {}, f.path);
          if (r.status !== 200) throw new Error(`the bare server answered ${r.status}`);
          rates.push(size / MiB / (r.ms / 1000));
          seen.push(`${fmt(rates.at(-1)!)} MiB/s (dirty before ${fmt(dirty)} MiB, the disk wrote ${fmt(writtenMiB() - from)} MiB meanwhile)`);
        }
        rmSync(f.path);
        ratios[mode].push(rates[0]! / rates[1]!);
        console.log(`cache round ${round + 1}, ${mode}, ${values.wait} s after the file was written (load average ${load()}): first ${seen[0]}; second ${seen[1]}; first / second ${fmt(rates[0]! / rates[1]!, 2)}`);
      }
    }
  } finally {
    await server.stop();
  }
  for (const [mode, list] of Object.entries(ratios)) console.log(`cache ${mode}: first / second, median of ${list.length}: ${fmt(median(list), 2)} (${list.map((x) => fmt(x, 2)).join(', ')})`);
}
