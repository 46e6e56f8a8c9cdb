/**
 * Faults on the way in, and a server killed mid-upload.
 *
 * In process (every response checked against the specs): corrupt (wrong hash), short, long and
 * truncated bodies — a Content-Length larger than what arrives, with the socket destroyed or
 * half-closed — on the basic PUT of batch actions, of legacy links and of Basic credentials;
 * clients that vanish mid-PUT and mid-PATCH (tus); two PATCHes of one upload at once. Then
 * nothing partial is visible (legacy GET, basic GET, batch download all say missing), the
 * interrupted tus upload resumes from its offset to a correct object, and every stored object's
 * bytes hash to its oid (through the API, and every file of the store).
 *
 * SIGKILL: `pactum serve` as a child process on a DATA_DIR set up through the CLI; several
 * uploads of a few MB (basic PUT, legacy PUT, tus PATCH) are in flight, sent slowly, when the
 * server is killed with SIGKILL; it is restarted on the same DATA_DIR and port. Then nothing
 * partial is visible, every stored object hashes right, and the interrupted tus uploads resume
 * (HEAD for the offset, PATCH the rest) to correct objects. RELIABILITY=full repeats the kill
 * and restart three times with larger uploads.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import {
  FULL, GIT_LFS, basicHeader, content, freePort, installEnv, newDataDir, poolPerProcess, prepareInstall, removeDir, report, sha256, sized, spawnServer, storeOnDisk, type ChildServer, type Content,
} from './support.js';

const PASSWORD = 'wally-faults-password-1';
const AUTH = basicHeader('wally', PASSWORD);
const OFFSET_TYPE = 'application/offset+octet-stream';

interface Action { href: string; header: Record<string, string> }

let faults = 0;
let verified = 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A restarted server takes the killed one's port: connections are renewed with each process. */
const connections = poolPerProcess();
const fetch = connections.fetch;
const freshConnections = connections.renew;

// ---------------------------------------------------------------------------------------------
// Clients that misbehave

/**
 * A request whose body is sent in pieces and may be left unfinished: Content-Length says `declared`
 * bytes, `send` writes some (slowly, when asked), and the caller decides what happens next.
 */
function partialRequest(url: string, method: string, headers: Record<string, string>, declared: number) {
  const u = new URL(url);
  const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers: { ...headers, 'content-length': String(declared) }, agent: false });
  const answer = new Promise<{ status: number; body: string } | { error: string }>((resolve) => {
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
      res.on('error', (e) => resolve({ error: e.message }));
    });
    req.on('error', (e) => resolve({ error: e.message }));
  });
  return {
    answer,
    async send(bytes: Buffer, opts: { chunk?: number; pauseMs?: number } = {}) {
      const chunk = opts.chunk ?? 64 * 1024;
      for (let i = 0; i < bytes.length; i += chunk) {
        if (!req.write(bytes.subarray(i, i + chunk))) await new Promise((r) => req.once('drain', r));
        if (opts.pauseMs) await sleep(opts.pauseMs);
      }
    },
    end: () => req.end(),
    /** The client vanishes: the socket is destroyed mid-body. */
    destroy: () => req.destroy(),
  };
}

/** Headers and part of a body on a raw socket, then a FIN (half-close): the body ends early. */
function halfClosedUpload(url: string, method: string, headers: Record<string, string>, declared: number, bytes: Buffer): Promise<number | null> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(u.port), u.hostname);
    let text = '';
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolve(m ? Number(m[1]) : null);
    });
    socket.setTimeout(20_000, () => socket.destroy());
    const head = [`${method} ${u.pathname} HTTP/1.1`, `Host: ${u.host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), `Content-Length: ${declared}`, 'Connection: close', '', ''].join('\r\n');
    socket.write(head);
    socket.end(bytes);
  });
}

/** A body with a chunked transfer encoding (no Content-Length at all). */
function chunkedUpload(url: string, method: string, headers: Record<string, string>, bytes: Buffer): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method, headers: { ...headers, 'transfer-encoding': 'chunked' }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    for (let i = 0; i < bytes.length; i += 1000) req.write(bytes.subarray(i, i + 1000));
    req.end();
  });
}

const corrupt = (b: Buffer) => {
  const x = Buffer.from(b);
  x[Math.floor(x.length / 2)]! ^= 0x40;
  return x;
};

// ---------------------------------------------------------------------------------------------
// The object APIs, as a client uses them

function lfsClient(base: () => string) {
  const lfs = () => `${base()}/acme/site.git/info/lfs`;
  const json = async (res: Response) => JSON.parse(await res.text());
  return {
    lfs,
    async batch(operation: 'upload' | 'download', objects: { oid: string; size: number }[], transfers?: string[]) {
      const res = await fetch(`${lfs()}/objects/batch`, {
        method: 'POST',
        headers: { authorization: AUTH, accept: GIT_LFS, 'content-type': GIT_LFS },
        body: JSON.stringify({ operation, objects: objects.map(({ oid, size }) => ({ oid, size })), ...(transfers ? { transfers } : {}) }),
      });
      if (res.status !== 200) throw new Error(`batch ${operation} answered ${res.status}: ${await res.text()}`);
      return (await json(res)) as { transfer?: string; objects: { oid: string; size: number; actions?: Record<string, Action>; error?: { code: number; message: string } }[] };
    },
    async uploadAction(c: Content, transfer: 'basic' | 'tus'): Promise<{ upload: Action; verify?: Action }> {
      const b = await this.batch('upload', [c], [transfer]);
      expect(b.transfer).toBe(transfer);
      const a = b.objects[0]!.actions!;
      return { upload: a.upload!, verify: a.verify };
    },
    async legacyLinks(c: Content): Promise<{ upload: Action; verify: Action }> {
      const res = await fetch(`${lfs()}/objects`, { method: 'POST', headers: { authorization: AUTH, accept: GIT_LFS, 'content-type': GIT_LFS }, body: JSON.stringify({ oid: c.oid, size: c.size }) });
      expect(res.status).toBe(202);
      return (await json(res))._links;
    },
    async tusOffset(upload: Action): Promise<number> {
      const res = await fetch(upload.href, { method: 'HEAD', headers: { ...upload.header, 'tus-resumable': '1.0.0' } });
      expect(res.status).toBe(200);
      return Number(res.headers.get('upload-offset'));
    },
    /** PATCH from `offset`; retries while another (possibly dead) holder still owns the upload. */
    async tusPatch(upload: Action, offset: number, bytes: Buffer): Promise<Response> {
      for (let attempt = 0; ; attempt++) {
        const res = await fetch(upload.href, { method: 'PATCH', headers: { ...upload.header, 'tus-resumable': '1.0.0', 'upload-offset': String(offset), 'content-type': OFFSET_TYPE }, body: new Uint8Array(bytes) });
        if (res.status === 409 && attempt < 30) {
          const text = await res.text();
          if (/Another request/.test(text)) {
            await sleep(500);
            continue;
          }
          return new Response(text, { status: 409 });
        }
        return res;
      }
    },
    /** Resumes a tus upload from wherever the server says it stands, to the end. */
    async resumeTus(upload: Action, c: Content): Promise<{ from: number; status: number; reached: number }> {
      const from = await this.tusOffset(upload);
      const res = await this.tusPatch(upload, from, c.bytes.subarray(from));
      await res.body?.cancel();
      return { from, status: res.status, reached: Number(res.headers.get('upload-offset')) };
    },
    /** Every way a client can ask for an object must say "missing". */
    async expectMissing(c: Content, why: string) {
      const meta = await fetch(`${lfs()}/objects/${c.oid}`, { headers: { authorization: AUTH, accept: GIT_LFS } });
      expect(meta.status, `legacy GET of ${why}`).toBe(404);
      await meta.body?.cancel();
      const raw = await fetch(`${lfs()}/content/${c.oid}`, { headers: { authorization: AUTH } });
      expect(raw.status, `basic GET of ${why}`).toBe(404);
      await raw.body?.cancel();
      const b = await this.batch('download', [c]);
      expect(b.objects[0]!.error?.code, `batch download of ${why}`).toBe(404);
      expect(b.objects[0]!.actions, `batch download of ${why}`).toBeUndefined();
    },
    /** Downloads through a batch action and checks the bytes hash to the oid (and match, when known). */
    async expectStored(oid: string, size: number, bytes?: Buffer) {
      const b = await this.batch('download', [{ oid, size }]);
      const dl = b.objects[0]!.actions?.download;
      expect(dl, `a download action for ${oid}: ${JSON.stringify(b.objects[0]!.error)}`).toBeDefined();
      const res = await fetch(dl!.href, { headers: dl!.header });
      expect(res.status).toBe(200);
      const got = Buffer.from(await res.arrayBuffer());
      expect(got.length).toBe(size);
      expect(sha256(got), `the bytes of ${oid}`).toBe(oid);
      if (bytes) expect(got.equals(bytes)).toBe(true);
      verified++;
    },
  };
}

/**
 * Every file of the store named like an oid must hash to that name; returns how many there are
 * (null when the bytes are not on disk: STORAGE=s3, where the API checks stand alone).
 */
function checkStoreFiles(dataDir: string): { objects: number; tmp: number } | null {
  if (!storeOnDisk) return null;
  const root = join(dataDir, 'lfs');
  let objects = 0;
  let tmp = 0;
  const walk = (dir: string, inTmp: boolean) => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const st = statSync(path);
      if (st.isDirectory()) {
        // Resumable uploads in progress live in partials/ (named after their key, not their content).
        if (name !== 'partials') walk(path, inTmp || name === 'tmp');
        continue;
      }
      if (inTmp) tmp++;
      else if (/^[0-9a-f]{64}$/.test(name)) {
        objects++;
        expect(createHash('sha256').update(readFileSync(path)).digest('hex'), `the store file ${path}`).toBe(name);
      }
    }
  };
  walk(root, false);
  return { objects, tmp };
}

// ---------------------------------------------------------------------------------------------

describe('faults on the way in (in process)', () => {
  let s: TestServer;
  const client = lfsClient(() => s.url);
  const refused: Content[] = [];
  const stored: Content[] = [];

  beforeAll(async () => {
    s = await startTestServer();
    await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: PASSWORD, access: 'write' });
  });
  afterAll(() => s?.stop());

  it('refuses corrupt, short, long, truncated and vanished basic uploads (batch actions) and keeps nothing', async () => {
    const n = sized(256 * 1024, 4 * 1024 * 1024);
    const c = content(n);
    const { upload } = await client.uploadAction(c, 'basic');
    const put = (body: Buffer) => fetch(upload.href, { method: 'PUT', headers: upload.header, body: new Uint8Array(body) });

    expect((await put(corrupt(c.bytes))).status, 'wrong hash').toBe(422);
    expect((await put(c.bytes.subarray(0, n - 1))).status, 'one byte short').toBe(422);
    expect((await put(Buffer.concat([c.bytes, Buffer.from('!')]))).status, 'one byte long').toBe(422);
    expect(await chunkedUpload(upload.href, 'PUT', upload.header, Buffer.concat([c.bytes, Buffer.from('tail')])), 'longer, chunked (no Content-Length)').toBe(422);
    expect(await chunkedUpload(upload.href, 'PUT', upload.header, c.bytes.subarray(0, n / 2)), 'shorter, chunked').toBe(422);
    faults += 5;

    // Content-Length promises the whole object; half arrives, then the socket is destroyed.
    const cut = partialRequest(upload.href, 'PUT', upload.header, n);
    await cut.send(c.bytes.subarray(0, n / 2));
    await sleep(100);
    cut.destroy();
    await cut.answer;
    // ... or half arrives and the client half-closes (FIN): the body ends early.
    const fin = await halfClosedUpload(upload.href, 'PUT', upload.header, n, c.bytes.subarray(0, n / 2));
    if (fin !== null) expect(fin, 'a body that ends early').toBeGreaterThanOrEqual(400);
    if (fin !== null) expect(fin).toBeLessThan(500);
    // A slow client that vanishes a third of the way in.
    const slow = partialRequest(upload.href, 'PUT', upload.header, n);
    await slow.send(c.bytes.subarray(0, Math.floor(n / 3)), { chunk: 16 * 1024, pauseMs: 5 });
    slow.destroy();
    await slow.answer;
    faults += 3;
    refused.push(c);
  });

  it('refuses the same faults on the legacy API\'s links and with Basic credentials', async () => {
    const n = sized(200 * 1024, 3 * 1024 * 1024);
    const c = content(n);
    const { upload } = await client.legacyLinks(c);
    const put = (body: Buffer, headers = upload.header) => fetch(upload.href, { method: 'PUT', headers, body: new Uint8Array(body) });
    expect((await put(corrupt(c.bytes))).status, 'legacy: wrong hash').toBe(422);
    expect((await put(c.bytes.subarray(1))).status, 'legacy: short').toBe(422);
    expect((await put(Buffer.concat([c.bytes, c.bytes.subarray(0, 10)]))).status, 'legacy: long').toBe(422);
    const cut = partialRequest(upload.href, 'PUT', upload.header, n);
    await cut.send(c.bytes.subarray(0, n - 1));
    await sleep(100);
    cut.destroy();
    await cut.answer;
    const fin = await halfClosedUpload(upload.href, 'PUT', upload.header, n, c.bytes.subarray(0, 1000));
    if (fin !== null) expect(fin >= 400 && fin < 500, `legacy: a body that ends early answered ${fin}`).toBe(true);
    // HTTP Basic instead of a transfer token: the announced size is whatever Content-Length says.
    const basic = { authorization: AUTH, 'content-type': 'application/octet-stream' };
    expect((await put(corrupt(c.bytes), basic)).status, 'Basic: wrong hash').toBe(422);
    expect((await put(Buffer.concat([c.bytes, Buffer.from('x')]), basic)).status, 'Basic: long').toBe(422);
    expect(await chunkedUpload(upload.href, 'PUT', basic, corrupt(c.bytes)), 'Basic: chunked (no size announced anywhere)').toBe(411);
    const vanish = partialRequest(upload.href, 'PUT', basic, n);
    await vanish.send(c.bytes.subarray(0, n / 2));
    vanish.destroy();
    await vanish.answer;
    faults += 9;
    refused.push(c);
  });

  it('refuses corrupt and over-long tus uploads, and resumes one whose client vanished mid-PATCH', async () => {
    const n = sized(512 * 1024, 8 * 1024 * 1024);
    const bad = content(n);
    const { upload: badUpload } = await client.uploadAction(bad, 'tus');
    const r1 = await client.tusPatch(badUpload, 0, corrupt(bad.bytes));
    expect(r1.status, 'tus: wrong hash').toBe(422);
    await r1.body?.cancel();
    expect(await client.tusOffset(badUpload), 'a corrupt upload starts over').toBe(0);
    const r2 = await client.tusPatch(badUpload, 0, Buffer.concat([bad.bytes, Buffer.from('over')]));
    expect(r2.status, 'tus: longer than announced').toBe(413);
    await r2.body?.cancel();
    expect(await client.tusOffset(badUpload)).toBe(0);
    faults += 2;
    refused.push(bad);

    // The client sends half of its PATCH and vanishes; HEAD says how much was kept; the rest follows.
    const c = content(n);
    const { upload, verify } = await client.uploadAction(c, 'tus');
    const first = n / 4;
    const ok = await client.tusPatch(upload, 0, c.bytes.subarray(0, first));
    expect(ok.status).toBe(204);
    expect(ok.headers.get('upload-offset')).toBe(String(first));
    const cut = partialRequest(upload.href, 'PATCH', { ...upload.header, 'tus-resumable': '1.0.0', 'upload-offset': String(first), 'content-type': OFFSET_TYPE }, n - first);
    await cut.send(c.bytes.subarray(first, n / 2), { chunk: 32 * 1024, pauseMs: 2 });
    await sleep(150);
    cut.destroy();
    await cut.answer;
    faults++;
    await client.expectMissing(c, 'a tus upload cut off mid-PATCH');
    // The server notices the cut-off a moment later; HEAD then answers what was made durable
    // (a PATCH meanwhile is told the upload is busy, and tries again).
    await sleep(300);
    const done = await client.resumeTus(upload, c);
    expect(done.from).toBeGreaterThanOrEqual(first);
    expect(done.from).toBeLessThanOrEqual(n / 2);
    expect(done.status).toBe(204);
    expect(done.reached).toBe(n);
    const v = await fetch(verify!.href, { method: 'POST', headers: { ...verify!.header, accept: GIT_LFS, 'content-type': GIT_LFS }, body: JSON.stringify({ oid: c.oid, size: n }) });
    expect(v.status).toBe(200);
    await client.expectStored(c.oid, n, c.bytes);
    stored.push(c);
  });

  it('keeps one correct object when two clients PATCH the same tus upload at once', async () => {
    const n = sized(1024 * 1024, 8 * 1024 * 1024);
    const c = content(n);
    const { upload } = await client.uploadAction(c, 'tus');
    const answers = await Promise.all([client.tusPatch(upload, 0, c.bytes), client.tusPatch(upload, 0, c.bytes)]);
    const statuses = answers.map((a) => a.status).sort();
    for (const a of answers) await a.body?.cancel();
    for (const st of statuses) expect([204, 409], `two PATCHes at once answered ${statuses.join(',')}`).toContain(st);
    faults++;
    // Whatever each of them was told, resuming from the offset ends in the right object.
    const done = await client.resumeTus(upload, c);
    expect(done.status).toBe(204);
    expect(done.reached).toBe(n);
    await client.expectStored(c.oid, n, c.bytes);
    stored.push(c);
  });

  it('shows nothing partial, and every stored object hashes to its oid', async () => {
    for (const c of refused) await client.expectMissing(c, 'a refused upload');
    for (const c of stored) await client.expectStored(c.oid, c.size, c.bytes);
    // Every object the database knows, downloaded through the API.
    const rows = await s.services.db('lfs_objects').whereNull('deleted_at');
    for (const row of rows) await client.expectStored(row.oid, Number(row.size));
    expect(rows.length).toBe(stored.length);
    // Cut-off uploads are cleaned up once their requests have ended.
    let files = checkStoreFiles(s.dataDir);
    for (let i = 0; i < 200 && files && files.tmp > 0; i++) {
      await sleep(100);
      files = checkStoreFiles(s.dataDir);
    }
    if (files) {
      expect(files.tmp, 'temporary files of refused uploads left behind').toBe(0);
      expect(files.objects).toBe(stored.length);
    }
    const errors = s.logLines.filter((l) => /"level":(50|60)/.test(l) || (/"msg":"request"/.test(l) && /"status":5\d\d/.test(l)));
    report(`faults (in process): ${faults} faults injected, ${verified} object downloads verified, ${rows.length} stored objects, ${files ? `${files.objects} store files hashed` : 'store not on disk (S3)'}, ${errors.length} server errors, ${s.violations.length} spec violations`);
    for (const l of errors.slice(0, 10)) report(`faults server log: ${l.slice(0, 600)}`);
    expect(errors, 'errors in the server log').toEqual([]);
    s.expectConformant();
  });
});

describe('SIGKILL mid-upload (child process)', () => {
  const ROUNDS = sized(1, 3);
  const MB = 1024 * 1024;
  const SIZE = sized(3 * MB, 12 * MB);
  let dataDir: string;
  let env: Record<string, string>;
  let port: number;
  let server: ChildServer | null = null;
  const client = lfsClient(() => server!.url);
  let killFaults = 0;
  let killVerified = 0;

  beforeAll(async () => {
    dataDir = newDataDir('faults');
    // A short upload lease: a killed holder's lease on a tus upload lapses quickly.
    env = await installEnv(dataDir, { LFS_UPLOAD_LEASE_SECONDS: '2' });
    await prepareInstall(env, { org: 'acme', repo: 'site', users: [{ username: 'wally', password: PASSWORD, access: 'write' }] });
    port = await freePort();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  // Several kill-and-restart rounds of a server in a child process: minutes on a loaded machine.
  it('loses nothing committed, shows nothing partial, and resumes tus uploads after a SIGKILL', { timeout: 240_000 }, async () => {
    const committed: Content[] = [];
    const troubles: string[] = [];
    let leftovers = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      server = await spawnServer({ dataDir, port, env });
      freshConnections();
      // Objects committed before the kill: they must survive it intact.
      const safe = content(SIZE / 3);
      const { upload: safeUp } = await client.uploadAction(safe, 'basic');
      expect((await fetch(safeUp.href, { method: 'PUT', headers: safeUp.header, body: new Uint8Array(safe.bytes) })).status).toBe(200);
      committed.push(safe);

      // In flight at the kill: basic PUTs (batch actions and legacy links), sent slowly and unfinished ...
      const partial: Content[] = [];
      const inFlight: ReturnType<typeof partialRequest>[] = [];
      for (let i = 0; i < 3; i++) {
        const c = content(SIZE);
        const up = i === 2 ? (await client.legacyLinks(c)).upload : (await client.uploadAction(c, 'basic')).upload;
        const req = partialRequest(up.href, 'PUT', up.header, c.size);
        inFlight.push(req);
        void req.send(c.bytes.subarray(0, (c.size * (i + 1)) / 4), { chunk: 64 * 1024, pauseMs: 1 });
        partial.push(c);
      }
      // ... a tus upload with an acknowledged first part and a second PATCH under way ...
      const resumed = content(SIZE);
      const { upload: tusUp, verify: tusVerify } = await client.uploadAction(resumed, 'tus');
      const firstPart = MB;
      const ack = await client.tusPatch(tusUp, 0, resumed.bytes.subarray(0, firstPart));
      expect(ack.status).toBe(204);
      expect(ack.headers.get('upload-offset')).toBe(String(firstPart));
      const second = partialRequest(tusUp.href, 'PATCH', { ...tusUp.header, 'tus-resumable': '1.0.0', 'upload-offset': String(firstPart), 'content-type': OFFSET_TYPE }, SIZE - firstPart);
      inFlight.push(second);
      void second.send(resumed.bytes.subarray(firstPart, firstPart + MB / 2), { chunk: 32 * 1024, pauseMs: 1 });
      // ... and a tus upload whose very first PATCH is under way.
      const fresh = content(SIZE);
      const { upload: freshUp } = await client.uploadAction(fresh, 'tus');
      const firstPatch = partialRequest(freshUp.href, 'PATCH', { ...freshUp.header, 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': OFFSET_TYPE }, SIZE);
      inFlight.push(firstPatch);
      void firstPatch.send(fresh.bytes.subarray(0, MB), { chunk: 32 * 1024, pauseMs: 1 });
      await sleep(600);

      await server.kill('SIGKILL');
      troubles.push(...server.trouble.errors, ...server.trouble.serverErrors);
      killFaults += inFlight.length + 1;
      for (const r of inFlight) {
        r.destroy();
        const a = await r.answer;
        // Nothing was acknowledged: the server died before these bodies ended.
        if ('status' in a) expect(a.status, 'an unfinished upload cannot have succeeded').toBeGreaterThanOrEqual(400);
      }

      // Back on the same DATA_DIR and port (the hrefs and their tokens stay valid).
      server = await spawnServer({ dataDir, port, env });
      freshConnections();
      for (const c of partial) await client.expectMissing(c, 'a basic upload cut off by SIGKILL');
      await client.expectMissing(resumed, 'a tus upload cut off by SIGKILL');
      await client.expectMissing(fresh, 'a fresh tus upload cut off by SIGKILL');
      for (const c of committed) {
        await client.expectStored(c.oid, c.size, c.bytes);
        killVerified++;
      }

      // The tus uploads resume from their offsets: at least what was acknowledged was kept.
      const r1 = await client.resumeTus(tusUp, resumed);
      expect(r1.from, 'the acknowledged part survived the kill').toBeGreaterThanOrEqual(firstPart);
      expect(r1.from).toBeLessThanOrEqual(firstPart + MB / 2);
      expect(r1.status).toBe(204);
      expect(r1.reached).toBe(SIZE);
      const v = await fetch(tusVerify!.href, { method: 'POST', headers: { ...tusVerify!.header, accept: GIT_LFS, 'content-type': GIT_LFS }, body: JSON.stringify({ oid: resumed.oid, size: SIZE }) });
      expect(v.status).toBe(200);
      await client.expectStored(resumed.oid, SIZE, resumed.bytes);
      const r2 = await client.resumeTus(freshUp, fresh);
      expect(r2.from).toBeLessThanOrEqual(MB);
      expect(r2.status).toBe(204);
      expect(r2.reached).toBe(SIZE);
      await client.expectStored(fresh.oid, SIZE, fresh.bytes);
      killVerified += 2;
      committed.push(resumed, fresh);

      // An interrupted basic upload simply starts over, and succeeds.
      const again = partial[0]!;
      const { upload } = await client.uploadAction(again, 'basic');
      expect((await fetch(upload.href, { method: 'PUT', headers: upload.header, body: new Uint8Array(again.bytes) })).status).toBe(200);
      await client.expectStored(again.oid, again.size, again.bytes);
      killVerified++;
      committed.push(again);
      for (const c of partial.slice(1)) await client.expectMissing(c, 'a basic upload cut off by SIGKILL');

      const files = checkStoreFiles(dataDir);
      leftovers = files?.tmp ?? 0;
      if (files) expect(files.objects).toBe(committed.length);
      if (round < ROUNDS) {
        await server.stop();
        troubles.push(...server.trouble.errors, ...server.trouble.serverErrors);
        server = null;
      }
    }
    troubles.push(...server!.trouble.errors, ...server!.trouble.serverErrors);
    report(`faults (SIGKILL): ${ROUNDS} kill/restart round(s)${FULL ? '' : ' (quick)'}, ${killFaults} uploads cut by SIGKILL, ${killVerified} objects verified after restarts, ${committed.length} objects stored, ${storeOnDisk ? `${leftovers} temporary files of killed uploads left in the store` : 'store in S3'}, ${troubles.length} server errors`);
    for (const t of troubles.slice(0, 10)) report(`faults server log: ${t.slice(0, 600)}`);
    expect(troubles, 'errors in the server logs').toEqual([]);
  });
});
