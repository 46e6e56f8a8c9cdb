/**
 * Credentials that outlived what should have ended them, and the object store's limits on what a
 * writer leaves behind: a bearer JWT after a password reset; a personal token after its user was
 * deactivated and reactivated; an object re-uploaded after a takedown; an upload href replayed
 * after its object was committed; 50 resumable uploads declaring 1 TB each; a DATA_DIR that
 * others may read at start-up.
 */
import { chmodSync, statSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { basic, batch, call, mcp, report, withPactum, type Action } from './harness.js';

const TB = 10 ** 12;

/** The status of an MCP tools/list with this bearer token. */
async function mcpStatus(url: string, token: string) {
  const res = await fetch(`${url}/api/v1/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  await res.body?.cancel();
  return res.status;
}

const put = async (a: Action, body: Buffer) => {
  const r = await fetch(a.href, { method: 'PUT', headers: { ...a.header, 'content-type': 'application/octet-stream' }, body: new Uint8Array(body) });
  await r.body?.cancel();
  return r.status;
};

interface BatchObject { actions?: { upload?: Action; download?: Action }; error?: { code: number } }
const firstObject = (answer: Awaited<ReturnType<typeof batch>>): BatchObject | undefined => answer.json?.objects?.[0];

export default async function sharedServiceCredentials(dist: string) {
  await withPactum(dist, {}, async ({ run, start }) => {
    run(['org', 'create', 'acme']);
    run(['user', 'create', 'ada', '--org', 'acme', '--admin', '--password-stdin'], 'ada-password-123\n');
    run(['user', 'create', 'bob', '--org', 'acme', '--role', 'member', '--password-stdin'], 'bob-password-123\n');
    run(['user', 'create', 'wes', '--org', 'acme', '--role', 'member', '--password-stdin'], 'wes-password-123\n');
    run(['repo', 'create', 'acme/site']);
    run(['repo', 'grant', 'acme/site', 'bob', 'read']);
    run(['repo', 'grant', 'acme/site', 'wes', 'write']);
    const adaToken = run(['token', '--user', 'ada']);
    const bobJwt = run(['token', '--user', 'bob']);
    const bobPat = run(['user', 'token', 'bob', '--name', 'laptop']).split('\n')[0]!;
    const { url } = await start();
    const lfs = `${url}/acme/site.git/info/lfs`;
    const wes = basic('wes', 'wes-password-123');

    // A bearer JWT minted before `pactum user passwd`.
    const jwtBefore = await mcpStatus(url, bobJwt);
    run(['user', 'passwd', 'bob', '--password-stdin'], 'bob-password-456\n');
    const jwtAfter = await mcpStatus(url, bobJwt);
    report('old bearer JWT after `pactum user passwd`', `${jwtBefore} before, ${jwtAfter} after${jwtAfter === 200 ? ' (hole)' : ''}`);

    // A personal token across deactivation and reactivation.
    const admin = await mcp(url, adaToken);
    const users = JSON.parse((await call(admin, 'dashboard_list_users', {})).text) as { users: { id: string; username: string }[] };
    const bobId = users.users.find((u) => u.username === 'bob')!.id;
    const patStatus = async () => (await batch(lfs, basic('bob', bobPat), { operation: 'download', objects: [{ oid: 'a'.repeat(64), size: 1 }] })).status;
    const patBefore = await patStatus();
    await call(admin, 'dashboard_update_user', { userId: bobId, active: false });
    const patOff = await patStatus();
    await call(admin, 'dashboard_update_user', { userId: bobId, active: true });
    const patAgain = await patStatus();
    report('personal token after deactivate + reactivate', `${patBefore} before, ${patOff} while off, ${patAgain} after${patAgain === 200 ? ' (hole)' : ''}`);
    await admin.close();

    // Re-uploading an object after `pactum repo delete-object`.
    const body = randomBytes(32 * 1024);
    const oid = createHash('sha256').update(body).digest('hex');
    const upload = { operation: 'upload', transfers: ['basic'], objects: [{ oid, size: body.length }] };
    const first = firstObject(await batch(lfs, wes, upload))!.actions!.upload!;
    await put(first, body);
    run(['repo', 'delete-object', 'acme/site', oid, '--reason', 'takedown request #1']);
    const again = firstObject(await batch(lfs, wes, upload));
    const reput = again?.actions?.upload ? await put(again.actions.upload, body) : await put(first, body);
    const served = firstObject(await batch(lfs, wes, { operation: 'download', objects: [{ oid, size: body.length }] }));
    report(
      're-upload of an object after `pactum repo delete-object`',
      served?.actions?.download ? `batch ${again?.error?.code ?? 'gave actions'}, PUT ${reput}: served again (hole)` : `batch object error ${again?.error?.code ?? '-'}, PUT ${reput}; still 410`,
    );

    // Replaying an upload href after its object was committed.
    const other = randomBytes(32 * 1024);
    const otherOid = createHash('sha256').update(other).digest('hex');
    const action = firstObject(await batch(lfs, wes, { operation: 'upload', transfers: ['basic'], objects: [{ oid: otherOid, size: other.length }] }))!.actions!.upload!;
    const committed = await put(action, other);
    const replayed = await put(action, other);
    report('upload href replayed after its object was committed', `${committed}, then ${replayed}${replayed === 200 ? ' (hole: the body was read and stored again)' : ''}`);

    // 50 resumable uploads, each declaring 1 TB, each started with one byte (default settings).
    const objects = Array.from({ length: 50 }, () => ({ oid: randomBytes(32).toString('hex'), size: TB }));
    const answer = await batch(lfs, wes, { operation: 'upload', transfers: ['tus', 'basic'], objects });
    const statuses = new Map<number, number>();
    for (const o of (answer.json?.objects ?? []) as BatchObject[]) {
      const a = o.actions?.upload;
      if (!a) continue;
      const r = await fetch(a.href.replace('/content/', '/tus/'), {
        method: 'PATCH',
        headers: { ...a.header, 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
        body: new Uint8Array([0x78]),
      });
      await r.body?.cancel();
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    }
    const started = statuses.get(204) ?? 0;
    report('50 tus uploads declaring 1 TB each (default settings)', `${[...statuses].map(([s, n]) => `${n}×${s}`).join(', ')}${started ? ` (hole: ${started} TB declared)` : ''}`);
  });

  // A DATA_DIR others may read, at start-up (nothing else has opened it first).
  await withPactum(dist, {}, async ({ dataDir, start }) => {
    chmodSync(dataDir, 0o755);
    let outcome: string;
    try {
      await start();
      const mode = (statSync(dataDir).mode & 0o777).toString(8).padStart(4, '0');
      outcome = mode === '0700' ? 'served; DATA_DIR tightened to 0700' : `served with DATA_DIR at ${mode} (hole)`;
    } catch (err) {
      outcome = `refused: ${(err as Error).message}`;
    }
    report('start on a DATA_DIR with mode 0755', outcome);
  });
}
