/**
 * Object transfer throughput and memory, each figure side by side in one run:
 *   - the disk itself: `dd if=/dev/zero bs=1M conv=fdatasync` into the same directory;
 *   - (every transfer made by curl, as in the issue's figures)
 *   - basic upload through pactum as a git-lfs user sees it (HTTP Basic with a personal access
 *     token made by `pactum user token`; the time from the batch request's start to the end of
 *     the PUT and of the verify request; SHA-256 checked while streaming, fsync, atomic rename)
 *     against a
 *     bare node:http server that writes the body to a file with 1 MiB writes and fsyncs it, which
 *     must itself reach 0.8 of dd (else the comparison is flattered and the script says so);
 *     and, printed beside it, the same bare server hashing each chunk with SHA-256 in the same
 *     pass (pactum must check the hash; the bare server does not: this shows what that costs);
 *   - download through pactum (the batch request and the GET) against a bare node:http server
 *     streaming the same file with 1 MiB reads;
 *   - optionally any other Git LFS server (--reference, e.g. lfs-test-server), driven the same way
 *     as pactum: a batch request, then the action's href, then its verify action if it has one;
 *   - each server's CPU time for an upload (user + system from /proc): steadier than MiB/s on a
 *     machine shared with other work;
 *   - the longest event-loop stall in pactum during each upload (it hashes in the request's pass:
 *     nothing else may wait long behind it), read from its /metrics
 *     (nodejs_eventloop_lag_max_seconds, which every scrape resets), less the monitor's 10 ms
 *     interval (see STALL_RESOLUTION_MS);
 *   - pactum's idle RSS and its peak over an upload and download of the object, and of a --big-gib
 *     one, read from the kernel for the production entry point (`node dist/pactum/main.js serve`);
 *     beside the idle figure, that of a minimal server on the same libraries with the same
 *     malloc arenas (targets/idle-stack.mjs): the floor pactum's own code stands on.
 * Goals: upload >= 0.95 of the bare server that hashes in the same pass (and >= 1.3 of the
 * reference), the longest stall < 20 ms; download >= 1.0 of the bare streamer and of the
 * reference; idle <= 75 MB 1 s after start, peak <= idle + 20 MB, the same within 10% for the big
 * object.
 *
 *   npx tsx scripts/bench/objects.ts [--rounds 3] [--size-mib 1024] [--big-gib 4] [--skip-big]
 *                                    [--reference http://127.0.0.1:8081/user/repo --reference-auth user:pass]
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cpuOf, fmt, median, record, rssOf, startTarget } from './lib.js';
import { SERVING_MALLOC_ARENAS } from '../../src/cli/serving-process.js';
import { startPactum, type Pactum } from './pactum-process.js';
import { actionsFor, batch, curl, makeFile, verify, type TestFile } from './transfers.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    'size-mib': { type: 'string', default: '1024' },
    'big-gib': { type: 'string', default: '4' },
    'skip-big': { type: 'boolean' },
    reference: { type: 'string' },
    'reference-auth': { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const MiB = 1024 ** 2;
const size = Number(values['size-mib']) * MiB;
const script = new URL('./targets/object-servers.ts', import.meta.url).href;
const rate = (bytes: number, ms: number) => bytes / (ms / 1000) / MiB;
const mb = (n: number) => `${fmt(n / 1e6)} MB`;

/** dd writing `bytes` of zeros with 1 MiB blocks and one fdatasync at the end; MiB/s. */
function dd(dir: string, bytes: number): number {
  const file = join(dir, 'dd');
  const started = performance.now();
  execFileSync('dd', ['if=/dev/zero', `of=${file}`, 'bs=1M', `count=${Math.ceil(bytes / MiB)}`, 'conv=fdatasync'], { stdio: 'ignore' });
  const ms = performance.now() - started;
  rmSync(file);
  return rate(Math.ceil(bytes / MiB) * MiB, ms);
}

/**
 * Any Git LFS server, driven as git-lfs drives it: a batch request, its action by curl, and after
 * an upload the verify request when the batch answer has one. The time is what the user waits
 * for: the batch request's, curl's own (connect to last byte) and the verify request's, added up.
 * `beforeTransfer` runs between the batch request and the transfer, outside the time: the peak
 * memory and the longest stall are read over the transfer alone (see signIn).
 */
async function lfsTransfer(lfs: string, auth: string, operation: 'upload' | 'download', f: TestFile, beforeTransfer: () => unknown = () => {}) {
  const { action, verify: verifyAction, ms: batchMs } = await actionsFor({ lfs, auth }, operation, f);
  await beforeTransfer();
  const r =
    operation === 'upload'
      ? await curl(action.href, 'PUT', { ...action.header, 'content-type': 'application/octet-stream' }, f.path)
      : await curl(action.href, 'GET', action.header);
  if (r.status !== 200 || (operation === 'download' && r.bytes !== f.size)) throw new Error(`${operation} at ${lfs} answered ${r.status} (${r.bytes} bytes)`);
  const verifyMs = operation === 'upload' && verifyAction ? await verify(verifyAction, f) : 0;
  lastRequestsMs = batchMs + verifyMs;
  return batchMs + r.ms + verifyMs;
}
/** The batch and verify requests' share of the last lfsTransfer's time, in ms. */
let lastRequestsMs = 0;

/**
 * Before each timed upload: `sync`, outside the time. The test file was just written, so its
 * pages are still dirty; the kernel writes them back 30 s after they were first dirtied
 * (vm.dirty_expire_centisecs) or as soon as the dirty pages pass the background threshold (10%
 * of the free memory: about 2 GiB on this machine, which the file and one 1 GiB upload reach
 * together). That writeback competes with the server's own writes and fsync in whichever
 * transfer is running then: it is the client's file being saved, no server's cost, and it landed
 * on whichever server happened to be measured at that moment. After `sync` nothing is dirty (the
 * file, a previous server's leftovers, other processes' files) and the file is still in the page
 * cache, so each server reads it equally fresh. The servers' order also alternates from round to
 * round, so neither is always the first after the file was written or right after the other.
 */
const settle = () => execFileSync('sync');

/**
 * A batch request for an object nobody stored, with the bench user's password: pactum checks it
 * with scrypt (32 MiB for about a tenth of a second on a libuv thread) and remembers it for a
 * minute. The transfers authenticate with a personal access token, as git-lfs users do, which
 * costs no scrypt; this check's own peak is printed beside the idle figure, measured here on a
 * fresh server. The transfers' peaks, and the upload's longest stall, are read over the PUT or
 * GET alone, after their batch request.
 */
async function signIn(p: Pactum) {
  await batch(p, 'download', [{ oid: '0'.repeat(64), size: 1 }]);
}

const referenceAuth = values['reference-auth'] ? `Basic ${Buffer.from(values['reference-auth']).toString('base64')}` : '';
const scratch = mkdtempSync(join(tmpdir(), 'bench-objects-'));
const METRICS_TOKEN = 'bench-metrics-token-0123456789';
/**
 * monitorEventLoopDelay (behind prom-client's lag metrics, and the bare servers' /stall) records
 * the whole interval between two of its timer's runs, not the delay beyond it: an idle process
 * records about 10 ms at a 10 ms resolution. A stall is what exceeds the interval.
 */
const STALL_RESOLUTION_MS = 10;
/**
 * CPU time the hypervisor gave other guests (steal, /proc/stat), in ms summed over the cores: a
 * stall that both pactum and the bare server show in the same round, beside steal, is the
 * machine's.
 */
const stealMs = () => Number(readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/)[8] ?? 0) * 10;
const stallOf = (longestIntervalMs: number) => Math.max(0, longestIntervalMs - STALL_RESOLUTION_MS);

/** pactum's longest event-loop stall since the previous call, in ms (each scrape resets it). */
async function longestStall(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const m = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text);
  if (!m) throw new Error('pactum /metrics has no nodejs_eventloop_lag_max_seconds');
  return stallOf(Number(m[1]) * 1000);
}

/** RSS of the minimal server on pactum's libraries (targets/idle-stack.mjs), 1 s after it listens. */
async function stackFloor(): Promise<number> {
  const child = spawn(process.execPath, [new URL('./targets/idle-stack.mjs', import.meta.url).pathname], {
    env: { ...process.env, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? SERVING_MALLOC_ARENAS },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  try {
    // It prints its URL once it listens; one that dies first fails the bench instead of hanging it.
    await Promise.race([once(child.stdout, 'data'), exited.then(([code]) => Promise.reject(new Error(`targets/idle-stack.mjs exited with ${code}`)))]);
    await new Promise((r) => setTimeout(r, 1000));
    return rssOf(child.pid!);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  }
}

const times = { dd: [] as number[], upBase: [] as number[], upHash: [] as number[], upPactum: [] as number[], upRef: [] as number[], downBase: [] as number[], downPactum: [] as number[], downRef: [] as number[] };
/** Server CPU seconds for one upload: pactum's over its batch request, PUT and verify, the bare hashing server's over its PUT. */
const cpu = { pactum: [] as number[], hashing: [] as number[] };
/** pactum's batch and verify requests in each upload's time, ms. */
const requestsMs: number[] = [];
const peaks: number[] = [];
const stalls: number[] = [];
const steals: number[] = [];
const baseStalls: number[] = [];

// The idle figure is pactum as configured by default (no metrics), 1 s after it listens.
// On the same server, the peak over its first password check: printed apart from the transfers'.
const { idle, signInPeak } = await (async () => {
  const fresh = await startPactum();
  await new Promise((r) => setTimeout(r, 1000));
  const rss = rssOf(fresh.pid);
  fresh.resetPeak();
  await signIn(fresh);
  const peak = fresh.peak();
  await fresh.stop();
  return { idle: rss, signInPeak: peak };
})();
// One pactum for every round, as production runs: warmed up by round 0 like the baselines. It
// records metrics, for the stall; the peaks are read against its own idle figure.
const p = await startPactum({ METRICS_TOKEN });
await new Promise((r) => setTimeout(r, 1000));
const idleMetered = rssOf(p.pid);
try {
  const floor = await stackFloor();
  for (let round = 0; round <= rounds; round++) {
    // A freshly written file each round, as a user pushes what they just committed (new bytes:
    // pactum keeps what it stored); the same file for every server (see settle).
    const f = await makeFile(size, `objects-r${round}`);
    settle();
    times.dd.push(dd(scratch, size));

    let uploadPeak = 0;
    const uploads = {
      bare: async () => {
        const bu = await startTarget(script, ['upload-baseline']);
        settle();
        times.upBase.push(rate(size, (await curl(bu.url, 'PUT', {}, f.path)).ms));
        await bu.stop();
      },
      hashing: async () => {
        const bh = await startTarget(script, ['upload-hashing']);
        await fetch(`${bh.url}/stall`);
        settle();
        const cpuFrom = cpuOf(bh.child.pid!);
        times.upHash.push(rate(size, (await curl(bh.url, 'PUT', {}, f.path)).ms));
        cpu.hashing.push(cpuOf(bh.child.pid!) - cpuFrom);
        baseStalls.push(stallOf(Number(await (await fetch(`${bh.url}/stall`)).text())));
        await bh.stop();
      },
      pactum: async () => {
        let stealFrom = 0;
        let scrapeCpu = 0; // the bench's own /metrics scrape, not the upload's
        const startWindow = async () => {
          p.resetPeak();
          const from = cpuOf(p.pid);
          await longestStall(p.url);
          scrapeCpu = cpuOf(p.pid) - from;
          stealFrom = stealMs();
        };
        settle();
        const cpuFrom = cpuOf(p.pid);
        times.upPactum.push(rate(size, await lfsTransfer(p.lfs, p.tokenAuth, 'upload', f, startWindow)));
        requestsMs.push(lastRequestsMs);
        cpu.pactum.push(cpuOf(p.pid) - cpuFrom - scrapeCpu);
        uploadPeak = p.peak();
        stalls.push(await longestStall(p.url));
        steals.push(stealMs() - stealFrom);
      },
    };
    const order = ['bare', 'hashing', 'pactum'] as const;
    for (const k of round % 2 ? [...order].reverse() : order) await uploads[k]();
    times.downPactum.push(rate(size, await lfsTransfer(p.lfs, p.tokenAuth, 'download', f, () => p.resetPeak())));
    peaks.push(Math.max(uploadPeak, p.peak()));

    const bd = await startTarget(script, ['download-baseline'], { BENCH_FILE: f.path });
    times.downBase.push(rate(size, (await curl(bd.url, 'GET', {})).ms));
    await bd.stop();

    if (values.reference) {
      settle();
      times.upRef.push(rate(size, await lfsTransfer(values.reference, referenceAuth, 'upload', f)));
      times.downRef.push(rate(size, await lfsTransfer(values.reference, referenceAuth, 'download', f)));
    }
    rmSync(f.path);
    const last = (k: keyof typeof times) => fmt(times[k].at(-1) ?? 0);
    console.log(
      `${round === 0 ? 'warm-up' : `round ${round}`} (uploads ${round % 2 ? 'pactum first' : 'bare first'}; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}): dd ${last('dd')} MiB/s; upload bare ${last('upBase')}, bare + SHA-256 ${last('upHash')} (CPU ${fmt(cpu.hashing.at(-1)!, 2)} s), pactum ${last('upPactum')} (CPU ${fmt(cpu.pactum.at(-1)!, 2)} s)${values.reference ? `, reference ${last('upRef')}` : ''}; ` +
        `download bare ${last('downBase')}, pactum ${last('downPactum')}${values.reference ? `, reference ${last('downRef')}` : ''} MiB/s; longest event-loop stall during the upload: pactum ${fmt(stalls.at(-1)!, 1)} ms (steal meanwhile ${fmt(steals.at(-1)!)} ms), bare + SHA-256 ${fmt(baseStalls.at(-1)!, 1)} ms; peak RSS ${mb(peaks.at(-1)!)}`,
    );
    if (round === 0) for (const list of [...Object.values(times), ...Object.values(cpu), requestsMs, peaks, stalls, steals, baseStalls]) list.length = 0;
  }

  let big: number | null = null;
  let bigUpload = 0;
  const bigGiB = Number(values['big-gib']);
  if (!values['skip-big']) {
    console.log(`preparing a ${bigGiB} GiB object…`);
    const f = await makeFile(bigGiB * 1024 * MiB, 'objects-big');
    await lfsTransfer(p.lfs, p.tokenAuth, 'upload', f, () => p.resetPeak());
    bigUpload = p.peak();
    await lfsTransfer(p.lfs, p.tokenAuth, 'download', f, () => p.resetPeak());
    big = Math.max(bigUpload, p.peak());
    rmSync(f.path);
  }

  const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, v.length ? median(v) : 0])) as Record<keyof typeof times, number>;
  const peak = median(peaks);
  const stall = Math.max(...stalls);
  const stallSteal = steals[stalls.indexOf(stall)] ?? 0;
  const baseStall = Math.max(...baseStalls);
  const label = `${fmt(size / MiB)} MiB`;
  const lines = [
    `disk              dd conv=fdatasync ${fmt(m.dd)} MiB/s; the bare upload server reaches ${fmt(m.upBase / m.dd, 2)} of it ${m.upBase / m.dd >= 0.8 ? '(>= 0.8: a fair baseline)' : '(< 0.8: the baseline is too slow, the upload ratio flatters pactum)'}`,
    `upload ${label}    bare ${fmt(m.upBase)} MiB/s   pactum ${fmt(m.upPactum)} MiB/s   ratio ${fmt(m.upPactum / m.upBase, 2)} (hash checked, fsynced; the bare server checks nothing)${values.reference ? `   reference ${fmt(m.upRef)} MiB/s: pactum ${fmt(m.upPactum / m.upRef, 2)}× (goal >= 1.3)` : ''}`,
    `upload ${label}    bare + SHA-256 in the same pass ${fmt(m.upHash)} MiB/s   pactum ${fmt(m.upPactum / m.upHash, 2)} of it (goal >= 0.95; pactum's time from the batch request's start to the verify's end, with a personal access token: the batch and verify requests ${fmt(median(requestsMs), 1)} ms of it)`,
    `upload ${label}    server CPU for one upload: pactum ${fmt(median(cpu.pactum), 2)} s (batch, PUT, verify), bare + SHA-256 ${fmt(median(cpu.hashing), 2)} s: ${fmt(median(cpu.pactum) / median(cpu.hashing), 2)} of it`,
    `upload ${label}    longest event-loop stall during an upload ${fmt(stall, 1)} ms (goal < 20; steal during that upload ${fmt(stallSteal)} ms; the bare server hashing in the same pass: ${fmt(baseStall, 1)} ms)`,
    `download ${label}  bare ${fmt(m.downBase)} MiB/s   pactum ${fmt(m.downPactum)} MiB/s   ratio ${fmt(m.downPactum / m.downBase, 2)} (goal >= 1.0)${values.reference ? `   reference ${fmt(m.downRef)} MiB/s: pactum ${fmt(m.downPactum / m.downRef, 2)}× (goal >= 1.0)` : ''}`,
    `RSS               idle ${mb(idle)} (goal <= 75 MB; with METRICS_TOKEN set ${mb(idleMetered)}; a minimal unbundled server on the same libraries: ${mb(floor)}; over its first password check ${mb(signInPeak)} = idle + ${mb(signInPeak - idle)})   peak over ${label} up+down ${mb(peak)} = idle + ${mb(peak - idleMetered)} (goal <= idle + 20 MB)${big !== null ? `   over ${bigGiB} GiB ${mb(big)} (the upload alone ${mb(bigUpload)}; ${fmt((100 * (big - peak)) / peak, 1)}% apart; goal within 10%)` : ''}`,
  ];
  console.log(`\nmedians of ${rounds} rounds\n${lines.join('\n')}`);
  record(
    { bench: 'objects', measure: 'dd conv=fdatasync', value: m.dd, unit: 'MiB/s', ratio: m.upBase / m.dd, goal: 'bare upload >= 0.8 of dd', met: m.upBase / m.dd >= 0.8 },
    { bench: 'objects', measure: `upload ${label}`, value: m.upPactum, unit: 'MiB/s', baseline: { name: 'bare node:http + fsync', value: m.upBase }, ratio: m.upPactum / m.upBase },
    { bench: 'objects', measure: `upload ${label} against a bare server that also hashes`, value: m.upPactum, unit: 'MiB/s', baseline: { name: 'bare node:http + SHA-256 + fsync', value: m.upHash }, ratio: m.upPactum / m.upHash, goal: '>= 0.95', met: m.upPactum / m.upHash >= 0.95 },
    { bench: 'objects', measure: `server CPU for an upload of ${label}`, value: median(cpu.pactum), unit: 's', baseline: { name: 'bare node:http + SHA-256 + fsync', value: median(cpu.hashing) }, ratio: median(cpu.pactum) / median(cpu.hashing) },
    { bench: 'objects', measure: `longest event-loop stall during an upload of ${label}`, value: stall, unit: 'ms', baseline: { name: 'bare node:http + SHA-256 + fsync', value: baseStall }, goal: '< 20', met: stall < 20 },
    { bench: 'objects', measure: `download ${label}`, value: m.downPactum, unit: 'MiB/s', baseline: { name: 'bare node:http streamer', value: m.downBase }, ratio: m.downPactum / m.downBase, goal: '>= 1.0', met: m.downPactum / m.downBase >= 1 },
    { bench: 'objects', measure: 'idle RSS', value: idle / 1e6, unit: 'MB', baseline: { name: 'minimal Koa + knex/better-sqlite3 + pino + jose server', value: floor / 1e6 }, goal: '<= 75', met: idle <= 75e6 },
    { bench: 'objects', measure: 'peak RSS over the first password check (scrypt)', value: signInPeak / 1e6, unit: 'MB', baseline: { name: 'idle', value: idle / 1e6 } },
    { bench: 'objects', measure: `peak RSS over ${label} up+down`, value: peak / 1e6, unit: 'MB', goal: `<= idle + 20 MB`, met: peak - idleMetered <= 20e6 },
    ...(big !== null ? [{ bench: 'objects', measure: `peak RSS over ${bigGiB} GiB up+down`, value: big / 1e6, unit: 'MB', goal: 'within 10% of the smaller', met: Math.abs(big - peak) <= 0.1 * peak }] : []),
    ...(values.reference
      ? [
          { bench: 'objects', measure: `upload ${label} vs reference`, value: m.upPactum, unit: 'MiB/s', baseline: { name: values.reference, value: m.upRef }, ratio: m.upPactum / m.upRef, goal: '>= 1.3', met: m.upPactum / m.upRef >= 1.3 },
          { bench: 'objects', measure: `download ${label} vs reference`, value: m.downPactum, unit: 'MiB/s', baseline: { name: values.reference, value: m.downRef }, ratio: m.downPactum / m.downRef, goal: '>= 1.0', met: m.downPactum / m.downRef >= 1 },
        ]
      : []),
  );
} finally {
  await p.stop();
  rmSync(scratch, { recursive: true, force: true });
}
