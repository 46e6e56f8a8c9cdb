/**
 * A large report's exports and page against clients that do not read them, that go away, and
 * that ask for too many at once. The test server runs in this process, so its heap is this
 * process's heap: an export that built its whole document before sending it held one
 * document per waiting client, and sixteen clients that never read grew the heap by sixteen
 * documents.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { stalledDownload } from '../helpers/transfers.js';
import { seedLargeReport, type LargeReport } from '../helpers/large-report.js';
import { insertOrg } from '../../src/db/users.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const MiB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The heap in use (JS objects and strings, and the buffers they hold) once garbage is collected. */
function heldBytes(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** Samples heldBytes() until two readings in a row agree within 1 MiB (the server has stopped producing), up to `rounds` times. */
async function settledHeld(rounds = 100): Promise<number> {
  let last = heldBytes();
  for (let i = 0; i < rounds; i++) {
    await sleep(250);
    const now = heldBytes();
    if (Math.abs(now - last) < MiB) return now;
    last = now;
  }
  return last;
}

/** Retries `fn` until it returns true (slots are given back when the server sees the connection close), up to `rounds` times. */
async function eventually(fn: () => Promise<boolean>, rounds = 100): Promise<boolean> {
  for (let i = 0; i < rounds; i++) {
    if (await fn()) return true;
    await sleep(100);
  }
  return false;
}

describe('report exports of a large report', () => {
  let s: TestServer;
  let other: LargeReport;
  let acmeId: string;
  let alan: string;
  let grace: string;
  /** Compute tasks of report exports started, by format. */
  const exportTasks: string[] = [];

  beforeAll(async () => {
    s = await startTestServer({ REPORT_EXPORT_MAX_ISSUES: '30000' });
    const acme = await insertOrg(s.services.db, { name: 'Acme', slug: 'acme-exports' });
    acmeId = acme.id;
    const globex = await insertOrg(s.services.db, { name: 'Globex', slug: 'globex-exports' });
    alan = await s.token({ sub: 'usr_alan_exports', orgId: acme.id, role: 'member' });
    grace = await s.token({ sub: 'usr_grace_exports', orgId: globex.id, role: 'member' });
    other = await seedLargeReport(s.services.db, globex.id, { pages: 20, issuesPerPage: 50 });
    const run = s.services.compute.run.bind(s.services.compute);
    s.services.compute.run = ((task: { kind: string; format?: string }, options?: unknown) => {
      if (task.kind.startsWith('report-export')) exportTasks.push(task.format ?? task.kind);
      return run(task as never, options as never);
    });
  });
  afterAll(async () => {
    s.expectConformant();
    await s?.stop();
  });

  const get = (path: string, token: string, accept = '*/*') => fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${token}`, accept } });

  it('sixteen clients that never read hold far less than sixteen documents', async () => {
    // Without the response checker, which keeps a copy of every JSON body sent (what this test measures).
    const bare = await startTestServer({ REPORT_EXPORTS_PER_USER: '16', REPORT_EXPORTS_PER_ORG: '16', COMPUTE_QUEUE: '64' }, { checkResponses: false });
    const clients: Socket[] = [];
    try {
      const org = await insertOrg(bare.services.db, { name: 'Acme', slug: 'acme-memory' });
      const eve = await bare.token({ sub: 'usr_eve_exports', orgId: org.id, role: 'member' });
      // 24,000 issues: about 23 MB of SARIF.
      const big = await seedLargeReport(bare.services.db, org.id, { pages: 120, issuesPerPage: 200, failEvery: 40 });
      const href = `${bare.url}/reports/${big.scanId}.sarif`;
      const header = { authorization: `Bearer ${eve}`, accept: 'application/sarif+json' };
      const first = await fetch(href, { headers: header });
      expect(first.status).toBe(200);
      const document = (await first.text()).length;
      expect(document).toBeGreaterThan(20 * MiB);
      const before = await settledHeld();
      for (let i = 0; i < 16; i++) {
        const { socket, head } = await stalledDownload({ href, header });
        expect(head).toMatch(/^HTTP\/1\.1 200/);
        clients.push(socket);
      }
      const grew = (await settledHeld()) - before;
      console.log(`[exports] 16 clients that do not read a ${(document / MiB).toFixed(1)} MB SARIF: heap grew by ${(grew / MiB).toFixed(1)} MB`);
      // Each holds at most one run of pages' text (REPORT_READ_BATCH_ISSUES issues) and the stream's buffers.
      expect(grew, `heap growth ${(grew / MiB).toFixed(1)} MB for 16 stalled exports of ${(document / MiB).toFixed(1)} MB`).toBeLessThan(document);
      for (const c of clients.splice(0)) c.destroy();
      // Their slots come back as their connections close: sixteen more may start (and hold them).
      expect(await eventually(async () => {
        const res = await fetch(href.replace(/sarif$/, 'csv'), { headers: { ...header, accept: 'text/csv' } });
        await res.text();
        return res.status === 200;
      })).toBe(true);
      for (let i = 0; i < 16; i++) {
        const { socket, head } = await stalledDownload({ href, header });
        clients.push(socket);
        expect(head).toMatch(/^HTTP\/1\.1 200/);
      }
    } finally {
      for (const c of clients) c.destroy();
      await bare.stop();
    }
  });

  it('reads pages only as the client takes them, stops when it goes away, and gives its slot back', async () => {
    const slots = await startTestServer({ REPORT_EXPORTS_PER_USER: '1', REPORT_EXPORTS_PER_ORG: '4' });
    try {
      const org = await insertOrg(slots.services.db, { name: 'Initech', slug: 'initech-exports' });
      const bob = await slots.token({ sub: 'usr_bob_exports', orgId: org.id, role: 'member' });
      // 24,000 issues in 120 pages: 24 runs of REPORT_READ_BATCH_ISSUES (1,000).
      const big = await seedLargeReport(slots.services.db, org.id, { pages: 120, issuesPerPage: 200 });
      let runs = 0;
      const run = slots.services.compute.run.bind(slots.services.compute);
      slots.services.compute.run = ((task: { kind: string }, options?: never) => {
        if (task.kind.startsWith('report-export')) runs++;
        return run(task as never, options);
      });
      const url = `${slots.url}/reports/${big.scanId}.sarif`;
      const { socket } = await stalledDownload({ href: url, header: { authorization: `Bearer ${bob}` } });
      // The export waits for its reader: once the socket's buffers are full it reads no more pages.
      let seen = -1;
      for (let i = 0; i < 40 && seen !== runs; i++) {
        seen = runs;
        await sleep(250);
      }
      expect(runs, 'runs of pages written for a client that stopped reading').toBeLessThan(24);
      // The one slot is taken: a second export of the same user is refused before any work.
      const refused = await fetch(url, { headers: { authorization: `Bearer ${bob}` } });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await refused.json()).toMatchObject({ statusCode: 429, message: expect.stringContaining('REPORT_EXPORTS_PER_USER=1') });
      expect(runs).toBe(seen);
      socket.destroy();
      await sleep(1000);
      expect(runs, 'runs of pages read after the client went away').toBe(seen);
      expect(await eventually(async () => {
        const res = await fetch(url, { headers: { authorization: `Bearer ${bob}` } });
        await res.body?.cancel();
        return res.status !== 429;
      })).toBe(true);
      slots.expectConformant();
    } finally {
      await slots.stop();
    }
  });

  it('caps the exports under way per user and per org, with 429 and Retry-After, and frees them as they finish', async () => {
    const capped = await startTestServer({ REPORT_EXPORTS_PER_USER: '2', REPORT_EXPORTS_PER_ORG: '3' });
    try {
      const org = await insertOrg(capped.services.db, { name: 'Umbrella', slug: 'umbrella-exports' });
      const neighbour = await insertOrg(capped.services.db, { name: 'Hooli', slug: 'hooli-exports' });
      const [u1, u2, n1] = await Promise.all([
        capped.token({ sub: 'usr_u1_exports', orgId: org.id, role: 'member' }),
        capped.token({ sub: 'usr_u2_exports', orgId: org.id, role: 'member' }),
        capped.token({ sub: 'usr_n1_exports', orgId: neighbour.id, role: 'member' }),
      ]);
      const big = await seedLargeReport(capped.services.db, org.id, { pages: 120, issuesPerPage: 200 });
      const theirs = await seedLargeReport(capped.services.db, neighbour.id, { pages: 10, issuesPerPage: 20 });
      const path = (id: string, ext: string) => `${capped.url}/reports/${id}.${ext}`;
      const hold = (token: string, ext = 'sarif') => stalledDownload({ href: path(big.scanId, ext), header: { authorization: `Bearer ${token}` } });
      const ask = async (token: string, id = big.scanId, ext = 'csv') => {
        const res = await fetch(path(id, ext), { headers: { authorization: `Bearer ${token}` } });
        return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() };
      };
      const held = [await hold(u1), await hold(u1, 'csv')];
      const third = await ask(u1);
      expect(third.status).toBe(429);
      expect(third.body).toContain('REPORT_EXPORTS_PER_USER=2');
      expect(Number(third.retryAfter)).toBeGreaterThan(0);
      held.push(await hold(u2));
      const orgFull = await ask(u2);
      expect(orgFull.status).toBe(429);
      expect(orgFull.body).toContain('REPORT_EXPORTS_PER_ORG=3');
      // The report page counts too, and is refused as a page.
      const page = await fetch(path(big.scanId, '').slice(0, -1), { headers: { authorization: `Bearer ${u2}`, accept: 'text/html' } });
      expect(page.status).toBe(429);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text()).toContain('REPORT_EXPORTS_PER_ORG=3');
      // Another org is not held back by this one.
      const neighbours = await ask(n1, theirs.scanId, 'sarif');
      expect(neighbours.status).toBe(200);
      expect(JSON.parse(neighbours.body)).toMatchObject({ version: '2.1.0' });
      for (const h of held) h.socket.destroy();
      // Finished or abandoned, every slot comes back.
      expect(await eventually(async () => (await ask(u2)).status === 200)).toBe(true);
      const again = await Promise.all([ask(u1), ask(u1)]);
      expect(again.map((a) => a.status)).toEqual([200, 200]);
      capped.expectConformant();
    } finally {
      await capped.stop();
    }
  });

  it('refuses a report larger than REPORT_EXPORT_MAX_ISSUES with 409 naming it, before any work', async () => {
    const tooLarge = await seedLargeReport(s.services.db, acmeId, { pages: 151, issuesPerPage: 200 });
    const tasksBefore = exportTasks.length;
    for (const ext of ['sarif', 'junit.xml', 'csv']) {
      const res = await get(`/reports/${tooLarge.scanId}.${ext}`, alan);
      expect(res.status).toBe(409);
      const body = (await res.json()) as { message: string };
      expect(body.message).toContain('REPORT_EXPORT_MAX_ISSUES=30000');
      expect(body.message).toContain(String(tooLarge.totalIssues));
    }
    expect(exportTasks.length).toBe(tasksBefore);
    // The page still shows it: it lists REPORT_MAX_ISSUES of them and counts them all.
    const page = await get(`/reports/${tooLarge.scanId}`, alan, 'text/html');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`"totalIssues":${tooLarge.totalIssues}`);
  });

  it("answers another org's export beside all this", async () => {
    const res = await get(`/reports/${other.scanId}.junit.xml`, grace);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain(`tests="`);
  });
});
