/**
 * For the tests of pactum outside its checkout (test/outside/): commands run as a user runs
 * them, in directories and HOMEs of their own, and the build they all start from.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const root = join(import.meta.dirname, '..', '..');
/** The Node the tests run on (24): first on every PATH the tests give a command. */
export const nodeBin = dirname(process.execPath);
export const systemPath = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** A command to its end (or `timeoutMs`, then SIGKILL), its output and how long it took. */
export function run(command: string, args: readonly string[], options: SpawnOptions & { input?: string; timeoutMs?: number } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { ...options, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 600_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
    // A command that exits without reading its input closes the pipe (EPIPE): its exit status
    // and output say what happened, so the write's error is not the result.
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}

/** A process left running (a server), its output collected; stop() ends it by its pid and waits. */
export interface Background {
  child: ChildProcess;
  output: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

export function background(command: string, args: readonly string[], options: SpawnOptions = {}): Background {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr.on('data', (d: Buffer) => (text += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    child,
    output: () => text,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Until `url` answers 200 (or `ms` pass): false when it never did. */
export async function answers(url: string, ms = 60_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const ok = await fetch(url).then(async (r) => (await r.body?.cancel(), r.ok), () => false);
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** The npm package as `make package` packs it, from the current build (built first when there is none). */
export function packedTarball(): string {
  const env = { ...process.env, PATH: `${nodeBin}:${process.env.PATH}` };
  if (!existsSync(join(root, 'dist', 'pactum', 'main.js'))) {
    const built = spawnSync('make', ['-s', 'build'], { cwd: root, env, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`make build failed:\n${built.stdout}${built.stderr}`);
  }
  const packed = spawnSync('bash', ['scripts/package.sh'], { cwd: root, env, encoding: 'utf8' });
  if (packed.status !== 0) throw new Error(`make package failed:\n${packed.stdout}${packed.stderr}`);
  const file = readdirSync(join(root, '.build', 'package')).find((f) => f.endsWith('.tgz'));
  if (!file) throw new Error('make package wrote no tarball');
  return join(root, '.build', 'package', file);
}
