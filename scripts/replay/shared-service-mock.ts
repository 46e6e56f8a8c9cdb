/**
 * `make mock`, which client teams share: a batch request its spec allows whose oids carry a
 * quote, a backslash or a control character; then whether the three ports still answer, and,
 * once the mock is gone, whether anything it started is left running.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { freePort } from '../lib/free-port.js';
import { alive, childrenOf } from '../lib/processes.js';
import { report } from './harness.js';

const tsx = import.meta.resolve('tsx');


const answers = async (url: string) => fetch(url).then((r) => (r.body?.cancel(), r.status < 500)).catch(() => false);

export default async function sharedServiceMock(dist: string) {
  const script = join(resolve(dist, '..'), 'scripts', 'mock.ts');
  if (!existsSync(script)) return report('make mock', `no scripts/mock.ts beside ${dist}`);
  const base = await freePort();
  const child = spawn(process.execPath, ['--import', tsx, script], { env: { ...process.env, MOCK_PORT_BASE: String(base) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (d) => (text += d));
  child.stderr.on('data', (d) => (text += d));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  for (let i = 0; i < 900 && !/Ctrl-C stops them/.test(text) && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 100));
  const prisms = childrenOf(child.pid!).filter((p) => /prism/.test(p.cmdline));
  const specDir = /(\S*pactum-mock-[^/\s]+)\//.exec(prisms[0]?.cmdline ?? '')?.[1];
  try {
    const hostile = ['"', '\\', 'a"b\\c', '\u0001'];
    const res = await fetch(`http://127.0.0.1:${base + 2}/acme/site.git/info/lfs/objects/batch`, {
      method: 'POST',
      headers: { accept: 'application/vnd.git-lfs+json', 'content-type': 'application/vnd.git-lfs+json', authorization: `Basic ${Buffer.from('ada:any').toString('base64')}` },
      body: JSON.stringify({ operation: 'download', objects: hostile.map((oid) => ({ oid, size: 1 })) }),
    }).catch((err: Error) => err);
    const answer = res instanceof Error ? `no answer (${res.message})` : `${res.status}`;
    if (!(res instanceof Error)) await res.body?.cancel();
    await new Promise((r) => setTimeout(r, 1000));
    const ports = await Promise.all([0, 1, 2].map((o) => answers(`http://127.0.0.1:${base + o}/healthz`)));
    const up = ports.filter(Boolean).length;
    report('a batch whose oids carry ", \\ and control characters', `${answer}; ${up} of 3 ports answer afterwards${up < 3 ? ' (hole: the mock is down)' : ''}`);
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    await new Promise((r) => setTimeout(r, 2000));
    const left = prisms.filter((p) => alive(p.pid));
    for (const p of left) process.kill(p.pid, 'SIGKILL');
    const files = specDir && existsSync(specDir);
    report('once the mock has stopped', `${left.length} Prism process(es) left running, spec files ${files ? 'left' : 'removed'}${left.length || files ? ' (hole)' : ''}`);
  }
}
