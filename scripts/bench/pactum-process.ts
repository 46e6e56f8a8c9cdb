/**
 * pactum as production runs it: `node dist/src/cli/main.js serve` (build first), set up through
 * the CLI, with its peak resident memory read from the kernel (/proc/<pid>/status VmHWM, reset
 * through clear_refs) so nothing in the measuring process distorts it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

export interface Pactum {
  url: string;
  lfs: string;
  auth: string;
  pid: number;
  /** Runs the pactum CLI on the server's database; its stdout. */
  cli(args: string[]): string;
  /** Peak RSS in bytes since the last reset. */
  peak(): number;
  resetPeak(): void;
  stop(): Promise<void>;
}

export async function startPactum(env: Record<string, string> = {}): Promise<Pactum> {
  if (!existsSync(cli)) throw new Error('run `make build` first: the benchmark measures dist/');
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-pactum-'));
  const base = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env };
  const run = (args: string[], input?: string) => execFileSync(process.execPath, [cli, ...args], { env: base, input });
  run(['org', 'create', 'bench']);
  run(['user', 'create', 'bench', '--org', 'bench', '--role', 'member', '--password-stdin'], 'bench-password\n');
  run(['repo', 'create', 'bench/objects']);
  run(['repo', 'grant', 'bench/objects', 'bench', 'write']);
  // BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof": where the server's time goes.
  const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, cli, 'serve'], { env: { ...base, PORT: '0' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.once('exit', (code) => reject(new Error(`pactum serve exited with ${code}`)));
    child.stdout!.on('data', (d) => {
      buf += d;
      const m = /"url":"([^"]+)".*"msg":"pactum is serving"/.exec(buf);
      if (m) resolve(m[1]!);
    });
  });
  child.stdout!.resume();
  const status = () => readFileSync(`/proc/${child.pid}/status`, 'utf8');
  return {
    url,
    lfs: `${url}/bench/objects.git/info/lfs`,
    auth: `Basic ${Buffer.from('bench:bench-password').toString('base64')}`,
    pid: child.pid!,
    cli: (args) => run(args).toString(),
    peak: () => Number(/VmHWM:\s+(\d+) kB/.exec(status())![1]) * 1024,
    resetPeak: () => writeFileSync(`/proc/${child.pid}/clear_refs`, '5'),
    stop: () =>
      new Promise((done) => {
        child.removeAllListeners('exit');
        child.once('exit', () => {
          rmSync(dataDir, { recursive: true, force: true });
          done();
        });
        child.kill('SIGTERM');
      }),
  };
}
