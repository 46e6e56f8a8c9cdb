/**
 * The `pactum` command: bootstrapping a new install (an org, its first system admin, a token)
 * with nothing but the CLI, and what a server started on the same DATA_DIR makes of it.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { freePort } from '../helpers/ports.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pactum } from '../helpers/cli.js';
import { bearer, mcpClient, ok } from '../helpers/mcp.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { backendEnv, databaseUrlFor, ensureDatabase, TEST_DB_PREFIX } from '../helpers/backends.js';

const dataDir = mkdtempSync(join(tmpdir(), 'pactum-cli-'));
// PACTUM_TEST_BACKEND=postgres-s3: the CLI and the server share that database and bucket too.
const env = { DATA_DIR: dataDir, ...(await backendEnv(dataDir)) };
let server: TestServer | undefined;
afterAll(async () => {
  await server?.stop(); // removes dataDir
});

describe('pactum CLI', () => {
  it('bootstraps an org and its first system admin, and mints tokens the server accepts', async () => {
    expect((await pactum(['migrate'], env)).stdout).toMatch(/applied 001_core/);
    // Tokens are for the server's PUBLIC_URL (their audience), as in any deployment.
    server = await startTestServer({ DATA_DIR: dataDir });
    const withUrl = { ...env, PUBLIC_URL: server.url };
    expect((await pactum(['migrate'], env)).stdout).toMatch(/up to date/);
    const org = await pactum(['org', 'create', 'acme', '--name', 'Acme Web Team'], env);
    expect(org.stderr).toBe('');
    expect(org.stdout).toMatch(/^created organization acme \(org_[0-9a-z]{26}\)/);
    const user = await pactum(['user', 'create', 'ada', '--org', 'acme', '--admin', '--password-stdin'], env, 'a long enough password\n');
    expect(user.stdout).toMatch(/created user ada \(usr_[0-9a-z]{26}\) in acme with role system_admin/);
    expect((await pactum(['user', 'list'], env)).stdout).toMatch(/^ada\tusr_\w+\tacme\tsystem_admin\tactive$/m);

    // No PUBLIC_URL in this shell: the audience is the URL the server recorded when it started.
    const minted = await pactum(['token', '--user', 'ada', '--ttl', '15m'], env);
    expect(minted.stderr).toContain(`for ${server.url} (the server that started on this database`);
    const userToken = minted.stdout.trim();
    expect(userToken.split('.')).toHaveLength(3);
    // A service principal's token: its claims carry its permissions, within an org that exists.
    const acmeId = /\((org_[0-9a-z]{26})\)/.exec(org.stdout)![1]!;
    const anyToken = (await pactum(['token', '--sub', 'svc_ci', '--org', acmeId, '--perm', 'reports.view,compliance.view', '--ttl', '1h'], withUrl)).stdout.trim();
    // --org takes the slug as well as the id.
    const bySlug = await pactum(['token', '--sub', 'svc_ci', '--org', 'acme', '--perm', 'reports.view', '--audience', server.url], env);
    expect(bySlug.code).toBe(0);
    expect(bySlug.stderr).toBe('');
    // A token for another server (its audience) is refused by this one.
    const elsewhere = (await pactum(['token', '--user', 'ada', '--audience', 'http://127.0.0.1:1'], env)).stdout.trim();
    for (const [t, status] of [[bySlug.stdout.trim(), 200], [elsewhere, 401]] as const) {
      const r = await fetch(`${server.url}/api/v1/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(r.status).toBe(status);
      await r.body?.cancel();
    }

    const admin = await mcpClient(server.url, bearer(userToken));
    expect(ok(await admin.callTool({ name: 'dashboard_list_orgs', arguments: {} })).orgs.map((o: { slug: string }) => o.slug)).toEqual(['acme']);
    await admin.close();
    const ci = await mcpClient(server.url, bearer(anyToken));
    const tools = (await ci.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('dashboard_get_report');
    expect(tools).not.toContain('dashboard_create_user');
    await ci.close();

    // The login the CLI set up works too.
    const login = await fetch(`${server.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'ada', password: 'a long enough password' }) });
    expect(login.status).toBe(200);
    await login.body?.cancel();
    server.expectConformant();
  });

  it('serves, and on SIGTERM finishes and exits by itself, also after uploads', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pactum-serve-'));
    const env = { DATA_DIR: dir, ...(await backendEnv(dir)) };
    await pactum(['org', 'create', 'acme'], env);
    await pactum(['user', 'create', 'ada', '--org', 'acme', '--role', 'member', '--password-stdin'], env, 'ada-password-1\n');
    await pactum(['repo', 'create', 'acme/site'], env);
    await pactum(['repo', 'grant', 'acme/site', 'ada', 'write'], env);
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '..', '..', 'src', 'cli', 'main.ts'), 'serve'], {
      env: { ...process.env, ...env, PORT: '0', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const url = await new Promise<string>((resolve) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        const m = /"url":"([^"]+)".*pactum is serving/.exec(out);
        if (m) resolve(m[1]!);
      });
    });
    // It replaced itself in place (same PID) with the setting only a start can make (cli/serving-process.ts).
    expect(readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0')).toContain('MALLOC_ARENA_MAX=2');
    const bytes = Buffer.from('some object content\n');
    const oid = createHash('sha256').update(bytes).digest('hex');
    const auth = `Basic ${Buffer.from('ada:ada-password-1').toString('base64')}`;
    const batch = await fetch(`${url}/acme/site.git/info/lfs/objects/batch`, {
      method: 'POST',
      headers: { authorization: auth, accept: 'application/vnd.git-lfs+json', 'content-type': 'application/vnd.git-lfs+json' },
      body: JSON.stringify({ operation: 'upload', objects: [{ oid, size: bytes.length }] }),
    });
    const upload = ((await batch.json()) as { objects: { actions: { upload: { href: string; header: Record<string, string> } } }[] }).objects[0]!.actions.upload;
    expect((await fetch(upload.href, { method: 'PUT', headers: upload.header, body: new Uint8Array(bytes) })).status).toBe(200);
    // An operator deletes it: clients get 410 with the reason.
    const del = await pactum(['repo', 'delete-object', 'acme/site', oid, '--reason', 'takedown request #7'], env);
    expect(del.stdout).toMatch(/deleted/);
    const gone = await fetch(`${url}/acme/site.git/info/lfs/objects/${oid}`, { headers: { authorization: auth, accept: 'application/vnd.git-lfs+json' } });
    expect(gone.status).toBe(410);
    expect(((await gone.json()) as { message: string }).message).toMatch(/takedown request #7/);
    expect((await pactum(['repo', 'delete-object', 'acme/site', oid, '--reason', 'again'], env)).code).toBe(2);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running after 10 s'), 10_000))]);
    if (code !== 0) child.kill('SIGKILL');
    expect(code).toBe(0);
  });

  it('answers mistakes with a clear message and exit code 2', async () => {
    const cases: [string[], RegExp, Record<string, string>?, string?][] = [
      [['token'], /needs --user/],
      [['token', '--sub', 'x', '--org', 'y'], /needs --perm or --role/],
      [['token', '--sub', 'x', '--org', 'y', '--perm', 'root'], /unknown permission root/],
      [['token', '--sub', 'x', '--org', 'y', '--perm', 'admin.org', '--ttl', 'forever'], /invalid duration/],
      [['user', 'create', 'eve', '--org', 'acme', '--role', 'member', '--password-stdin'], /at least 8 characters|fewer than 8/, {}, 'short\n'],
      [['user', 'create', 'eve', '--org', 'nowhere', '--role', 'member', '--password-stdin'], /no organization nowhere/, {}, 'long enough pw\n'],
      [['org', 'create', 'Bad Slug'], /slug/],
      [['frobnicate'], /unknown command frobnicate/],
      [['migrate'], /PORT/, { PORT: 'eighty' }],
      // Names of things that do not exist are refused here, not by the server later.
      [['token', '--sub', 'svc_x', '--org', 'org_doesnotexist', '--perm', 'reports.view'], /no organization org_doesnotexist/],
      [['token', '--sub', 'usr_nobody', '--org', 'acme', '--role', 'member'], /no user usr_nobody/],
      [['token', '--user', 'nobody'], /no user nobody/],
      [['token', '--user', 'ada', '--audience', 'not a url'], /--audience not a url is not a URL/],
      [['repo', 'create', 'nowhere/site'], /no organization nowhere/],
      [['repo', 'grant', 'acme/nothing', 'ada', 'read'], /no repository acme\/nothing/],
      // Unknown flags and arguments are errors, not ignored.
      [['serve', '--bogus'], /Unknown option '--bogus'/],
      [['migrate', 'now'], /Unexpected argument 'now'/],
      [['org', 'list', '--all'], /Unknown option '--all'/],
      [['repo', 'list', '--public'], /--public is an option of repo create only/],
      [['user', 'tokens', 'ada', 'extra'], /usage: pactum user tokens/],
      [['token', '--user', 'ada', '--colour'], /Unknown option '--colour'/],
      // A likely typo is named; a role that does not exist lists the ones that do.
      [['tokn', '--user', 'ada'], /unknown command tokn \(did you mean token\?\)/],
      [['token', '--user', 'ada', '--tll', '1h'], /Unknown option '--tll' \(did you mean --ttl\?\)/],
      [['user', 'create', 'eve', '--org', 'acme', '--role', 'superuser', '--password-stdin'], /unknown role superuser; the roles are system_admin, org_admin, member, viewer, service/, {}, 'long enough pw\n'],
      [['token', '--sub', 'svc_x', '--org', 'acme', '--role', 'admin'], /unknown role admin; the roles are system_admin, org_admin, member, viewer, service/],
    ];
    await pactum(['org', 'create', 'acme'], env); // exists already unless this test runs alone
    // Three at a time: each case is a process of its own (node and tsx start in about 2 s).
    for (let i = 0; i < cases.length; i += 3) {
      await Promise.all(
        cases.slice(i, i + 3).map(async ([args, message, extra, stdin]) => {
          const r = await pactum(args, { ...env, ...(extra ?? {}) }, stdin);
          expect(r.code, args.join(' ')).toBe(2);
          expect(r.stderr, args.join(' ')).toMatch(message);
        }),
      );
    }
  }, 240_000);

  it('personal tokens: names unique per user, revoke by name revokes that one, no --ttl never expires as the usage says', async () => {
    await pactum(['org', 'create', 'acme'], env); // exists already unless this test runs alone
    await pactum(['user', 'create', 'tess', '--org', 'acme', '--role', 'member', '--password-stdin'], env, 'tess-password-1\n');
    const first = await pactum(['user', 'token', 'tess', '--name', 'ci'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/a personal token for tess \(ci, pat_\w+, never expires: --ttl 90d sets an expiry\)/);
    const again = await pactum(['user', 'token', 'tess', '--name', 'ci', '--ttl', '30d'], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/tess has a live token named ci already \(pat_\w+, created .*\): choose another --name, or revoke it first \(pactum user token revoke tess ci\)/);
    const other = await pactum(['user', 'token', 'tess', '--name', 'laptop', '--ttl', '30d'], env);
    expect(other.stderr).toMatch(/valid until \d{4}-/);
    const revoked = await pactum(['user', 'token', 'revoke', 'tess', 'ci'], env);
    expect(revoked.stdout).toMatch(/^revoked 1 token of tess \(ci\)/);
    const listed = (await pactum(['user', 'tokens', 'tess'], env)).stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(listed.map((t) => [t[1], t[3] === 'no-expiry', t[5]!.split(' ')[0]]).sort()).toEqual([['ci', true, 'revoked'], ['laptop', false, 'live']]);
    // A revoked name may be used again.
    expect((await pactum(['user', 'token', 'tess', '--name', 'ci'], env)).code).toBe(0);
    const usage = await pactum(['user', '--help'], env);
    expect(usage.stdout).toMatch(/\[--ttl 90d\] .*without --ttl it\s+never expires/);
  }, 120_000);

  it('prints each command\'s usage for --help and exits 0, without running it', async () => {
    for (const name of ['serve', 'migrate', 'token', 'org', 'user', 'repo', 'proposals', 'conformance']) {
      const r = await pactum([name, '--help'], { ...env, PORT: '1' }); // a serve that ran would fail on port 1
      expect(r.code, name).toBe(0);
      expect(r.stdout, name).toMatch(new RegExp(`^Usage:\\n  pactum ${name}`));
      expect(r.stderr, name).toBe('');
    }
    const all = await pactum(['--help'], env);
    expect(all.code).toBe(0);
    expect(all.stdout).toContain('pactum <command> --help');
   }, 180_000);
});

describe('which server the CLI manages', () => {
  // Nothing from the environment: where the database is comes from the directory and pactum.env.
  const bare = { DATA_DIR: '', DATABASE_URL: '' };

  it('refuses a read command where there is no database, naming where it looked, and creates nothing', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'pactum-elsewhere-'));
    for (const args of [['user', 'list'], ['org', 'list'], ['repo', 'list'], ['user', 'tokens', 'ada'], ['token', '--user', 'ada']]) {
      const r = await pactum(args, bare, undefined, { cwd: elsewhere });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout, args.join(' ')).toBe('');
      expect(r.stderr, args.join(' ')).toContain(`no pactum database here: looked for SQLite ${join(elsewhere, 'data', 'pactum.sqlite')} (DATA_DIR unset: ./data of the working directory; no pactum.env here or above)`);
    }
    expect(existsSync(join(elsewhere, 'data'))).toBe(false);
    // A command that creates says which database it started.
    const created = await pactum(['org', 'create', 'acme'], bare, undefined, { cwd: elsewhere });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain(`pactum: started a new database: SQLite ${join(elsewhere, 'data', 'pactum.sqlite')}`);
    expect((await pactum(['org', 'list'], bare, undefined, { cwd: elsewhere })).stdout).toMatch(/^acme\t/m);
  }, 120_000);

  it('reads pactum.env from the working directory upward, or --config FILE; the environment wins', async () => {
    const home = mkdtempSync(join(tmpdir(), 'pactum-home-'));
    writeFileSync(join(home, 'pactum.env'), '# the server of this directory\nexport DATA_DIR=./srv-data\nLOG_LEVEL="error"\n');
    const deep = join(home, 'a', 'b');
    mkdirSync(deep, { recursive: true });
    const created = await pactum(['org', 'create', 'acme'], bare, undefined, { cwd: deep });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain(`started a new database: SQLite ${join(home, 'srv-data', 'pactum.sqlite')} (DATA_DIR from ${join(home, 'pactum.env')})`);
    expect((await pactum(['org', 'list'], bare, undefined, { cwd: join(home, 'a') })).stdout).toMatch(/^acme\t/m);
    const other = mkdtempSync(join(tmpdir(), 'pactum-other-'));
    expect((await pactum(['--config', join(home, 'pactum.env'), 'org', 'list'], bare, undefined, { cwd: other })).stdout).toMatch(/^acme\t/m);
    // DATA_DIR in the environment is taken over the file's.
    const overridden = await pactum(['org', 'list'], { ...bare, DATA_DIR: join(other, 'data') }, undefined, { cwd: deep });
    expect(overridden.code).toBe(2);
    expect(overridden.stderr).toContain(`(DATA_DIR from the environment)`);
    const missing = await pactum(['--config', join(other, 'nope.env'), 'org', 'list'], bare, undefined, { cwd: other });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--config .*nope\.env: no such file/);
  }, 120_000);

  it('refuses a mistyped name in pactum.env, and serve reads the same file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pactum-typo-'));
    writeFileSync(join(dir, 'pactum.env'), 'DATA_DIRR=./data\n');
    const r = await pactum(['org', 'list'], bare, undefined, { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([`pactum org: ${join(dir, 'pactum.env')}:1: DATA_DIRR is not a setting (did you mean DATA_DIR?); docs/configuration.md lists them`]);
    writeFileSync(join(dir, 'pactum.env'), 'PORT=eighty\n');
    const serve = await pactum(['serve'], bare, undefined, { cwd: dir });
    expect(serve.code).toBe(2);
    expect(serve.stderr).toMatch(/PORT/);
  }, 120_000);
});

describe('pactum serve with a bad setting', () => {
  /** One line on stderr, naming the setting; exit 2; nothing else printed. */
  async function refused(extra: Record<string, string>, message: RegExp) {
    const port = String(await freePort());
    const r = await pactum(['serve'], { DATA_DIR: mkdtempSync(join(tmpdir(), 'pactum-bad-')), PORT: port, LOG_LEVEL: 'info', ...extra });
    expect(r.code, JSON.stringify(extra)).toBe(2);
    expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
    return { ...r, port: Number(port) };
  }

  it('exits with one line naming the setting, before or after listening, and the port is free again', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'pactum-file-')), 'plain-file');
    writeFileSync(file, 'not a directory');
    await refused({ SECRETS_KEY: 'short' }, /^pactum serve: SECRETS_KEY must be 32 bytes/);
    await refused({ TRANSFER_TOKEN_SECRET: 'short' }, /^pactum serve: TRANSFER_TOKEN_SECRET must be 32 bytes/);
    await refused({ JWT_SECRET: 'short' }, /^pactum serve: invalid configuration: JWT_SECRET/);
    await refused({ DATA_DIR: file }, /^pactum serve: DATA_DIR .*plain-file: is not a directory/);
    await refused({ DATA_DIR: join(file, 'below') }, /^pactum serve: DATA_DIR .*plain-file\/below: a part of the path is a file, not a directory/);
    await refused({ DATA_DIR: '/proc/pactum-nope/data' }, /^pactum serve: DATA_DIR \/proc\/pactum-nope\/data: cannot be created/); // Node 20's recursive mkdir never returns here
    await refused({ STORAGE: 's3' }, /^pactum serve: invalid configuration: S3_BUCKET: required when STORAGE=s3/);

    // Found after listening: the database cannot be reached. The password is never printed.
    const dead = await freePort();
    const db = await refused({ DATABASE_URL: `postgres://pactum:sekret-pw@127.0.0.1:${dead}/pactum` }, /^pactum serve: DATABASE_URL: cannot use 127\.0\.0\.1:\d+\/pactum: nothing listens there \(ECONNREFUSED\)$/m);
    expect(db.stderr).not.toContain('sekret-pw');
    await expectFree(db.port);

    // The port is taken.
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const taken = (holder.address() as AddressInfo).port;
    await refused({ PORT: String(taken) }, new RegExp(`^pactum serve: PORT ${taken}: 127\\.0\\.0\\.1:${taken} is in use`));
    holder.close();
   }, 240_000);
});

async function expectFree(port: number) {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(port, '127.0.0.1', resolve);
  });
  await new Promise((r) => probe.close(r));
}

describe('pactum serve while it starts', () => {
  /**
   * A gate in front of PostgreSQL: connections are accepted at once but their bytes wait until
   * open() (or are cut by fail()), so the server listens while its migrations cannot run yet.
   */
  async function gate() {
    const held: { client: Socket; chunks: Buffer[] }[] = [];
    let state: 'closed' | 'open' | 'failed' = 'closed';
    const pipe = (h: (typeof held)[number]) => {
      const upstream = connect(5432, '127.0.0.1');
      for (const c of h.chunks) upstream.write(c);
      h.client.pipe(upstream).pipe(h.client);
      h.client.on('error', () => upstream.destroy());
      upstream.on('error', () => h.client.destroy());
    };
    const server = createServer((client) => {
      client.on('error', () => {});
      if (state === 'failed') return void client.destroy();
      const h = { client, chunks: [] as Buffer[] };
      if (state === 'open') return pipe(h);
      client.on('data', (d: Buffer) => h.chunks.push(d));
      held.push(h);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return {
      port: (server.address() as AddressInfo).port,
      open() {
        state = 'open';
        for (const h of held.splice(0)) {
          h.client.removeAllListeners('data');
          pipe(h);
        }
      },
      fail() {
        state = 'failed';
        for (const h of held.splice(0)) h.client.destroy();
      },
      close: () => new Promise((r) => server.close(r)),
    };
  }

  /** Starts `pactum serve` and resolves once its port accepts connections (before it is ready). */
  async function startServing(databaseUrl: string) {
    const port = await freePort();
    const run = pactum(['serve'], { DATA_DIR: mkdtempSync(join(tmpdir(), 'pactum-start-')), PORT: String(port), DATABASE_URL: databaseUrl, LOG_LEVEL: 'info' });
    for (;;) {
      const up = await new Promise<boolean>((resolve) => {
        const s = connect(port, '127.0.0.1', () => { s.destroy(); resolve(true); });
        s.on('error', () => resolve(false));
      });
      if (up) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    return { port, run };
  }

  it('holds requests until it is ready and then answers them', async () => {
    const g = await gate();
    const name = `${TEST_DB_PREFIX}start_${process.pid}`;
    await ensureDatabase(name);
    const { port, run } = await startServing(databaseUrlFor(name).replace(':5432/', `:${g.port}/`));
    // Sent while the migrations wait at the gate: answered once the server is ready.
    const early = fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(60_000) });
    await new Promise((r) => setTimeout(r, 300));
    g.open();
    const res = await early;
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok' });
    process.kill((await runPid(port))!, 'SIGTERM');
    expect((await run).code).toBe(0);
    await g.close();
  });

  it('cuts the requests it held when the start fails, and exits', async () => {
    const g = await gate();
    const { port, run } = await startServing(`postgres://pactum:sekret-pw@127.0.0.1:${g.port}/pactum`);
    const early = fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(60_000) }).then(
      (r) => `status ${r.status}`,
      (err: Error) => `error ${(err.cause as NodeJS.ErrnoException | undefined)?.code ?? err.name}`,
    );
    await new Promise((r) => setTimeout(r, 300));
    g.fail();
    expect(await early).not.toMatch(/TimeoutError/);
    const r = await run;
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^pactum serve: DATABASE_URL: cannot use 127\.0\.0\.1:\d+\/pactum/);
    expect(r.stderr).not.toContain('sekret-pw');
    await expectFree(port);
    await g.close();
  });
});

/** The pid of the process listening on a port (Linux: ss). */
async function runPid(port: number): Promise<number | null> {
  const { execFileSync } = await import('node:child_process');
  const out = execFileSync('ss', ['-ltnpH', `sport = :${port}`], { encoding: 'utf8' });
  const m = /pid=(\d+)/.exec(out);
  return m ? Number(m[1]) : null;
}

