/**
 * Object transfer throughput and memory, each figure side by side in one run:
 *   - the disk itself: `dd if=/dev/zero bs=1M conv=fdatasync` into the same directory;
 *   - (every transfer made by curl, as in the issue's figures)
 *   - basic upload through pactum (SHA-256 checked while streaming, fsync, atomic rename) against a
 *     bare node:http server that writes the body to a file with 1 MiB writes and fsyncs it, which
 *     must itself reach 0.8 of dd (else the comparison is flattered and the script says so);
 *     and, printed beside it, the same bare server hashing each chunk with SHA-256 in the same
 *     pass (pactum must check the hash; the bare server does not: this shows what that costs);
 *   - download through pactum against a bare node:http server streaming the same file with 1 MiB
 *     reads;
 *   - optionally any other Git LFS server (--reference, e.g. lfs-test-server), driven the same way
 *     as pactum: a batch request, then the action's href;
 *   - pactum's idle RSS and its peak over an upload and download of the object, and of a --big-gib
 *     one, read from the kernel for the production entry point (`node dist/src/cli/main.js serve`).
 * Goals: upload >= 0.75 of the bare server, download >= 0.9 of the bare streamer and >= 1.0 of the
 * reference; peak <= idle + 25 MB, the same within 10% for the big object; idle <= 80 MB.
 *
 *   npx tsx scripts/bench/objects.ts [--rounds 3] [--size-mib 1024] [--big-gib 4] [--skip-big]
 *                                    [--reference http://127.0.0.1:8081/user/repo --reference-auth user:pass]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fmt, median, record, rssOf, startTarget } from './lib.js';
import { startPactum, type Pactum } from './pactum-process.js';
import { actionFor, curl, makeFile, type TestFile } from './transfers.js';

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

/** Any Git LFS server, driven as a client would: batch, then the action. */
async function lfsTransfer(lfs: string, auth: string, operation: 'upload' | 'download', f: TestFile) {
  const p = { lfs, auth } as Pactum;
  const action = await actionFor(p, operation, f);
  const r =
    operation === 'upload'
      ? await curl(action.href, 'PUT', { ...action.header, 'content-type': 'application/octet-stream' }, f.path)
      : await curl(action.href, 'GET', action.header);
  if (r.status !== 200 || (operation === 'download' && r.bytes !== f.size)) throw new Error(`${operation} at ${lfs} answered ${r.status} (${r.bytes} bytes)`);
  return r.ms;
}

const referenceAuth = values['reference-auth'] ? `Basic ${Buffer.from(values['reference-auth']).toString('base64')}` : '';
const scratch = mkdtempSync(join(tmpdir(), 'bench-objects-'));
const times = { dd: [] as number[], upBase: [] as number[], upHash: [] as number[], upPactum: [] as number[], upRef: [] as number[], downBase: [] as number[], downPactum: [] as number[], downRef: [] as number[] };
const peaks: number[] = [];

// One pactum for every round, as production runs: warmed up by round 0 like the baselines.
const p = await startPactum();
await new Promise((r) => setTimeout(r, 1000));
const idle = rssOf(p.pid);
try {
  for (let round = 0; round <= rounds; round++) {
    const f = await makeFile(size, `objects-r${round}`); // new bytes each round: pactum keeps what it stored
    times.dd.push(dd(scratch, size));

    const bu = await startTarget(script, ['upload-baseline']);
    times.upBase.push(rate(size, (await curl(bu.url, 'PUT', {}, f.path)).ms));
    await bu.stop();
    const bh = await startTarget(script, ['upload-hashing']);
    times.upHash.push(rate(size, (await curl(bh.url, 'PUT', {}, f.path)).ms));
    await bh.stop();

    p.resetPeak();
    times.upPactum.push(rate(size, await lfsTransfer(p.lfs, p.auth, 'upload', f)));
    times.downPactum.push(rate(size, await lfsTransfer(p.lfs, p.auth, 'download', f)));
    peaks.push(p.peak());

    const bd = await startTarget(script, ['download-baseline'], { BENCH_FILE: f.path });
    times.downBase.push(rate(size, (await curl(bd.url, 'GET', {})).ms));
    await bd.stop();

    if (values.reference) {
      times.upRef.push(rate(size, await lfsTransfer(values.reference, referenceAuth, 'upload', f)));
      times.downRef.push(rate(size, await lfsTransfer(values.reference, referenceAuth, 'download', f)));
    }
    rmSync(f.path);
    const last = (k: keyof typeof times) => fmt(times[k].at(-1) ?? 0);
    console.log(
      `${round === 0 ? 'warm-up' : `round ${round}`}: dd ${last('dd')} MiB/s; upload bare ${last('upBase')}, bare + SHA-256 ${last('upHash')}, pactum ${last('upPactum')}${values.reference ? `, reference ${last('upRef')}` : ''}; ` +
        `download bare ${last('downBase')}, pactum ${last('downPactum')}${values.reference ? `, reference ${last('downRef')}` : ''} MiB/s; peak RSS ${mb(peaks.at(-1)!)}`,
    );
    if (round === 0) for (const list of [...Object.values(times), peaks]) list.length = 0;
  }

  let big: number | null = null;
  const bigGiB = Number(values['big-gib']);
  if (!values['skip-big']) {
    console.log(`preparing a ${bigGiB} GiB object…`);
    const f = await makeFile(bigGiB * 1024 * MiB, 'objects-big');
    p.resetPeak();
    await lfsTransfer(p.lfs, p.auth, 'upload', f);
    await lfsTransfer(p.lfs, p.auth, 'download', f);
    big = p.peak();
    rmSync(f.path);
  }

  const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, v.length ? median(v) : 0])) as Record<keyof typeof times, number>;
  const peak = median(peaks);
  const label = `${fmt(size / MiB)} MiB`;
  const lines = [
    `disk              dd conv=fdatasync ${fmt(m.dd)} MiB/s; the bare upload server reaches ${fmt(m.upBase / m.dd, 2)} of it ${m.upBase / m.dd >= 0.8 ? '(>= 0.8: a fair baseline)' : '(< 0.8: the baseline is too slow, the upload ratio flatters pactum)'}`,
    `upload ${label}    bare ${fmt(m.upBase)} MiB/s   pactum ${fmt(m.upPactum)} MiB/s   ratio ${fmt(m.upPactum / m.upBase, 2)} (goal >= 0.75; hash checked, fsynced)${values.reference ? `   reference ${fmt(m.upRef)} MiB/s: pactum ${fmt(m.upPactum / m.upRef, 2)}×` : ''}`,
    `upload ${label}    bare + SHA-256 in the same pass ${fmt(m.upHash)} MiB/s (what hashing costs a bare server here)   pactum ${fmt(m.upPactum / m.upHash, 2)} of it`,
    `download ${label}  bare ${fmt(m.downBase)} MiB/s   pactum ${fmt(m.downPactum)} MiB/s   ratio ${fmt(m.downPactum / m.downBase, 2)} (goal >= 0.90)${values.reference ? `   reference ${fmt(m.downRef)} MiB/s: pactum ${fmt(m.downPactum / m.downRef, 2)}× (goal >= 1.0)` : ''}`,
    `RSS               idle ${mb(idle)} (goal <= 80 MB)   peak over ${label} up+down ${mb(peak)} = idle + ${mb(peak - idle)} (goal <= idle + 25 MB)${big !== null ? `   over ${bigGiB} GiB ${mb(big)} (${fmt((100 * (big - peak)) / peak, 1)}% apart; goal within 10%)` : ''}`,
  ];
  console.log(`\nmedians of ${rounds} rounds\n${lines.join('\n')}`);
  record(
    { bench: 'objects', measure: 'dd conv=fdatasync', value: m.dd, unit: 'MiB/s', ratio: m.upBase / m.dd, goal: 'bare upload >= 0.8 of dd', met: m.upBase / m.dd >= 0.8 },
    { bench: 'objects', measure: `upload ${label}`, value: m.upPactum, unit: 'MiB/s', baseline: { name: 'bare node:http + fsync', value: m.upBase }, ratio: m.upPactum / m.upBase, goal: '>= 0.75', met: m.upPactum / m.upBase >= 0.75 },
    { bench: 'objects', measure: `upload ${label} against a bare server that also hashes`, value: m.upPactum, unit: 'MiB/s', baseline: { name: 'bare node:http + SHA-256 + fsync', value: m.upHash }, ratio: m.upPactum / m.upHash },
    { bench: 'objects', measure: `download ${label}`, value: m.downPactum, unit: 'MiB/s', baseline: { name: 'bare node:http streamer', value: m.downBase }, ratio: m.downPactum / m.downBase, goal: '>= 0.90', met: m.downPactum / m.downBase >= 0.9 },
    { bench: 'objects', measure: 'idle RSS', value: idle / 1e6, unit: 'MB', goal: '<= 80', met: idle <= 80e6 },
    { bench: 'objects', measure: `peak RSS over ${label} up+down`, value: peak / 1e6, unit: 'MB', goal: `<= idle + 25 MB`, met: peak - idle <= 25e6 },
    ...(big !== null ? [{ bench: 'objects', measure: `peak RSS over ${bigGiB} GiB up+down`, value: big / 1e6, unit: 'MB', goal: 'within 10% of the smaller', met: Math.abs(big - peak) <= 0.1 * peak }] : []),
    ...(values.reference
      ? [
          { bench: 'objects', measure: `upload ${label} vs reference`, value: m.upPactum, unit: 'MiB/s', baseline: { name: values.reference, value: m.upRef }, ratio: m.upPactum / m.upRef },
          { bench: 'objects', measure: `download ${label} vs reference`, value: m.downPactum, unit: 'MiB/s', baseline: { name: values.reference, value: m.downRef }, ratio: m.downPactum / m.downRef, goal: '>= 1.0', met: m.downPactum / m.downRef >= 1 },
        ]
      : []),
  );
} finally {
  await p.stop();
  rmSync(scratch, { recursive: true, force: true });
}
