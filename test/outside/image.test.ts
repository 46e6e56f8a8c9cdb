/**
 * The container images as an operator runs them, with podman: built by `make image`'s script
 * (once per set of inputs: a second run reuses the images tagged by their hash), then the full
 * image run with its data on a volume: /healthz answers and the image's HEALTHCHECK passes, it
 * runs as a user other than root, a git-lfs push and a clone go through it, a Chromium scan runs
 * inside it, its data survive a restart, and SIGTERM ends it with its last log line. The slim
 * image serves and scans with jsdom. Skipped, saying why, where podman cannot run containers.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../helpers/ports.js';
import { githubSarifProblems } from '../helpers/code-hosts.js';
import { answers, nodeBin, root, run, systemPath } from '../helpers/outside.js';

const runtime = process.env.PACTUM_PODMAN_RUNTIME ?? 'runc';

/** Why podman cannot run the images here, or null when it can. */
function podmanUnavailable(): string | null {
  const version = spawnSync('podman', ['--version'], { encoding: 'utf8' });
  if (version.error || version.status !== 0) return 'podman is not installed (apt-get install podman runc mmdebstrap)';
  const info = spawnSync('podman', ['--runtime', runtime, 'info', '--format', '{{.Host.OCIRuntime.Name}}'], { encoding: 'utf8' });
  if (info.status !== 0) return `podman cannot run containers here: ${(info.stderr || info.stdout).trim().split('\n').pop()}`;
  return null;
}

const why = podmanUnavailable();
if (why) console.warn(`[outside] the container image tests are skipped: ${why}`);

/** The ulimits podman needs here (scripts/image.sh says why), as `--ulimit` arguments. */
function ulimits(): string[] {
  const hard = (flag: string) => spawnSync('bash', ['-c', `ulimit -H${flag}`], { encoding: 'utf8' }).stdout.trim();
  const files = hard('n');
  const procs = hard('u');
  const nproc = procs === 'unlimited' || Number(procs) > 4096 ? '4096' : procs;
  return ['--ulimit', `nofile=${files}:${files}`, '--ulimit', `nproc=${nproc}:${nproc}`];
}

const podman = (args: string[], options: Parameters<typeof run>[2] = {}) => run('podman', ['--runtime', runtime, ...args], options);
const env = { ...process.env, PATH: `${nodeBin}:${process.env.PATH}` };
const cli = (args: string[], options: Parameters<typeof run>[2] = {}) => run(process.execPath, [join(root, 'dist', 'pactum', 'main.js'), ...args], { env, ...options });

describe.skipIf(why !== null)(`the container images${why ? ` (skipped: ${why})` : ''}`, () => {
  const suffix = randomBytes(4).toString('hex');
  const work = mkdtempSync(join(tmpdir(), 'pactum-image-'));
  const containers: string[] = [];
  const volumes: string[] = [];
  let images: { full: string; slim: string };

  /** Starts `image` in the background (its data on a named volume, the fixture site read-only at /site), until /healthz answers. */
  async function start(image: string, name: string, port: number, extra: string[] = []) {
    const started = performance.now();
    const ran = await podman(['run', '-d', '--name', name, ...ulimits(), '-p', `127.0.0.1:${port}:8080`, '-e', `PUBLIC_URL=http://127.0.0.1:${port}`,
      '-e', 'SCAN_ALLOW_PRIVATE_NETWORKS=true', '-v', `${name}-data:/var/lib/pactum`, '-v', `${join(root, 'test', 'fixtures', 'site')}:/site:ro`, ...extra, image]);
    expect(ran.code, ran.stderr).toBe(0);
    containers.push(name);
    volumes.push(`${name}-data`);
    const healthy = await answers(`http://127.0.0.1:${port}/healthz`, 120_000);
    expect(healthy, (await podman(['logs', name])).stdout).toBe(true);
    return (performance.now() - started) / 1000;
  }

  /** The fixture site served inside the container, on its own loopback (a page a scan inside reaches). */
  const serveSite = (name: string) =>
    podman(['exec', '-d', name, 'node', '-e', `require('node:http').createServer((q, r) => {
      const p = new URL(q.url, 'http://x').pathname; const f = '/site/' + (p === '/' ? 'index.html' : p.slice(1));
      require('node:fs').readFile(f, (e, b) => { if (e || !/^\\/site\\/[a-z-]+\\.html$/.test(f)) { r.writeHead(404); return r.end(); } r.writeHead(200, { 'content-type': 'text/html' }); r.end(String(b).replaceAll('{{origin}}', 'http://127.0.0.1:8090')); });
    }).listen(8090, '127.0.0.1')`]);

  /** A signed-in admin of a new org, by the CLI inside the container (on the data the server uses). */
  async function admin(name: string) {
    expect((await podman(['exec', name, 'pactum', 'org', 'create', 'acme'])).code).toBe(0);
    expect((await podman(['exec', '-i', name, 'pactum', 'user', 'create', 'ada', '--org', 'acme', '--admin', '--password-stdin'], { input: 'ada-password-123\n' })).code).toBe(0);
    const token = await podman(['exec', name, 'pactum', 'token', '--user', 'ada', '--ttl', '2h']);
    expect(token.code, token.stderr).toBe(0);
    return token.stdout.trim();
  }

  async function scan(port: number, token: string, name: string) {
    const served = await serveSite(name);
    expect(served.code, served.stderr).toBe(0);
    const out = join(work, `${name}.sarif`);
    const attempt = () => cli(['scan', 'http://127.0.0.1:8090/', '--server', `http://127.0.0.1:${port}`, '--token', token, '--mode', 'site', '--max-pages', '5', '--format', 'sarif', '--output', out, '--fail-on', 'none']);
    // The site inside starts in a moment; a first refusal is the scan saying so, not a fault.
    let scanned = await attempt();
    for (let i = 0; i < 3 && scanned.code !== 0; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      scanned = await attempt();
    }
    expect(scanned.code, scanned.stdout + scanned.stderr).toBe(0);
    return JSON.parse(readFileSync(out, 'utf8')) as { runs: { properties: { engine: string }; results: unknown[] }[] };
  }

  beforeAll(async () => {
    const built = await run('bash', ['scripts/image.sh'], { cwd: root, env: { ...env, PACTUM_IMAGE_QUIET: '1' }, timeoutMs: 1_800_000 });
    expect(built.code, built.stdout + built.stderr).toBe(0);
    const sizes = built.stdout.split('\n').filter((l) => /MB compressed/.test(l));
    for (const line of sizes) console.log(`[outside] make image: ${line}`);
    const full = /localhost\/pactum:([0-9a-f]{16}):/.exec(built.stdout)?.[1];
    expect(full, built.stdout).toBeDefined();
    images = { full: `localhost/pactum:${full}`, slim: `localhost/pactum:${full}-slim` };
  }, 1_800_000);

  afterAll(async () => {
    for (const c of containers) await podman(['rm', '-f', '-t', '2', c]);
    for (const v of volumes) await podman(['volume', 'rm', '-f', v]);
    rmSync(work, { recursive: true, force: true });
  });

  describe('the full image (Chromium)', () => {
    const name = `pactum-test-${suffix}`;
    let port: number;
    let token: string;
    let pat: string;
    const home = join(work, 'home');
    const gitEnv = () => ({ HOME: home, PATH: `${nodeBin}:${systemPath}`, GIT_TERMINAL_PROMPT: '0', LANG: 'C.UTF-8' });
    const git = (args: string[], cwd: string) => run('git', args, { cwd, env: gitEnv() });
    const bytes = randomBytes(2_000_000);
    const oid = createHash('sha256').update(bytes).digest('hex');

    beforeAll(async () => {
      [port] = (await freePorts(1)) as [number];
      const seconds = await start(images.full, name, port);
      console.log(`[outside] podman run (full image) to a healthy server: ${seconds.toFixed(1)} s`);
      token = await admin(name);
    }, 300_000);

    it('answers /healthz, passes its HEALTHCHECK, and runs as a user other than root', async () => {
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      const check = await podman(['healthcheck', 'run', name]);
      expect(check.code, check.stdout + check.stderr).toBe(0);
      // podman's inspect puts the HEALTHCHECK beside Config (the docker format keeps it; OCI would drop it).
      const config = JSON.parse((await podman(['image', 'inspect', images.full])).stdout) as { Healthcheck?: { Test: string[] }; Config: { User: string; Volumes: object } }[];
      expect(config[0]!.Healthcheck?.Test.join(' ')).toMatch(/healthz/);
      expect(config[0]!.Config.User).toBe('pactum');
      expect(config[0]!.Config.Volumes).toHaveProperty('/var/lib/pactum');
      expect((await podman(['exec', name, 'id', '-u'])).stdout.trim()).toBe('10001');
    });

    it('takes a git-lfs push and gives a clone the same bytes', async () => {
      mkdirSync(home, { recursive: true });
      writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = Ada\n\temail = ada@example.com\n[init]\n\tdefaultBranch = main\n');
      expect((await podman(['exec', name, 'pactum', 'repo', 'create', 'acme/site'])).code).toBe(0);
      pat = (await podman(['exec', name, 'pactum', 'user', 'token', 'ada', '--name', 'laptop'])).stdout.split('\n')[0]!.trim();
      expect(pat).toMatch(/^pat_/);
      for (const args of [['lfs', 'install', '--skip-repo'], ['config', '--global', `credential.http://127.0.0.1:${port}.helper`, 'store']]) expect((await git(args, home)).code).toBe(0);
      writeFileSync(join(home, '.git-credentials'), `http://ada:${pat}@127.0.0.1:${port}\n`);
      expect((await git(['init', '-q', '--bare', join(work, 'site.git')], work)).code).toBe(0);
      expect((await git(['clone', '-q', join(work, 'site.git'), join(work, 'work')], work)).code).toBe(0);
      const repo = join(work, 'work');
      for (const args of [['config', '-f', '.lfsconfig', 'lfs.url', `http://127.0.0.1:${port}/acme/site.git/info/lfs`], ['lfs', 'track', '*.bin']]) expect((await git(args, repo)).code).toBe(0);
      writeFileSync(join(repo, 'big.bin'), bytes);
      expect((await git(['add', '.lfsconfig', '.gitattributes', 'big.bin'], repo)).code).toBe(0);
      expect((await git(['commit', '-qm', 'A large file'], repo)).code).toBe(0);
      const pushed = await git(['push', '-q', 'origin', 'HEAD'], repo);
      expect(pushed.code, pushed.stderr).toBe(0);
      const cloned = await git(['clone', '-q', join(work, 'site.git'), join(work, 'elsewhere')], work);
      expect(cloned.code, cloned.stderr).toBe(0);
      expect(createHash('sha256').update(readFileSync(join(work, 'elsewhere', 'big.bin'))).digest('hex')).toBe(oid);
    });

    it('scans a site in Chromium inside the container', async () => {
      const sarif = await scan(port, token, name);
      expect(sarif.runs[0]!.properties.engine).toBe('chromium');
      expect(sarif.runs[0]!.results.length).toBeGreaterThan(0);
      expect(githubSarifProblems(JSON.stringify(sarif))).toEqual([]);
    });

    it('keeps its data across a restart: the organization, the token and the object', async () => {
      const stopped = await podman(['stop', '-t', '30', name]);
      expect(stopped.code, stopped.stderr).toBe(0);
      const restarted = await podman(['start', name]);
      expect(restarted.code, restarted.stderr).toBe(0);
      expect(await answers(`http://127.0.0.1:${port}/healthz`, 120_000)).toBe(true);
      expect((await podman(['exec', name, 'pactum', 'org', 'list'])).stdout).toMatch(/^acme\t/m);
      const again = await git(['clone', '-q', join(work, 'site.git'), join(work, 'after-restart')], work);
      expect(again.code, again.stderr).toBe(0);
      expect(createHash('sha256').update(readFileSync(join(work, 'after-restart', 'big.bin'))).digest('hex')).toBe(oid);
    });

    it('ends on SIGTERM with its last log line, exit status 0', async () => {
      const stopped = await podman(['kill', '--signal', 'SIGTERM', name]);
      expect(stopped.code, stopped.stderr).toBe(0);
      const waited = await podman(['wait', name]);
      expect(waited.stdout.trim()).toBe('0');
      const lines = (await podman(['logs', name])).stdout.trim().split('\n');
      const last = JSON.parse(lines.at(-1)!) as { msg: string };
      expect(last.msg).toBe('shut down');
      expect(lines.some((l) => /"signal":"SIGTERM".*"msg":"shutting down"/.test(l))).toBe(true);
    });
  });

  describe('the slim image (jsdom)', () => {
    const name = `pactum-test-slim-${suffix}`;
    let port: number;

    beforeAll(async () => {
      [port] = (await freePorts(1)) as [number];
      const seconds = await start(images.slim, name, port);
      console.log(`[outside] podman run (slim image) to a healthy server: ${seconds.toFixed(1)} s`);
    }, 300_000);

    it('serves and scans with jsdom, without a browser; pactum mock says how to add the Prism it leaves out', async () => {
      expect((await podman(['exec', name, 'test', '-e', '/usr/bin/chromium'])).code).not.toBe(0);
      const mock = await podman(['exec', name, 'pactum', 'mock']);
      expect(mock.code).toBe(2);
      expect(mock.stderr).toContain('npm install -g @stoplight/prism-cli@5.14.2');
      const sarif = await scan(port, await admin(name), name);
      expect(sarif.runs[0]!.properties.engine).toBe('jsdom');
      expect(sarif.runs[0]!.results.length).toBeGreaterThan(0);
    });
  });
});
