/**
 * Connections and password checks on a shared service: what one party's flood costs everyone
 * else. Each attack prints what a bystander saw: /healthz probes (failures, p99), another org's
 * 1 kB LFS download (batch and GET, each on a fresh connection) against its idle time, and the
 * server's resident memory (peak against idle) and open descriptors.
 *
 *   - one anonymous client opens thousands of connections that send a header line every 5 s,
 *     and opens them again as they close (the server runs with a descriptor limit of 4096, so a
 *     flood this machine can send reaches it);
 *   - the same from twelve addresses, past the port's connection cap: /healthz on the main port
 *     and on METRICS_PORT;
 *   - sixty correct sign-ins at once, from sixty addresses.
 *
 *   make build && npx tsx scripts/security-replay.ts dist shared-service-connections
 */
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { LFS_JSON, basic, report, withPactum, type Action, type BatchAnswer } from './harness.js';
import { freePort } from '../lib/free-port.js';

const DESCRIPTOR_LIMIT = 4096;
const LINE_EVERY_MS = 5000;
const BYSTANDER = '127.0.0.9';

interface Answer { status: number; body: Buffer; ms: number }

/** One request on a fresh connection from `from`; an error or a timeout is status 0. */
function send(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer; from?: string; timeoutMs?: number } = {}): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const done = (status: number, body = Buffer.alloc(0)) => resolve({ status, body, ms: performance.now() - t0 });
    const req = request(url, { method: opts.method ?? 'GET', headers: { ...opts.headers, ...(opts.body ? { 'content-length': String(Buffer.byteLength(opts.body)) } : {}) }, localAddress: opts.from ?? '127.0.0.1', agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(res.statusCode!, Buffer.concat(chunks)));
      res.on('error', () => done(0));
    });
    req.setTimeout(opts.timeoutMs ?? 5000, () => req.destroy());
    req.on('error', () => done(0));
    req.end(opts.body);
  });
}

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};
const median = (xs: number[]) => percentile(xs, 50);
const ms = (x: number) => (x >= 100 ? `${Math.round(x)} ms` : `${x.toFixed(1)} ms`);

/** `count` /healthz probes, one started every `everyMs` on a fresh connection, each given 2 s. */
async function probe(url: string, count: number, everyMs: number) {
  const answers: Promise<Answer>[] = [];
  for (let i = 0; i < count; i++) {
    answers.push(send(`${url}/healthz`, { timeoutMs: 2000 }));
    await sleep(everyMs);
  }
  const all = await Promise.all(answers);
  const failed = all.filter((a) => a.status !== 200).length;
  const times = all.filter((a) => a.status === 200).map((a) => a.ms);
  return { failed, count, p99: times.length ? percentile(times, 99) : NaN };
}

const healthLine = (h: { failed: number; count: number; p99: number }, where = '/healthz') => `${where} ${h.failed}/${h.count} failed, p99 ${Number.isNaN(h.p99) ? '-' : ms(h.p99)}${h.failed || h.p99 > 100 ? ' (hole)' : ''}`;

/** The server's resident memory (MB) and open descriptors, sampled until stopped: idle, then the peaks. */
function watchProcess(pid: number) {
  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  const fds = () => {
    try {
      return readdirSync(`/proc/${pid}/fd`).length;
    } catch {
      return 0;
    }
  };
  const idle = { rss: rss(), fds: fds() };
  const peak = { ...idle };
  const timer = setInterval(() => {
    peak.rss = Math.max(peak.rss, rss());
    peak.fds = Math.max(peak.fds, fds());
  }, 100);
  return {
    idle,
    stop() {
      clearInterval(timer);
      return { ...peak, rssLine: `RSS idle ${Math.round(idle.rss)} MB, peak idle + ${Math.round(peak.rss - idle.rss)} MB${peak.rss - idle.rss > 200 ? ' (hole)' : ''}` };
    },
  };
}

/**
 * Slowloris from `addresses`, `perAddress` connections each: a request line, then a header line
 * every LINE_EVERY_MS; a connection the server closes is opened again LINE_EVERY_MS later.
 */
function slowloris(port: number, addresses: string[], perAddress: number) {
  let stopped = false;
  const open = new Set<Socket>();
  let opened = 0;
  const one = (from: string) => {
    if (stopped) return;
    opened++;
    const socket = connect({ port, host: '127.0.0.1', localAddress: from });
    let lines: NodeJS.Timeout | undefined;
    open.add(socket);
    socket.on('connect', () => {
      socket.write('GET / HTTP/1.1\r\nHost: pactum\r\n');
      lines = setInterval(() => socket.write('X-Slow: 1\r\n'), LINE_EVERY_MS);
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(lines);
      open.delete(socket);
      if (!stopped) setTimeout(() => one(from), LINE_EVERY_MS).unref();
    });
  };
  // Opened in waves, so the listen backlog is not what refuses them.
  const ramp = (async () => {
    for (let i = 0; i < perAddress && !stopped; i += 50) {
      for (const from of addresses) for (let k = i; k < Math.min(perAddress, i + 50); k++) one(from);
      await sleep(20);
    }
  })();
  return {
    ramp,
    opened: () => opened,
    stop() {
      stopped = true;
      for (const s of open) s.destroy();
    },
  };
}

/** An org with a member, a repository and a 1 kB object, for a bystander to download. */
function bystanderSetUp(run: (args: string[], input?: string) => string) {
  run(['org', 'create', 'globex']);
  run(['user', 'create', 'gil', '--org', 'globex', '--role', 'member', '--password-stdin'], 'gil-password-123\n');
  run(['repo', 'create', 'globex/assets']);
  run(['repo', 'grant', 'globex/assets', 'gil', 'write']);
  return basic('gil', run(['user', 'token', 'gil', '--name', 'laptop']).split('\n')[0]!);
}

async function uploadKilobyte(url: string, auth: string) {
  const body = randomBytes(1024);
  const oid = createHash('sha256').update(body).digest('hex');
  const lfs = `${url}/globex/assets.git/info/lfs/objects/batch`;
  const headers = { accept: LFS_JSON, 'content-type': LFS_JSON, authorization: auth };
  const up = await send(lfs, { method: 'POST', headers, body: JSON.stringify({ operation: 'upload', transfers: ['basic'], ref: { name: 'refs/heads/main' }, objects: [{ oid, size: body.length }] }) });
  const action = (JSON.parse(up.body.toString()) as BatchAnswer).objects[0]!.actions!.upload!;
  await send(action.href, { method: 'PUT', headers: { ...action.header, 'content-type': 'application/octet-stream' }, body });
  /** The download as git-lfs makes it: the batch, then the GET of its href; ms, or null when it failed. */
  return async (): Promise<number | null> => {
    const t0 = performance.now();
    const b = await send(lfs, { method: 'POST', headers, body: JSON.stringify({ operation: 'download', ref: { name: 'refs/heads/main' }, objects: [{ oid, size: body.length }] }), from: BYSTANDER, timeoutMs: 30_000 });
    if (b.status !== 200) return null;
    const a: Action | undefined = (JSON.parse(b.body.toString()) as BatchAnswer).objects[0]?.actions?.download;
    if (!a) return null;
    const got = await send(a.href, { headers: a.header, from: BYSTANDER, timeoutMs: 30_000 });
    return got.status === 200 && got.body.length === body.length ? performance.now() - t0 : null;
  };
}

/**
 * A download started every `everyMs` until `work` settles (at least `least`), so each samples a
 * moment of the attack whatever the others took: their times, and how many failed.
 */
async function downloadsDuring(download: () => Promise<number | null>, work: Promise<unknown>, least = 5, everyMs = 250) {
  let done = false;
  void work.finally(() => (done = true));
  const started: Promise<number | null>[] = [];
  while (!done || started.length < least) {
    started.push(download());
    await sleep(everyMs);
  }
  const all = await Promise.all(started);
  return { times: all.filter((t): t is number => t !== null), failed: all.filter((t) => t === null).length };
}

const downloadLine = (idle: number[], under: { times: number[]; failed: number }) => {
  const ratio = median(under.times) / median(idle);
  const all = under.times.length + under.failed;
  return `1 kB download idle ${ms(median(idle))}, under it median ${ms(median(under.times))} (${ratio.toFixed(1)}×${ratio > 2 ? ', hole' : ''}) p90 ${ms(percentile(under.times, 90))} max ${ms(Math.max(...under.times))}${under.failed ? `, ${under.failed} of ${all} failed (hole)` : ` (${all} downloads)`}`;
};

/** One client's flood, then twelve addresses' past the port's cap. */
export async function connectionFloods(dist: string) {
  const metricsPort = await freePort();
  await withPactum(dist, { METRICS_PORT: String(metricsPort) }, async ({ run, start }) => {
    const auth = bystanderSetUp(run);
    const { url, child } = await start({ descriptorLimit: DESCRIPTOR_LIMIT });
    const port = Number(new URL(url).port);
    const download = await uploadKilobyte(url, auth);
    const idleDownloads: number[] = [];
    for (let i = 0; i < 7; i++) idleDownloads.push((await download()) ?? NaN);
    const idleHealth = await probe(url, 30, 50);

    const watch = watchProcess(child.pid!);
    const flood = slowloris(port, ['127.0.0.2'], 6000);
    await flood.ramp;
    await sleep(2000);
    const health = probe(url, 50, 200);
    const under = await downloadsDuring(download, health);
    const seen = watch.stop();
    report('one client: 6,000 connections, a header line every 5 s, reopened', `${healthLine(await health)} (idle p99 ${ms(idleHealth.p99)}); ${downloadLine(idleDownloads, under)}`);
    report('  what the server held', `${seen.fds} descriptors at most of ${DESCRIPTOR_LIMIT}${seen.fds >= DESCRIPTOR_LIMIT - 16 ? ' (hole: at its limit)' : ''}; ${seen.rssLine}; ${flood.opened()} connections opened`);
    flood.stop();
    await sleep(1000);

    const many = slowloris(port, Array.from({ length: 12 }, (_, i) => `127.0.1.${i + 1}`), 500);
    await many.ramp;
    await sleep(2000);
    const main = probe(url, 30, 200);
    const side = probe(`http://127.0.0.1:${metricsPort}`, 30, 200);
    const [onMain, onSide] = [await main, await side];
    report('12 addresses × 500 connections, past the port\'s cap', `main port /healthz ${onMain.failed}/${onMain.count} failed; ${healthLine(onSide, 'METRICS_PORT /healthz')}`);
    many.stop();
  });
}

/** Sixty correct sign-ins at once, from sixty addresses. */
export async function signInBurst(dist: string) {
  await withPactum(dist, {}, async ({ run, start }) => {
    const auth = bystanderSetUp(run);
    run(['org', 'create', 'acme']);
    run(['user', 'create', 'ada', '--org', 'acme', '--role', 'member', '--password-stdin'], 'ada-password-123\n');
    const { url, child } = await start();
    const download = await uploadKilobyte(url, auth);
    const signIn = (from: string) =>
      send(`${url}/api/v1/auth/login`, { method: 'POST', from, timeoutMs: 60_000, headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ username: 'ada', password: 'ada-password-123' }) });
    await signIn('127.0.2.200'); // the first check's own allocation is not the burst's
    const idleDownloads: number[] = [];
    for (let i = 0; i < 7; i++) idleDownloads.push((await download()) ?? NaN);

    const watch = watchProcess(child.pid!);
    const t0 = performance.now();
    const burst = Promise.all(Array.from({ length: 60 }, (_, i) => signIn(`127.0.2.${i + 1}`)));
    const health = probe(url, 40, 100);
    const under = await downloadsDuring(download, burst);
    const answers = await burst;
    const took = performance.now() - t0;
    const seen = watch.stop();
    const statuses = [...new Set(answers.map((a) => a.status))].map((s) => `${answers.filter((a) => a.status === s).length}×${s || 'no answer'}`).join(', ');
    report('60 correct sign-ins at once (60 addresses)', `${downloadLine(idleDownloads, under)}; ${healthLine(await health)}`);
    report('  the sign-ins, and what the server held', `${statuses} in ${(took / 1000).toFixed(1)} s; ${seen.rssLine}`);
  });
}

export default async function sharedServiceConnections(dist: string) {
  await connectionFloods(dist);
  await signInBurst(dist);
}
