/**
 * Shared by the benchmarks: start a target server in a child process (so the load generator
 * gets its own core), drive it with wrk (autocannon where wrk is not installed), and compare medians of alternating
 * rounds, so machine noise hits baseline and candidate alike.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { hasWrk, wrkLoad } from './wrk.js';

export interface Target { url: string; child: ChildProcess; info: Record<string, unknown>; stop(): Promise<void> }

/**
 * Forks `script` (run with tsx) with args; it must process.send({ url }) once listening.
 * BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof": where the target's time goes (profile-top.ts).
 */
export function startTarget(script: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<Target> {
  const child = fork(fileURLToPath(script), args, {
    execArgv: [...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []), '--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    child.once('message', (m: { url: string }) =>
      resolve({
        url: m.url,
        child,
        info: m,
        stop: () =>
          new Promise((done) => {
            child.removeAllListeners('exit');
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      }),
    );
  });
}

export interface LoadResult { rps: number; p50: number; p99: number; errors: number; non2xx: number }

/** HTTP load: from wrk when it is installed (see wrk.ts for why), else from autocannon. */
export async function load(opts: autocannon.Options): Promise<LoadResult> {
  if (hasWrk() && process.env.BENCH_LOAD !== 'autocannon') {
    return wrkLoad({ url: String(opts.url), method: opts.method, headers: opts.headers as Record<string, string> | undefined, body: typeof opts.body === 'string' ? opts.body : opts.body?.toString(), connections: opts.connections ?? 32, duration: Number(opts.duration ?? 5) });
  }
  const r = await autocannon({ connections: 32, duration: 5, ...opts });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts, non2xx: r.non2xx };
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** One figure of a benchmark, as `make bench` collects them into bench-results.json and .md. */
export interface Figure {
  bench: string;
  measure: string;
  value: number;
  unit: string;
  /** What it was compared with, side by side in the same run. */
  baseline?: { name: string; value: number };
  /** pactum against the baseline, the way the goal reads it (higher is better). */
  ratio?: number;
  goal?: string;
  met?: boolean;
}

/** Appends figures to the JSON-lines file `make bench` names in BENCH_RESULTS (nothing otherwise). */
export function record(...figures: Figure[]) {
  const file = process.env.BENCH_RESULTS;
  if (!file) return;
  // A benchmark that cleans the project's .tmp/ must not lose the figures of the others.
  mkdirSync(dirname(file), { recursive: true });
  appendFileSync(file, figures.map((f) => JSON.stringify(f)).join('\n') + '\n');
}

/** The CPU time (user + system) process `pid` has used, in seconds (the kernel counts in 1/100 s). */
export const cpuOf = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
/** Resident set size of a process now, from the kernel. */
export const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

/** A 20-second 440 Hz tone, 22.05 kHz 16-bit mono WAV (0.9 MB): the sound the media pages play. */
export function toneWav(): Buffer {
  const rate = 22050;
  const samples = rate * 20;
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write('RIFF', 0); wav.writeUInt32LE(36 + samples * 2, 4); wav.write('WAVE', 8);
  wav.write('fmt ', 12); wav.writeUInt32LE(16, 16); wav.writeUInt16LE(1, 20); wav.writeUInt16LE(1, 22);
  wav.writeUInt32LE(rate, 24); wav.writeUInt32LE(rate * 2, 28); wav.writeUInt16LE(2, 32); wav.writeUInt16LE(16, 34);
  wav.write('data', 36); wav.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++) wav.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), 44 + i * 2);
  return wav;
}
