/**
 * Replays the attacks and faults of issues 13 and 14 against one build of pactum and prints, per
 * attack, what the server did. Run it against today's build and an older one side by side to
 * see a hole close:
 *
 *   make build && npx tsx scripts/security-replay.ts                 # ./dist
 *   git worktree add /tmp/old <commit> && (cd /tmp/old && ln -s $PWD/node_modules . && npx tsc -p tsconfig.build.json)
 *   npx tsx scripts/security-replay.ts /tmp/old/dist
 *
 * Each line is "attack: result", where the result is what a client saw. The script starts its own
 * server (a fresh DATA_DIR, SQLite, fs store) and sets it up through the same build's CLI.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

const dist = resolve(process.argv[2] ?? 'dist');
const cli = join(dist, 'src', 'cli', 'main.js');
const dataDir = mkdtempSync(join(tmpdir(), 'security-replay-'));
// Tokens name the server's URL as their audience, so the CLI must know the port before it signs.
const port = await new Promise<number>((ok) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const p = (probe.address() as { port: number }).port;
    probe.close(() => ok(p));
  });
});
const env = {
  ...process.env,
  DATA_DIR: dataDir,
  PORT: String(port),
  LOG_LEVEL: 'silent',
  // Short windows so the slow-body attack is judged in seconds (an older build ignores them).
  HTTP_MIN_BODY_RATE: '1024',
  HTTP_BODY_RATE_WINDOW_MS: '2000',
};
const run = (args: string[], input?: string) => execFileSync(process.execPath, [cli, ...args], { env, input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'ignore'] }).trim();

function report(attack: string, result: string) {
  console.log(`${attack.padEnd(72)} ${result}`);
}

async function startServer(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [cli, 'serve'], { env: { ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'ignore'] });
  const url = await new Promise<string>((ok, fail) => {
    let buf = '';
    child.once('exit', (code) => fail(new Error(`serve exited with ${code}`)));
    child.stdout.on('data', (d) => {
      buf += d;
      const m = /"url":"([^"]+)"/.exec(buf);
      if (m) ok(m[1]!);
    });
  });
  child.stdout.resume();
  return { url, child };
}

/** The message of a refusal, whether a tool error result or an HTTP error the transport threw. */
const reason = (t: string) => /"message":"([^"]{0,70})/.exec(t)?.[1] ?? t.slice(0, 70);
const text = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;
async function mcp(url: string, token: string) {
  const client = new Client({ name: 'security-replay', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/api/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}
async function call(client: Client, name: string, args: Record<string, unknown>) {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { ok: !r.isError, text: text(r) };
}

/** A download batch naming one absent object (older builds refused an empty list). */
const PROBE = { operation: 'download', objects: [{ oid: 'a'.repeat(64), size: 1 }] };
const LFS_JSON = 'application/vnd.git-lfs+json';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

interface Action { href: string; header: Record<string, string> }
/** What the replay reads of a batch answer. */
interface BatchAnswer { objects: { actions?: { upload?: Action; download?: Action } }[] }

async function batch(lfs: string, auth: string | null, body: unknown) {
  const res = await fetch(`${lfs}/objects/batch`, {
    method: 'POST',
    headers: { accept: LFS_JSON, 'content-type': LFS_JSON, ...(auth ? { authorization: auth } : {}) },
    // A ref, which older builds required, unless the attack is about the ref itself.
    body: JSON.stringify({ ref: { name: 'refs/heads/main' }, ...(body as object) }),
  });
  return { status: res.status, json: (await res.json().catch(() => null)) as BatchAnswer | null };
}

async function alive(url: string) {
  try {
    return (await fetch(`${url}/healthz`)).status === 200;
  } catch {
    return false;
  }
}

/** Starts a download and destroys the socket after the first bytes. */
function dropDownload(href: string, headers: Record<string, string>) {
  return new Promise<void>((done) => {
    const req = request(href, { headers }, (res) => {
      res.once('data', () => {
        req.destroy();
        done();
      });
      res.once('error', () => done());
    });
    req.on('error', () => done());
    req.end();
  });
}

async function main() {
  const org = /\((org_[a-z0-9]+)\)/.exec(run(['org', 'create', 'acme']))![1]!;
  run(['user', 'create', 'ada', '--org', 'acme', '--admin', '--password-stdin'], 'ada-password-123\n');
  run(['user', 'create', 'boss', '--org', 'acme', '--role', 'org_admin', '--password-stdin'], 'boss-password-123\n');
  run(['user', 'create', 'bob', '--org', 'acme', '--role', 'member', '--password-stdin'], 'bob-password-123\n');
  run(['repo', 'create', 'acme/site']);
  run(['repo', 'grant', 'acme/site', 'bob', 'write']);
  const adaToken = run(['token', '--user', 'ada']);
  const bossToken = run(['token', '--user', 'boss']);
  const { url, child } = await startServer();
  const lfs = `${url}/acme/site.git/info/lfs`;
  try {
    console.log(`build ${dist}\n`);
    // 14 §1: a demoted org admin's old token.
    const admin = await mcp(url, adaToken);
    const listed = JSON.parse(text(await admin.callTool({ name: 'dashboard_list_users', arguments: {} }))) as Record<string, unknown>;
    const users = Object.values(listed).find(Array.isArray) as { id: string; username: string }[];
    const bossId = users.find((u) => u.username === 'boss')!.id;
    await call(admin, 'dashboard_update_user', { userId: bossId, role: 'member' });
    const demoted = await mcp(url, bossToken).catch(() => null);
    const backdoor = demoted ? await call(demoted, 'dashboard_create_user', { username: 'backdoor', password: 'backdoor-pass-1', role: 'org_admin' }).catch((e: Error) => ({ ok: false, text: e.message })) : { ok: false, text: 'refused at connect' };
    report('demoted org_admin creates an org_admin with its old token', backdoor.ok ? 'CREATED (hole)' : `refused: ${reason(backdoor.text)}`);

    // 14 §1: a usr_ subject that does not exist.
    const ghost = run(['token', '--sub', 'usr_doesnotexist0000000000', '--org', org, '--role', 'org_admin']);
    const ghostList = await mcp(url, ghost).then((c) => call(c, 'dashboard_list_users', {})).catch((e: Error) => ({ ok: false, text: e.message }));
    report('token for a usr_ that does not exist lists users', ghostList.ok ? 'ACCEPTED (hole)' : `refused: ${reason(ghostList.text)}`);

    // 14 §3: timing of unknown vs known usernames (4 each, under every throttle threshold).
    const timeOf = async (user: string) => {
      const t0 = performance.now();
      await batch(lfs, basic(user, 'wrong-password'), PROBE);
      return performance.now() - t0;
    };
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 4; i++) {
      known.push(await timeOf('boss'));
      unknown.push(await timeOf(`nobody${i}`));
    }
    report('wrong password: known vs unknown username, median ms', `${median(known).toFixed(0)} vs ${median(unknown).toFixed(0)} (ratio ${(median(known) / median(unknown)).toFixed(2)})`);

    // 14 §3: 60 wrong Basic passwords for one user.
    const statuses = new Map<number, number>();
    for (let i = 0; i < 60; i++) {
      const s = (await batch(lfs, basic('bob', `guess-${i}`), PROBE)).status;
      statuses.set(s, (statuses.get(s) ?? 0) + 1);
    }
    const bobPat = run(['user', 'token', 'bob', '--name', 'laptop']).split('\n')[0]!;
    const patWhileGuessed = (await batch(lfs, basic('bob', bobPat), PROBE)).status;
    report('60 wrong Basic passwords for bob: statuses', `${[...statuses].map(([s, n]) => `${n}×${s}`).join(', ')}; bob's token then ${patWhileGuessed}`);

    // 14 §2: remembered Basic credentials after `pactum user passwd`.
    run(['user', 'create', 'carol', '--org', 'acme', '--role', 'member', '--password-stdin'], 'carol-password-1\n');
    run(['repo', 'grant', 'acme/site', 'carol', 'write']);
    const first = (await batch(lfs, basic('carol', 'carol-password-1'), PROBE)).status;
    run(['user', 'passwd', 'carol', '--password-stdin'], 'carol-password-2\n');
    const after = (await batch(lfs, basic('carol', 'carol-password-1'), PROBE)).status;
    report('old Basic password right after `pactum user passwd`', `${first} before, ${after} after${after === 200 ? ' (hole)' : ''}`);

    // 14 §2: a transfer token after `pactum repo revoke`.
    const body = randomBytes(64 * 1024);
    const oid = createHash('sha256').update(body).digest('hex');
    const up = await batch(lfs, basic('carol', 'carol-password-2'), { operation: 'upload', transfers: ['basic'], objects: [{ oid, size: body.length }] });
    const action = up.json?.objects?.[0]?.actions?.upload;
    run(['repo', 'revoke', 'acme/site', 'carol']);
    const put = action ? (await fetch(action.href, { method: 'PUT', headers: { ...action.header, 'content-type': 'application/octet-stream' }, body })).status : 0;
    report('PUT with a batch action after the grant was revoked', `${put}${put === 200 ? ' (hole)' : ''}`);

    // 14 §4: a service connection pointed at loopback.
    let canaryHits = 0;
    const canary = createServer((req, res) => {
      canaryHits++;
      res.writeHead(500).end();
    });
    await new Promise<void>((ok) => canary.listen(0, '127.0.0.1', ok));
    const canaryUrl = `http://127.0.0.1:${(canary.address() as { port: number }).port}`;
    const created = await call(admin, 'dashboard_create_service_connection', { serviceId: 'compliance', url: canaryUrl, clientId: 'x', clientSecret: 'the-client-secret' });
    if (created.ok) await call(admin, 'dashboard_test_service_connection', { serviceId: 'compliance' });
    report('service connection at loopback: requests reaching it', `${canaryHits}${canaryHits ? ' (hole: the client secret went there)' : created.ok ? '' : ` (create refused: ${created.text.slice(0, 50)})`}`);
    canary.close();

    // 14 §6: a body trickled at 100 bytes/s.
    const trickle = await new Promise<string>((done) => {
      const u = new URL(`${lfs}/objects/batch`);
      const sock = connect(Number(u.port), u.hostname, () => {
        sock.write(`POST ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: ${LFS_JSON}\r\nAccept: ${LFS_JSON}\r\nContent-Length: 100000\r\n\r\n`);
        const started = Date.now();
        const tick = setInterval(() => {
          if (Date.now() - started > 12_000) {
            clearInterval(tick);
            sock.destroy();
            done('still connected after 12 s (hole)');
          } else sock.write(Buffer.alloc(100, 0x20));
        }, 1000);
        sock.once('close', () => {
          clearInterval(tick);
          done(`cut after ${((Date.now() - started) / 1000).toFixed(0)} s`);
        });
        sock.on('error', () => {});
      });
    });
    report('request body trickled at 100 B/s', trickle);

    // 13 §2: git-lfs's compliance tool sends "ref": {}.
    const refEmpty = (await batch(lfs, basic('ada', 'ada-password-123'), { operation: 'download', ref: {}, objects: [{ oid, size: body.length }] })).status;
    report('batch with "ref": {} (git-lfs-test-server-api)', String(refEmpty));

    // 13 §2: two spellings of one lock path.
    const lock = async (path: string) =>
      (await fetch(`${lfs}/locks`, { method: 'POST', headers: { accept: LFS_JSON, 'content-type': LFS_JSON, authorization: basic('ada', 'ada-password-123') }, body: JSON.stringify({ path }) })).status;
    report('lock "a/b.psd", then "./a//b.psd"', `${await lock('a/b.psd')}, then ${await lock('./a//b.psd')}`);

    // 13 §1: twenty downloads dropped after their first bytes, then a full one.
    const big = randomBytes(32 * 1024 * 1024);
    const bigOid = createHash('sha256').update(big).digest('hex');
    const adaAuth = basic('ada', 'ada-password-123');
    const upBig = await batch(lfs, adaAuth, { operation: 'upload', transfers: ['basic'], objects: [{ oid: bigOid, size: big.length }] });
    const upAction = upBig.json!.objects[0]!.actions!.upload!;
    await fetch(upAction.href, { method: 'PUT', headers: { ...upAction.header, 'content-type': 'application/octet-stream' }, body: big });
    let survived = 0;
    for (let i = 0; i < 20; i++) {
      const dl = await batch(lfs, adaAuth, { operation: 'download', objects: [{ oid: bigOid, size: big.length }] }).catch(() => null);
      const a = dl?.json?.objects?.[0]?.actions?.download;
      if (!a) break;
      await dropDownload(a.href, i % 2 ? { ...a.header, range: 'bytes=1000-' } : a.header);
      await new Promise((r) => setTimeout(r, 100));
      if (await alive(url)) survived++;
      else break;
    }
    let verified = 'no full download';
    if (await alive(url)) {
      const dl = await batch(lfs, adaAuth, { operation: 'download', objects: [{ oid: bigOid, size: big.length }] });
      const a = dl.json!.objects[0]!.actions!.download!;
      const bytes = Buffer.from(await (await fetch(a.href, { headers: a.header })).arrayBuffer());
      verified = createHash('sha256').update(bytes).digest('hex') === bigOid ? 'full download verifies' : 'full download CORRUPT';
    }
    report('20 downloads (full and ranged) dropped after their first bytes', `server alive after ${survived} of 20; ${verified}`);
  } finally {
    child.kill('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
