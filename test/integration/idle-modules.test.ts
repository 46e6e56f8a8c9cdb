/**
 * A fresh server loads only what serving needs: packages that only some deployments or some
 * requests use (prom-client when metrics are recorded, the PostgreSQL driver on PostgreSQL,
 * piscina for the first worker task) are loaded when first used, which keeps an idle server's
 * resident memory down. Each case runs `pactum serve` in its own process, which logs every module
 * it loads.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { newDataDir, removeDir, spawnServer, type ChildServer } from '../reliability/support.js';

const hook = join(import.meta.dirname, '..', 'fixtures', 'modules', 'log-loads.mjs');
const running: { server: ChildServer; dir: string }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.server.kill('SIGTERM');
    removeDir(r.dir);
  }
});

/** The packages (node_modules/<name>) a server started with `env` has loaded once it serves. */
async function packagesLoaded(env: Record<string, string> = {}): Promise<{ packages: Set<string>; server: ChildServer }> {
  const dir = newDataDir('idle-modules');
  const log = join(dir, 'modules.log');
  const server = await spawnServer({ dataDir: dir, env: { NODE_OPTIONS: `--import ${hook}`, MODULE_LOG: log, ...env } });
  running.push({ server, dir });
  const packages = new Set(
    readFileSync(log, 'utf8')
      .split('\n')
      .map((line) => /^require:((?:@[^/.][^/]*\/)?[^/.][^/]*)/.exec(line)?.[1] ?? /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(line)?.[1])
      .filter((p): p is string => Boolean(p)),
  );
  return { packages, server };
}

it('an idle server on SQLite without metrics holds neither prom-client, nor the PostgreSQL driver, nor piscina', async () => {
  const { packages } = await packagesLoaded();
  expect(packages.has('knex')).toBe(true); // the hook sees what the server loads
  for (const lazy of ['prom-client', 'pg', 'piscina', '@modelcontextprotocol/sdk', '@modelcontextprotocol/server', '@modelcontextprotocol/core']) expect(packages, lazy).not.toContain(lazy);
});

it("an idle server has not loaded Node's bundled undici or http2 (an ES import of node:http would load them)", async () => {
  const dir = newDataDir('idle-modules');
  const log = join(dir, 'modules.log');
  const server = await spawnServer({ dataDir: dir, env: { NODE_OPTIONS: `--import ${hook}`, MODULE_LOG: log } });
  running.push({ server, dir });
  const res = await fetch(`${server.url}/healthz`);
  expect(res.status).toBe(200);
  await server.kill('SIGTERM');
  const builtins = readFileSync(log, 'utf8').split('\n').filter((line) => line.startsWith('builtin:'));
  expect(builtins).toContain('builtin:http'); // the list was written
  expect(builtins).not.toContain('builtin:internal/deps/undici/undici');
  expect(builtins).not.toContain('builtin:http2');
});

it('a server that records metrics loads prom-client and answers a scrape', async () => {
  const token = 'idle-modules-metrics-token-0123456789';
  const { packages, server } = await packagesLoaded({ METRICS_TOKEN: token });
  expect(packages).toContain('prom-client');
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(await res.text()).toMatch(/^nodejs_heap_size_used_bytes /m);
});

it('the bundle that `make build` writes serves, holds no validators while idle, and loads an API\'s on its first request: the object APIs\' without the dashboard\'s', async () => {
  const bundle = join(import.meta.dirname, '..', '..', 'dist', 'pactum', 'main.js');
  if (!existsSync(bundle)) throw new Error('dist/pactum/main.js is missing: run make build (make test does)');
  const dir = newDataDir('idle-modules');
  const cli = (args: string[], input?: string) => execFileSync(process.execPath, [bundle, ...args], { env: { ...process.env, DATA_DIR: dir }, input, stdio: ['pipe', 'pipe', 'pipe'] });
  cli(['org', 'create', 'acme']);
  cli(['user', 'create', 'ada', '--org', 'acme', '--role', 'member', '--password-stdin'], 'ada-password-123\n');
  cli(['repo', 'create', 'acme/site']);
  cli(['repo', 'grant', 'acme/site', 'ada', 'write']);
  const log = join(dir, 'modules.log');
  const server = await spawnServer({ dataDir: dir, main: bundle, env: { NODE_OPTIONS: `--import ${hook}`, MODULE_LOG: log } });
  running.push({ server, dir });
  const validators = () => readFileSync(log, 'utf8').split('\n').filter((line) => /validators[\\/]\w+\.cjs$/.test(line)).map((line) => /(\w+)\.cjs$/.exec(line)![1]);
  expect(readFileSync(log, 'utf8')).toMatch(/dist\/pactum\/main\.js/); // the hook sees the bundle's modules
  expect(validators()).toEqual([]);
  const res = await fetch(`${server.url}/acme/site.git/info/lfs/objects/batch`, {
    method: 'POST',
    headers: { accept: 'application/vnd.git-lfs+json', 'content-type': 'application/vnd.git-lfs+json', authorization: `Basic ${Buffer.from('ada:ada-password-123').toString('base64')}` },
    body: JSON.stringify({ operation: 'upload', transfers: ['basic'], objects: [{ oid: 'a'.repeat(64), size: 1 }] }),
  });
  expect(res.status).toBe(200);
  expect((await res.json()).objects[0].actions.upload.href).toMatch(/^http/);
  expect(validators().length).toBeGreaterThan(0);
  expect(validators()).not.toContain('dashboard');
});
