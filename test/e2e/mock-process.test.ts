/**
 * `make mock` as client teams run it (scripts/mock.ts as a process): a request its spec allows,
 * whatever strings it carries, gets an answer and leaves the mock serving every port; and when
 * the mock stops, or one Prism behind it dies, nothing it started is left running, and its spec
 * files are gone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../helpers/ports.js';
import { alive, childrenOf } from '../../scripts/lib/processes.js';

const GIT_LFS = 'application/vnd.git-lfs+json';
const script = join(import.meta.dirname, '..', '..', 'scripts', 'mock.ts');
const tsx = import.meta.resolve('tsx');


async function until(what: string, check: () => boolean, ms = 30_000) {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface MockProcess { child: ChildProcess; base: number; prisms: { pid: number; cmdline: string }[]; specDir: string; exited: Promise<number | null>; output: () => string }

async function startMockProcess(): Promise<MockProcess> {
  const [base] = await freePorts(1);
  // Three consecutive ports: the first of a free one and the two after it are free too, almost always.
  const child = spawn(process.execPath, ['--import', tsx, script], { env: { ...process.env, MOCK_PORT_BASE: String(base) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (d) => (text += d));
  child.stderr.on('data', (d) => (text += d));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  await until('the mock to print its URLs', () => /Ctrl-C stops them/.test(text) || child.exitCode !== null, 90_000);
  expect(child.exitCode, text).toBeNull();
  const prisms = childrenOf(child.pid!).filter((p) => /prism/.test(p.cmdline));
  expect(prisms).toHaveLength(3);
  const specDir = /(\S*pactum-mock-[^/\s]+)\//.exec(prisms[0]!.cmdline)![1]!;
  return { child, base: base!, prisms, specDir, exited, output: () => text };
}

const batch = (base: number, objects: unknown[]) =>
  fetch(`http://127.0.0.1:${base + 2}/acme/site.git/info/lfs/objects/batch`, {
    method: 'POST',
    headers: { accept: GIT_LFS, 'content-type': GIT_LFS, authorization: `Basic ${Buffer.from('ada:any').toString('base64')}` },
    body: JSON.stringify({ operation: 'download', objects }),
  });

describe('make mock, as a process', () => {
  let mock: MockProcess;
  beforeAll(async () => {
    mock = await startMockProcess();
  }, 120_000);
  afterAll(async () => {
    if (mock.child.exitCode === null) mock.child.kill('SIGTERM');
    await mock.exited;
  });

  it('answers a batch whose oids carry quotes, backslashes and control characters, object by object, and keeps serving', async () => {
    const hostile = ['"', '\\', 'a"b\\c', '\u0001\u001f', '</script>', `${'a'.repeat(63)}"`];
    const res = await batch(mock.base, hostile.map((oid) => ({ oid, size: 1 })));
    expect(res.status, mock.output()).toBe(200);
    const body = (await res.json()) as { objects: { oid: string; error?: { code: number; message: string } }[] };
    expect(body.objects.map((o) => o.oid)).toEqual(hostile);
    for (const o of body.objects) expect(o.error?.code, o.oid).toBe(422);
    // Every port still answers, the batch port with a good object's actions.
    const good = await batch(mock.base, [{ oid: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', size: 0 }]);
    expect(good.status).toBe(200);
    expect(((await good.json()) as { objects: { actions?: object }[] }).objects[0]!.actions).toBeDefined();
    for (const offset of [0, 1]) {
      const r = await fetch(`http://127.0.0.1:${mock.base + offset}/healthz`);
      await r.body?.cancel();
      expect(r.status, `port ${mock.base + offset}`).toBeLessThan(500);
    }
    expect(mock.child.exitCode).toBeNull();
  });

  it('stops the other two Prism processes and removes its spec files when one Prism dies', async () => {
    expect(existsSync(mock.specDir)).toBe(true);
    process.kill(mock.prisms[0]!.pid, 'SIGKILL');
    expect(await mock.exited).toBe(1);
    await until('every Prism to be gone', () => mock.prisms.every((p) => !alive(p.pid)));
    expect(existsSync(mock.specDir)).toBe(false);
    expect(mock.output()).toMatch(/Prism stopped unexpectedly; stopping the others/);
  });
});

describe('make mock, stopped', () => {
  it('leaves no Prism process and no spec file behind after SIGTERM', async () => {
    const mock = await startMockProcess();
    mock.child.kill('SIGTERM');
    expect(await mock.exited).toBe(0);
    await until('every Prism to be gone', () => mock.prisms.every((p) => !alive(p.pid)));
    expect(existsSync(mock.specDir)).toBe(false);
  }, 120_000);
});

describe('make mock, starting', () => {
  it('opens its ports only once every Prism answers: from its start, no request gets a 502', async () => {
    const [base] = await freePorts(1);
    const child = spawn(process.execPath, ['--import', tsx, script], { env: { ...process.env, MOCK_PORT_BASE: String(base) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.stderr.on('data', (d) => (text += d));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    // A client that starts as soon as it can connect, as the README's tour and scripts do.
    const seen: { port: number; status: number | 'refused'; beforeSummary: boolean }[] = [];
    try {
      for (let answeredAfterSummary = 0; answeredAfterSummary < 3 && child.exitCode === null; ) {
        for (const offset of [0, 1, 2]) {
          const summary = /Ctrl-C stops them/.test(text);
          const status = await fetch(`http://127.0.0.1:${base! + offset}/healthz`).then(async (r) => (await r.body?.cancel(), r.status), () => 'refused' as const);
          seen.push({ port: base! + offset, status, beforeSummary: !summary });
          if (summary && status !== 'refused') answeredAfterSummary++;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(child.exitCode, text).toBeNull();
      expect(seen.filter((s) => s.status === 502), text).toEqual([]);
      expect(seen.filter((s) => s.status !== 'refused').length).toBeGreaterThanOrEqual(3);
      // Once it says it is ready, every port answers.
      for (const offset of [0, 1, 2]) expect((await fetch(`http://127.0.0.1:${base! + offset}/healthz`)).status).toBeLessThan(500);
    } finally {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    }
  }, 120_000);
});
