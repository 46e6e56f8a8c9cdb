/**
 * The metrics of refusals and failures, each moved by the event itself: a revoked or changed
 * credential refused (pactum_auth_revoked_refusals_total), the object storage failing
 * (pactum_storage_errors_total: an S3 service that does not answer, a file system that refuses
 * writes, a hashing thread that fails), and the bytes unfinished tus uploads hold
 * (pactum_object_tus_partial_bytes: raised by a partial upload, lowered when it completes or
 * lapses, when the store's sweep removes its bytes).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { bearer, mcpClient, ok } from '../helpers/mcp.js';
import { createPersonalToken, revokePersonalTokens } from '../../src/db/repos.js';
import { revokeSession } from '../../src/auth/sessions.js';

const TOKEN = 'metrics-faults-token-0123456789';
const GIT_LFS = 'application/vnd.git-lfs+json';
const PASSWORD = 'wally-password-1';
const W = `Basic ${Buffer.from(`wally:${PASSWORD}`).toString('base64')}`;

const content = (n: number) => {
  const bytes = randomBytes(n);
  return { bytes, oid: createHash('sha256').update(bytes).digest('hex'), size: n };
};

async function scrape(s: TestServer) {
  const res = await fetch(`${s.directUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  return res.text();
}

/** The sum of the series of `name` whose labels include `labels` (0 when there is none). */
function value(text: string, name: string, labels: Record<string, string> = {}) {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

/** How much each scrape-to-scrape change of a series was, around `what`. */
async function deltaAround(s: TestServer, what: () => Promise<void>) {
  const before = await scrape(s);
  await what();
  const after = await scrape(s);
  return (name: string, labels: Record<string, string> = {}) => value(after, name, labels) - value(before, name, labels);
}

type Actions = Record<string, { href: string; header: Record<string, string> }>;

async function batch(s: TestServer, operation: 'upload' | 'download', objects: { oid: string; size: number }[], transfers = ['basic'], auth = W): Promise<Actions[]> {
  const res = await fetch(`${s.directUrl}/acme/site.git/info/lfs/objects/batch`, {
    method: 'POST',
    headers: { authorization: auth, accept: GIT_LFS, 'content-type': GIT_LFS },
    body: JSON.stringify({ operation, transfers, objects }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { objects: { actions: Actions }[] }).objects.map((o) => o.actions);
}

const put = (a: Actions[string], body: Buffer) => fetch(a.href, { method: 'PUT', headers: a.header, body: new Uint8Array(body) });

describe('pactum_auth_revoked_refusals_total', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ METRICS_TOKEN: TOKEN });
  });
  afterAll(() => s?.stop());
  afterEach(() => s.expectConformant());

  it('counts, by API, the requests refused because their credential was revoked or changed, and nothing else', async () => {
    const { user } = await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: PASSWORD, access: 'write' });
    const root = await mcpClient(s.url, bearer(await s.token({ sub: 'usr_root', orgId: user.orgId, perms: ['admin.system'] })));
    const mcpStatus = async (token: string) => {
      const res = await fetch(`${s.directUrl}/api/v1/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      await res.body?.cancel();
      return res.status;
    };
    const o = content(1000);
    const wallyToken = await s.services.tokens.sign({ sub: user.id, orgId: user.orgId, role: 'member' }, 600);
    const [upload] = await batch(s, 'upload', [{ oid: o.oid, size: o.size }]);
    expect(await mcpStatus(wallyToken)).toBe(200);

    // Refusals that are not revocations: a token that was never valid, a user that never existed.
    const unrelated = await deltaAround(s, async () => {
      expect(await mcpStatus('not.a.token')).toBe(401);
      expect(await mcpStatus(await s.services.tokens.sign({ sub: 'usr_01nobody00000000000000000', orgId: user.orgId }, 600))).toBe(401);
      expect((await fetch(`${s.directUrl}/acme/site.git/info/lfs/locks`, { headers: { accept: GIT_LFS, authorization: `Basic ${Buffer.from('wally:wrong-password').toString('base64')}` } })).status).toBe(401);
    });
    expect(unrelated('pactum_auth_revoked_refusals_total')).toBe(0);

    // The password changes: the bearer token minted before it (dashboard) and the transfer token
    // the batch handed out (objects) are refused.
    const changed = await deltaAround(s, async () => {
      ok(await root.callTool({ name: 'dashboard_update_user', arguments: { userId: user.id, password: 'wally-password-2' } }));
      expect(await mcpStatus(wallyToken)).toBe(401);
      const refused = await put(upload!.upload!, o.bytes);
      expect(refused.status).toBe(401);
      expect(await refused.text()).toMatch(/changed or revoked/);
    });
    expect(changed('pactum_auth_revoked_refusals_total', { api: 'dashboard' })).toBe(1);
    expect(changed('pactum_auth_revoked_refusals_total', { api: 'objects' })).toBe(1);
    expect(changed('pactum_auth_revoked_refusals_total')).toBe(2);

    // Access to the repository is withdrawn under a transfer token (403), and the user deactivated.
    const W2 = `Basic ${Buffer.from('wally:wally-password-2').toString('base64')}`;
    const [again] = await batch(s, 'upload', [{ oid: o.oid, size: o.size }], ['basic'], W2);
    const freshToken = await s.services.tokens.sign({ sub: user.id, orgId: user.orgId, role: 'member' }, 600);
    const withdrawn = await deltaAround(s, async () => {
      await s.services.db('repo_grants').where({ user_id: user.id }).delete();
      expect((await put(again!.upload!, o.bytes)).status).toBe(403);
      ok(await root.callTool({ name: 'dashboard_update_user', arguments: { userId: user.id, active: false } }));
      expect(await mcpStatus(freshToken)).toBe(401);
    });
    expect(withdrawn('pactum_auth_revoked_refusals_total', { api: 'objects' })).toBe(1);
    expect(withdrawn('pactum_auth_revoked_refusals_total', { api: 'dashboard' })).toBe(1);
    await root.close();
  });

  it('counts a revoked personal token and a revoked or outdated session cookie, and not an expired token', async () => {
    const { user } = await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'pat', password: 'pat-password-1', access: 'read' });
    const locksWith = (authorization: string) =>
      fetch(`${s.directUrl}/acme/site.git/info/lfs/locks`, { headers: { accept: GIT_LFS, authorization } }).then(async (r) => (await r.body?.cancel(), r.status));
    const basic = (secret: string) => `Basic ${Buffer.from(`pat:${secret}`).toString('base64')}`;
    const login = async () => {
      const res = await fetch(`${s.directUrl}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'pat', password: 'pat-password-1' }) });
      expect(res.status).toBe(200);
      await res.body?.cancel();
      return /session=[^;]+/.exec(res.headers.get('set-cookie') ?? '')![0];
    };
    const withCookie = async (cookie: string) => {
      const res = await fetch(`${s.directUrl}/api/v1/mcp`, {
        method: 'POST',
        headers: { cookie, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      await res.body?.cancel();
      return res.status;
    };
    const kept = await createPersonalToken(s.services.db, user.id, 'kept');
    const dropped = await createPersonalToken(s.services.db, user.id, 'dropped');
    const lapsed = await createPersonalToken(s.services.db, user.id, 'lapsed', 60);
    await s.services.db('personal_tokens').where({ id: lapsed.id }).update({ expires_at: new Date(Date.now() - 1000).toISOString() });
    const signedOut = await login();
    const stale = await login();
    expect(await locksWith(basic(dropped.token))).toBe(200);
    // Remembered for a minute: the password is not checked again at every request.
    expect(await locksWith(basic('pat-password-1'))).toBe(200);
    expect(await withCookie(signedOut)).toBe(200);

    // Not revocations: an expired token, a session cookie nobody issued.
    const expired = await deltaAround(s, async () => {
      expect(await locksWith(basic(lapsed.token))).toBe(401);
      expect(await withCookie(`session=${'x'.repeat(43)}`)).toBe(401);
    });
    expect(expired('pactum_auth_revoked_refusals_total')).toBe(0);

    // The token is revoked; the session is signed out.
    const revoked = await deltaAround(s, async () => {
      expect(await revokePersonalTokens(s.services.db, user.id, 'dropped')).toBe(1);
      expect(await locksWith(basic(dropped.token))).toBe(401);
      await revokeSession(s.services.db, signedOut.slice('session='.length));
      expect(await withCookie(signedOut)).toBe(401);
    });
    expect(revoked('pactum_auth_revoked_refusals_total', { api: 'batch' })).toBe(1);
    expect(revoked('pactum_auth_revoked_refusals_total', { api: 'dashboard' })).toBe(1);

    // Revoking one token moved the user's credential version: a session from before is outdated
    // (a revocation); a new one works, and so do the token that was kept and the password, checked
    // again rather than refused.
    const outdated = await deltaAround(s, async () => {
      expect(await withCookie(stale)).toBe(401);
      expect(await withCookie(await login())).toBe(200);
      expect(await locksWith(basic(kept.token))).toBe(200);
      expect(await locksWith(basic('pat-password-1'))).toBe(200);
    });
    expect(outdated('pactum_auth_revoked_refusals_total', { api: 'dashboard' })).toBe(1);
    expect(outdated('pactum_auth_revoked_refusals_total')).toBe(1);
  });
});

describe('pactum_storage_errors_total', () => {
  it('counts an S3 service that does not answer as unavailable (the client gets 503 with Retry-After)', async () => {
    // A port that was free a moment ago: nothing answers there.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = probe.address() as { port: number };
        probe.close(() => resolve(p));
      });
    });
    const s = await startTestServer({
      METRICS_TOKEN: TOKEN, STORAGE: 's3', S3_ENDPOINT: `http://127.0.0.1:${port}`, S3_BUCKET: 'nowhere', S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: 'unused-key', S3_SECRET_ACCESS_KEY: 'unused-secret-0123456789', S3_FORCE_PATH_STYLE: 'true',
    });
    try {
      await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: PASSWORD, access: 'write' });
      const o = content(2000);
      const [a] = await batch(s, 'upload', [{ oid: o.oid, size: o.size }]);
      const delta = await deltaAround(s, async () => {
        const res = await put(a!.upload!, o.bytes);
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('5');
        await res.body?.cancel();
      });
      expect(delta('pactum_storage_errors_total', { kind: 'unavailable' })).toBe(1);
      expect(delta('pactum_storage_errors_total')).toBe(1);
      s.expectConformant();
    } finally {
      await s.stop();
    }
  }, 60_000);

  describe('on the file system', () => {
    let s: TestServer;
    beforeAll(async () => {
      // The file-system backend whatever the pass (the S3 pass would store elsewhere).
      s = await startTestServer({ METRICS_TOKEN: TOKEN, STORAGE: 'fs' });
      await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: PASSWORD, access: 'write' });
    });
    afterAll(() => s?.stop());
    afterEach(() => s.expectConformant());

    it('counts a file system that refuses the write as io (the client gets 503, never a bare 500), and the next upload works once it is back', async () => {
      const o = content(3000);
      const [a] = await batch(s, 'upload', [{ oid: o.oid, size: o.size }]);
      // Where uploads are written first, a file instead of a directory: every write fails, as on a
      // broken or read-only mount (root ignores permission bits, so chmod would not do).
      const tmp = join(s.dataDir, 'lfs', 'tmp');
      rmSync(tmp, { recursive: true, force: true });
      mkdirSync(join(tmp, '..'), { recursive: true });
      writeFileSync(tmp, 'not a directory');
      try {
        const delta = await deltaAround(s, async () => {
          const res = await put(a!.upload!, o.bytes);
          const body = (await res.json()) as { message: string };
          expect(res.status, body.message).toBe(503);
          expect(res.headers.get('retry-after')).toBe('5');
          // The error's code (EEXIST: mkdir met a file), never the server's path.
          expect(body.message).toMatch(/^The object storage failed \(E[A-Z]+\); retry in 5 s$/);
          expect(body.message).not.toContain(s.dataDir);
        });
        expect(delta('pactum_storage_errors_total', { kind: 'io' })).toBe(1);
        expect(delta('pactum_storage_errors_total')).toBe(1);
      } finally {
        rmSync(tmp);
      }
      expect(s.logLines.some((l) => l.includes('request failed on a server part') && l.includes(tmp)), 'the log names the path').toBe(true);
      expect((await put(a!.upload!, o.bytes)).status).toBe(200);
    });

    it('counts a full disk as no_space (the upload gets 507, its message naming no path)', async () => {
      const o = content(4000);
      const [a] = await batch(s, 'upload', [{ oid: o.oid, size: o.size }]);
      // What Node throws when a write meets a full disk, from the store the transfer writes to.
      const full = Object.assign(new Error(`ENOSPC: no space left on device, write '${s.dataDir}/lfs/tmp/x'`), { errno: -28, code: 'ENOSPC', syscall: 'write', path: `${s.dataDir}/lfs/tmp/x` });
      const failing = vi.spyOn(s.services.objects.store, 'put').mockRejectedValueOnce(full);
      try {
        const delta = await deltaAround(s, async () => {
          const res = await put(a!.upload!, o.bytes);
          const body = (await res.json()) as { message: string };
          expect([res.status, body.message]).toEqual([507, 'The object storage is full']);
        });
        expect(delta('pactum_storage_errors_total', { kind: 'no_space' })).toBe(1);
        expect(delta('pactum_storage_errors_total')).toBe(1);
      } finally {
        failing.mockRestore();
      }
    });
  });
});

describe('pactum_object_tus_partial_bytes', () => {
  const TTL_SECONDS = 600;
  for (const caps of [{ name: 'with the partial-upload caps', env: {} as Record<string, string> }, { name: 'with the caps off', env: { LFS_PARTIAL_BYTES_PER_REPO: '0', LFS_PARTIAL_BYTES_PER_ORG: '0' } }]) {
    describe(caps.name, () => {
      let s: TestServer;
      beforeAll(async () => {
        s = await startTestServer({ METRICS_TOKEN: TOKEN, TUS_PARTIAL_TTL_SECONDS: String(TTL_SECONDS), ...caps.env });
        await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: PASSWORD, access: 'write' });
      });
      afterAll(async () => {
        vi.useRealTimers();
        await s?.stop();
      });
      afterEach(() => s.expectConformant());

      it('rises by what an unfinished upload declares, falls when it completes, and when it lapses (as the sweep removes its bytes)', async () => {
        const done = content(5000);
        const left = content(7000);
        const [a, b] = await batch(s, 'upload', [done, left].map(({ oid, size }) => ({ oid, size })), ['tus']);
        // The same transfer token serves /content and /tus.
        const patch = (action: Actions[string], bytes: Buffer, offset: number) =>
          fetch(action.href.replace('/content/', '/tus/'), { method: 'PATCH', headers: { ...action.header, 'tus-resumable': '1.0.0', 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' }, body: new Uint8Array(bytes) });

        const base = value(await scrape(s), 'pactum_object_tus_partial_bytes');
        expect(base).toBe(0);
        expect((await patch(a!.upload!, done.bytes.subarray(0, 1000), 0)).status).toBe(204);
        expect((await patch(b!.upload!, left.bytes.subarray(0, 3000), 0)).status).toBe(204);
        expect(value(await scrape(s), 'pactum_object_tus_partial_bytes')).toBe(5000 + 7000);

        expect((await patch(a!.upload!, done.bytes.subarray(1000), 1000)).status).toBe(204);
        expect(value(await scrape(s), 'pactum_object_tus_partial_bytes')).toBe(7000);

        // The TTL passes with nothing appended: the upload no longer counts, and the sweep removes its bytes.
        vi.useFakeTimers({ toFake: ['Date'] });
        vi.setSystemTime(Date.now() + (TTL_SECONDS + 60) * 1000);
        const after = await scrape(s);
        expect(value(after, 'pactum_object_tus_partial_bytes')).toBe(0);
        const swept = await deltaAround(s, () => s.services.objects.backend.sweep());
        expect(swept('pactum_storage_swept_total', { what: 'resumable_uploads' })).toBe(1);
        vi.useRealTimers();
        const head = await fetch(b!.upload!.href.replace('/content/', '/tus/'), { method: 'HEAD', headers: { ...b!.upload!.header, 'tus-resumable': '1.0.0' } });
        expect(head.headers.get('upload-offset'), 'the lapsed upload starts over').toBe('0');
      });
    });
  }
});
