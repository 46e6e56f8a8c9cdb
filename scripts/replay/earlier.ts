/**
 * The attacks and faults found by earlier reviews: a demoted admin's old token, a token for a user
 * that does not exist, username enumeration by timing, password guessing, remembered credentials
 * after a password change, a transfer after its grant was revoked, a service connection aimed at
 * loopback, a trickled body, git-lfs's "ref": {}, two spellings of one lock path, and downloads
 * dropped mid-way.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, request } from 'node:http';
import { connect } from 'node:net';
import { LFS_JSON, PROBE, alive, basic, batch, call, mcp, reason, report, text, withPactum } from './harness.js';

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

export default async function earlier(dist: string) {
  await withPactum(dist, {
    // Short windows so the slow-body attack is judged in seconds (an older build ignores them).
    HTTP_MIN_BODY_RATE: '1024',
    HTTP_BODY_RATE_WINDOW_MS: '2000',
  }, async ({ run, start }) => {
  const org = /\((org_[a-z0-9]+)\)/.exec(run(['org', 'create', 'acme']))![1]!;
  run(['user', 'create', 'ada', '--org', 'acme', '--admin', '--password-stdin'], 'ada-password-123\n');
  run(['user', 'create', 'boss', '--org', 'acme', '--role', 'org_admin', '--password-stdin'], 'boss-password-123\n');
  run(['user', 'create', 'bob', '--org', 'acme', '--role', 'member', '--password-stdin'], 'bob-password-123\n');
  run(['repo', 'create', 'acme/site']);
  run(['repo', 'grant', 'acme/site', 'bob', 'write']);
  const adaToken = run(['token', '--user', 'ada']);
  const bossToken = run(['token', '--user', 'boss']);
  const { url } = await start();
  const lfs = `${url}/acme/site.git/info/lfs`;
  try {
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
    // Newer CLIs refuse to sign it at all; the server's own answer is what counts when one does.
    let ghost: string | null = null;
    try {
      ghost = run(['token', '--sub', 'usr_doesnotexist0000000000', '--org', org, '--role', 'org_admin']);
    } catch {
      report('token for a usr_ that does not exist lists users', 'refused: the CLI will not sign it');
    }
    if (ghost) {
      const ghostList = await mcp(url, ghost).then((c) => call(c, 'dashboard_list_users', {})).catch((e: Error) => ({ ok: false, text: e.message }));
      report('token for a usr_ that does not exist lists users', ghostList.ok ? 'ACCEPTED (hole)' : `refused: ${reason(ghostList.text)}`);
    }

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
    // withPactum stops the server and removes its data.
  }
  });
}

