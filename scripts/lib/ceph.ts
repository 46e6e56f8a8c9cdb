/**
 * A throwaway single-node Ceph cluster with the RGW S3 gateway, from Debian's packages
 * (ceph-mon, ceph-osd, radosgw, ceph-common): one monitor, one OSD on memstore (objects in RAM),
 * one or more gateways, everything under one scratch directory and on free ports. The tests'
 * S3 passes and the S3 benchmark run against it; no mgr is needed for S3.
 *
 * The daemons fork into the background, so each one's pid is read from its pid file and every
 * one is stopped by pid (and waited for) at the end.
 */
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';
import { alive } from './processes.js';

const run = promisify(execFile);

/** The Ceph programs this needs, all from Debian's packages. */
const PROGRAMS = ['monmaptool', 'ceph-mon', 'ceph-osd', 'radosgw', 'radosgw-admin', 'ceph'] as const;

/** Whether the Ceph packages are installed (else the tests fall back to s3rver). */
export const cephInstalled = () => PROGRAMS.every((p) => spawnSync('sh', ['-c', `command -v ${p}`]).status === 0);

/** The installed Ceph's version, e.g. "16.2.15", or null. */
export function cephVersion(): string | null {
  const out = spawnSync('ceph', ['--version'], { encoding: 'utf8' });
  return /ceph version (\S+)/.exec(out.stdout ?? '')?.[1] ?? null;
}

export interface Gateway {
  /** http://127.0.0.1:<port> */
  endpoint: string;
  pid: number;
  /** Kills the gateway (SIGKILL when `hard`) and waits until it is gone. */
  stop(hard?: boolean): Promise<void>;
}

export interface CephCluster {
  dir: string;
  /** The cluster's ceph.conf: what another process needs to start a gateway of its own (startGateway). */
  conf: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The first gateway, started with the cluster. */
  gateway: Gateway;
  /** Stops every daemon the cluster started and removes its directory. */
  stop(): Promise<void>;
}


async function stopPid(pid: number, hard = false) {
  try {
    process.kill(pid, hard ? 'SIGKILL' : 'SIGTERM');
  } catch {
    return; // gone already
  }
  for (let i = 0; i < 200 && alive(pid); i++) await sleep(50);
  if (alive(pid)) {
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 100 && alive(pid); i++) await sleep(50);
  }
}

/** The pid a daemon wrote to its pid file once it had forked. */
async function pidFrom(file: string, what: string, timeoutMs = 20_000): Promise<number> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const pid = existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : 0;
    if (pid > 0) return pid;
    await sleep(100);
  }
  throw new Error(`${what} wrote no pid file (${file})`);
}

/** Polls GET / until the gateway answers (any HTTP status means it serves). */
async function waitForHttp(endpoint: string, what: string, pid: number, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (!alive(pid)) throw new Error(`${what} exited while starting`);
    try {
      const res = await fetch(endpoint, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      return;
    } catch {
      await sleep(250);
    }
  }
  throw new Error(`${what} did not answer at ${endpoint} within ${timeoutMs / 1000} s`);
}

/**
 * Starts a gateway of the cluster whose ceph.conf is `conf`, on a free port: a second gateway
 * lets a test kill and restart "the S3 server" without disturbing others using the first.
 */
export async function startGateway(conf: string, name = `g${randomBytes(3).toString('hex')}`, port?: number): Promise<Gateway> {
  const dir = join(conf, '..');
  port ??= await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const pidFile = join(dir, `rgw.${name}.pid`);
  rmSync(pidFile, { force: true });
  mkdirSync(join(dir, `rgw.${name}`), { recursive: true });
  await run('radosgw', [
    '-c', conf, '-n', `client.rgw.${name}`,
    '--rgw-frontends', `beast endpoint=127.0.0.1:${port}`,
    '--rgw-data', join(dir, `rgw.${name}`),
    '--pid-file', pidFile,
    '--log-file', join(dir, `rgw.${name}.log`),
  ]);
  const pid = await pidFrom(pidFile, `radosgw ${name}`);
  try {
    await waitForHttp(endpoint, `radosgw ${name}`, pid);
  } catch (err) {
    await stopPid(pid, true);
    throw err;
  }
  return { endpoint, pid, stop: (hard) => stopPid(pid, hard) };
}

/** One attempt at starting the cluster; on failure everything it started is stopped. */
async function startOnce(memBytes: number): Promise<CephCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'pactum-ceph-'));
  const conf = join(dir, 'ceph.conf');
  const pids: number[] = [];
  const gateways: Gateway[] = [];
  const fsid = randomUUID();
  const monPort = await freePort();
  writeFileSync(conf, [
    '[global]',
    `fsid = ${fsid}`,
    `mon host = 127.0.0.1:${monPort}`,
    'auth cluster required = none',
    'auth service required = none',
    'auth client required = none',
    'osd pool default size = 1',
    'osd pool default min size = 1',
    'osd crush chooseleaf type = 0',
    'mon allow pool size one = true',
    'mon allow pool delete = true',
    'ms bind ipv6 = false',
    `run dir = ${dir}/run`,
    `log file = ${dir}/$name.log`,
    `admin socket = ${dir}/run/$name.asok`,
    `pid file = ${dir}/$name.pid`,
    // A small test cluster: fewer placement groups than the default, which a one-OSD cluster caps.
    'osd pool default pg num = 8',
    'osd pool default pgp num = 8',
    'mon max pg per osd = 1000',
    // Space of deleted objects comes back in seconds, not after RGW's default two hours: a
    // memstore OSD that fills up blocks every write (a benchmark that deletes as it goes hung so).
    'rgw gc obj min wait = 0',
    'rgw gc processor period = 5',
    '',
    '[mon.a]',
    `mon data = ${dir}/mon`,
    'public addr = 127.0.0.1',
    '',
    '[osd.0]',
    `osd data = ${dir}/osd`,
    'osd objectstore = memstore',
    `memstore device bytes = ${memBytes}`,
    '',
  ].join('\n'));
  mkdirSync(join(dir, 'run'));
  mkdirSync(join(dir, 'mon'));
  mkdirSync(join(dir, 'osd'));
  const ceph = (...args: string[]) => run('ceph', ['-c', conf, '--connect-timeout', '20', ...args]);
  // The daemons outlive a process that dies without stopping them: kill them when this one exits.
  const killAll = () => {
    for (const pid of [...gateways.map((g) => g.pid), ...pids]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  };
  process.once('exit', killAll);
  try {
    await run('monmaptool', ['--create', '--fsid', fsid, '--addv', 'a', `[v1:127.0.0.1:${monPort}]`, join(dir, 'monmap')]);
    await run('ceph-mon', ['-c', conf, '--mkfs', '-i', 'a', '--monmap', join(dir, 'monmap')]);
    await run('ceph-mon', ['-c', conf, '-i', 'a']);
    pids.push(await pidFrom(join(dir, 'mon.a.pid'), 'ceph-mon'));
    await ceph('osd', 'create');
    await run('ceph-osd', ['-c', conf, '-i', '0', '--mkfs']);
    await ceph('osd', 'crush', 'add-bucket', 'localhost', 'host');
    await ceph('osd', 'crush', 'move', 'localhost', 'root=default');
    await ceph('osd', 'crush', 'add', 'osd.0', '1.0', 'host=localhost');
    await run('ceph-osd', ['-c', conf, '-i', '0']);
    pids.push(await pidFrom(join(dir, 'osd.0.pid'), 'ceph-osd'));
    gateways.push(await startGateway(conf, 'a'));
    const accessKeyId = `PACTUM${randomBytes(6).toString('hex').toUpperCase()}`;
    const secretAccessKey = randomBytes(20).toString('hex');
    await run('radosgw-admin', ['-c', conf, 'user', 'create', '--uid=pactum', '--display-name=pactum', `--access-key=${accessKeyId}`, `--secret=${secretAccessKey}`]);
    return {
      dir,
      conf,
      accessKeyId,
      secretAccessKey,
      gateway: gateways[0]!,
      async stop() {
        for (const g of gateways) await g.stop();
        // Gateways started by other processes (startGateway) wrote their pid files here too.
        for (const f of spawnSync('sh', ['-c', `ls ${dir}/rgw.*.pid 2>/dev/null`], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)) {
          const pid = Number(readFileSync(f, 'utf8').trim());
          if (pid > 0) await stopPid(pid);
        }
        for (const pid of pids.reverse()) await stopPid(pid);
        process.off('exit', killAll);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    process.off('exit', killAll);
    for (const g of gateways) await g.stop(true);
    for (const pid of pids.reverse()) await stopPid(pid, true);
    const e = err as Error & { stderr?: string };
    const detail = e.stderr?.trim().split('\n').slice(-3).join(' | ');
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`${e.message.split('\n')[0]}${detail ? `: ${detail}` : ''}`, { cause: err });
  }
}

/**
 * Starts a cluster whose OSD holds up to `memBytes` in RAM. A first start is sometimes refused
 * by the monitor (the OSD's "wrong fsid"): each attempt is a new cluster in a new directory.
 */
export async function startCeph({ memBytes = 4 * 2 ** 30, attempts = 5 } = {}): Promise<CephCluster> {
  let last: unknown;
  for (let i = 0; i < attempts; i++) {
    try {
      return await startOnce(memBytes);
    } catch (err) {
      last = err;
      // Refusals come in runs right after another cluster on this machine stopped: give its
      // daemons time to be gone before the next attempt.
      await sleep(2000 * (i + 1));
    }
  }
  throw new Error(`Ceph did not start in ${attempts} attempts: ${(last as Error).message}`);
}
