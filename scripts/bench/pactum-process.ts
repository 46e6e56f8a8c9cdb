/**
 * pactum as production runs it: `node dist/pactum/main.js serve` (build first), set up through
 * the CLI, with its peak resident memory read from the kernel (/proc/<pid>/status VmHWM, reset
 * through clear_refs) so nothing in the measuring process distorts it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// BENCH_PACTUM: another build's main.js (a copy of dist/ at the same depth, e.g. .tmp/dist-before/pactum/main.js), to compare builds.
const cli = process.env.BENCH_PACTUM ?? fileURLToPath(new URL('../../dist/pactum/main.js', import.meta.url));

/** The newest modification time under `dir` (0 when it does not exist). */
function newestUnder(dir: string): number {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) newest = Math.max(newest, statSync(join(e.parentPath, e.name)).mtimeMs);
  }
  return newest;
}

/**
 * The production bundle, refused when a source is newer: a benchmark of an earlier build is a
 * figure for code that is no longer there.
 */
function checkBuild() {
  if (!existsSync(cli)) throw new Error('run `make build` first: the benchmark measures dist/');
  if (process.env.BENCH_PACTUM) return; // another build, on purpose
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const built = statSync(cli).mtimeMs;
  for (const dir of ['src', 'generated']) {
    if (newestUnder(join(root, dir)) > built) throw new Error(`${dir}/ is newer than ${cli}: run \`make build\` first, the benchmark measures the production bundle`);
  }
}

export interface Pactum {
  url: string;
  lfs: string;
  /** HTTP Basic with the user's password (scrypt, remembered for a minute after each check). */
  auth: string;
  /**
   * HTTP Basic with a personal access token made by `pactum user token`, as a git-lfs user
   * configures it (the token as the password): checked at every request, no scrypt.
   */
  tokenAuth: string;
  pid: number;
  /** Its DATA_DIR (the SQLite file is pactum.sqlite there unless DATABASE_URL is set). */
  dataDir: string;
  /** Where its log goes (pactum.log in DATA_DIR). */
  logFile: string;
  /** Runs the pactum command against this server's database and keys; its stdout. */
  cli(args: string[], input?: string): string;
  /** Peak RSS in bytes since the last reset. */
  peak(): number;
  resetPeak(): void;
  stop(): Promise<void>;
}

/** `role`: of the user bench (member by default; org_admin for the MCP tools); `nodeArgs`: for node, after BENCH_NODE_ARGS. */
export async function startPactum(env: Record<string, string> = {}, opts: { role?: string; nodeArgs?: string[] } = {}): Promise<Pactum> {
  checkBuild();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-pactum-'));
  const base = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env };
  // `stderr`: 'pipe' for a command whose notes to a person (a token's "shown only once") are noise here.
  const run = (args: string[], input?: string, stderr: 'inherit' | 'pipe' = 'inherit') => execFileSync(process.execPath, [cli, ...args], { env: base, input, stdio: ['pipe', 'pipe', stderr] });
  run(['org', 'create', 'bench']);
  run(['user', 'create', 'bench', '--org', 'bench', '--role', opts.role ?? 'member', '--password-stdin'], 'bench-password\n');
  run(['repo', 'create', 'bench/objects']);
  run(['repo', 'grant', 'bench/objects', 'bench', 'write']);
  const personalToken = run(['user', 'token', 'bench', '--name', 'bench-git-lfs'], undefined, 'pipe').toString('utf8').trim();
  // BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof": where the server's time goes.
  const nodeArgs = [...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []), ...(opts.nodeArgs ?? [])];
  // The log goes to a file, as in production. A pipe read by this process would make the load
  // generator (autocannon runs here) parse every log line: that slows the generator, not pactum,
  // and the bench would measure its own client.
  const logFile = join(dataDir, 'pactum.log');
  const logFd = openSync(logFile, 'a', 0o600);
  const child = spawn(process.execPath, [...nodeArgs, cli, 'serve'], { env: { ...base, PORT: '0' }, stdio: ['ignore', logFd, 'inherit'] });
  closeSync(logFd);
  const url = await new Promise<string>((resolve, reject) => {
    const poll = setInterval(() => {
      const m = /"url":"([^"]+)".*"msg":"pactum is serving"/.exec(readFileSync(logFile, 'utf8'));
      if (m) {
        clearInterval(poll);
        resolve(m[1]!);
      }
    }, 25);
    child.once('exit', (code) => {
      clearInterval(poll);
      reject(new Error(`pactum serve exited with ${code}; its log: ${logFile}`));
    });
  });
  const status = () => readFileSync(`/proc/${child.pid}/status`, 'utf8');
  return {
    url,
    lfs: `${url}/bench/objects.git/info/lfs`,
    auth: `Basic ${Buffer.from('bench:bench-password').toString('base64')}`,
    tokenAuth: `Basic ${Buffer.from(`bench:${personalToken}`).toString('base64')}`,
    pid: child.pid!,
    dataDir,
    logFile,
    cli: (args, input) => run(args, input).toString('utf8'),
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
