/**
 * The README's tour, run verbatim on a fresh clone: its shell blocks in order, in one bash, with a
 * new HOME and nothing on PATH but the system's and the project's Node, so the tour cannot need
 * anything it does not say. A block after `<!-- tour:server -->` is the first terminal (started in
 * the background, waited for on /healthz); after `<!-- tour:background PORT -->` another terminal
 * (waited for on PORT). A line `#=> text` says what the commands before it print: the output must
 * hold each, in order. The tour's ports (8080, 8090, 4010) are moved to free ones.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(dirname(new URL(import.meta.url).pathname), '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

type Block = { kind: 'run' | 'server' | 'background'; code: string; port?: number };

/** The tour's shell blocks, in order, with what each is. */
export function tourBlocks(markdown: string): Block[] {
  const start = markdown.indexOf('\n## A tour');
  if (start < 0) throw new Error('README has no "## A tour" section');
  const end = markdown.indexOf('\n## ', start + 1);
  const section = markdown.slice(start, end < 0 ? undefined : end);
  const blocks: Block[] = [];
  for (const m of section.matchAll(/(?:<!-- tour:(server|background)(?: (\d+))? -->\n)?```sh\n([\s\S]*?)```/g)) {
    const kind = (m[1] ?? 'run') as Block['kind'];
    blocks.push({ kind, code: m[3]!, ...(m[2] ? { port: Number(m[2]) } : {}) });
  }
  return blocks;
}

async function freePort(span = 1): Promise<number> {
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    const ok = await Promise.all(Array.from({ length: span }, (_, i) => new Promise<boolean>((resolve) => {
      const s = createServer().once('error', () => resolve(false)).listen(base + i, '127.0.0.1', () => s.close(() => resolve(true)));
    })));
    if (ok.every(Boolean)) return base;
  }
}

const work = mkdtempSync(join(tmpdir(), 'pactum-tour-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the README tour', () => {
  const blocks = tourBlocks(readme);

  it('has the tour as blocks: a server, commands, a mock in the background', () => {
    expect(blocks[0]?.kind).toBe('server');
    expect(blocks.filter((b) => b.kind === 'background').map((b) => b.port)).toEqual([4010]);
    expect(blocks.filter((b) => b.kind === 'run').length).toBeGreaterThan(5);
  });

  it('works verbatim on a fresh clone', async () => {
    // A fresh clone of this checkout, with the README as it is in the working tree; node_modules
    // and Node come from the checkout (what `make run` would install is the same lock file).
    const clone = join(work, 'pactum');
    execFileSync('git', ['clone', '-q', '--no-hardlinks', root, clone]);
    cpSync(join(root, 'README.md'), join(clone, 'README.md'));
    symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'));
    if (existsSync(join(root, '.node'))) symlinkSync(join(root, '.node'), join(clone, '.node'));
    // The clone's package files are newer than the install stamp: make must not reinstall into
    // the shared node_modules.
    const old = new Date('2000-01-01');
    for (const f of ['package.json', 'package-lock.json']) utimesSync(join(clone, f), old, old);

    const home = join(work, 'home');
    mkdirSync(home);
    writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = Ada\n\temail = ada@example.com\n[init]\n\tdefaultBranch = main\n');
    // Caches a user's machine has: Maven's (the generator's jar) and npm's.
    for (const cache of ['.m2', '.npm']) if (existsSync(join(homedir(), cache))) symlinkSync(join(homedir(), cache), join(home, cache));

    const [server, site, mock] = [await freePort(), await freePort(), await freePort(3)];
    const ports = (s: string) => s.replace(/\b8080\b/g, String(server)).replace(/\b8090\b/g, String(site)).replace(/\b4010\b/g, String(mock));
    const waitFor = (port: number, path = '/') =>
      `for i in $(seq 1 600); do curl -sf -o /dev/null http://127.0.0.1:${port}${path} && break; sleep 0.5; done; curl -sf -o /dev/null http://127.0.0.1:${port}${path}`;
    const script = ['set -euo pipefail'];
    blocks.forEach((b, i) => {
      const code = ports(b.code);
      if (b.kind === 'run') script.push(code);
      else {
        // Another terminal: its own port, as a user would choose one (PORT, MOCK_PORT_BASE).
        const portEnv = b.kind === 'server' ? `PORT=${server}` : `MOCK_PORT_BASE=${mock}`;
        script.push(`( export ${portEnv}; ${code.trim()} ) > ${join(work, `terminal-${i}.log`)} 2>&1 &`);
        script.push(b.kind === 'server' ? waitFor(server, '/healthz') : waitFor(Number(ports(String(b.port)))));
      }
    });
    script.push('echo "TOUR COMPLETE"');
    writeFileSync(join(work, 'tour.sh'), script.join('\n'));

    const nodeBin = dirname(process.execPath);
    const env = {
      HOME: home, LANG: 'C.UTF-8', TMPDIR: work,
      PATH: `${nodeBin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
      ...(process.env.CHROMIUM_PATH ? { CHROMIUM_PATH: process.env.CHROMIUM_PATH } : {}),
    };
    const child = spawn('bash', [join(work, 'tour.sh')], { cwd: clone, env, detached: true });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    // The terminals the tour started (server, site, mock) are in the tour's process group.
    try { process.kill(-child.pid!, 'SIGTERM'); } catch { /* already gone */ }
    const logs = () => blocks.map((_, i) => join(work, `terminal-${i}.log`)).filter(existsSync).map((f) => `--- ${f}\n${readFileSync(f, 'utf8').slice(-3000)}`).join('\n');
    expect(code, `${output.slice(-6000)}\n${logs()}`).toBe(0);
    expect(output).toContain('TOUR COMPLETE');

    // The tour leaves nothing of its own in the checkout: its files are in $TOUR, its data in ./data
    // (ignored). What this test put there itself (the README, the links to node_modules and .node) is not the tour's.
    const left = execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: clone, encoding: 'utf8' }).split('\n');
    expect(left.filter((l) => l && !/ (README\.md|node_modules|\.node)$/.test(l))).toEqual([]);

    // What the README says each step prints, in order.
    let at = 0;
    for (const m of ports(blocks.map((b) => b.code).join('\n')).matchAll(/^#=> (.+)$/gm)) {
      const found = output.indexOf(m[1]!, at);
      expect(found, `"${m[1]}" after offset ${at} in:\n${output}`).toBeGreaterThanOrEqual(0);
      at = found + m[1]!.length;
    }
  }, 900_000);
});
