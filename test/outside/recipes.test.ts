/**
 * The docs' recipes run verbatim, as the README's tour is: each shell block after a
 * `<!-- recipe -->` line, in one bash with `set -euo pipefail`, a HOME of its own and nothing on
 * PATH the page does not give; a line `#=> text` says what the commands before it print (the
 * output must hold each, in order).
 *
 * - docs/git-lfs.md, against a server of the checkout's build on a free port (8080 in the page is
 *   moved there), with the README tour's organization acme and its admin ada, the tour's
 *   `pactum` (bin/) on PATH: a push, and a clone elsewhere with the same bytes.
 * - docs/development.md, in the checkout, with only the system's PATH: it must put Node 24 on
 *   PATH itself before it runs one test file.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePorts } from '../helpers/ports.js';
import { answers, background, nodeBin, root, run, systemPath, type Background } from '../helpers/outside.js';

/** The blocks of a page marked as recipes, in order. */
export function recipes(markdown: string): string[] {
  return [...markdown.matchAll(/<!-- recipe -->\n```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** Each `#=> text` of `code` found in `output`, in order; the first that is not, or null. */
function missing(code: string, output: string): string | null {
  let at = 0;
  for (const m of code.matchAll(/^#=> (.+)$/gm)) {
    const found = output.indexOf(m[1]!, at);
    if (found < 0) return m[1]!;
    at = found + m[1]!.length;
  }
  return null;
}

const page = (name: string) => readFileSync(join(root, 'docs', name), 'utf8');
const work = mkdtempSync(join(tmpdir(), 'pactum-recipes-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function home(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, '.gitconfig'), '[user]\n\tname = Ada\n\temail = ada@example.com\n[init]\n\tdefaultBranch = main\n');
  return dir;
}

describe('docs/git-lfs.md', () => {
  let server: Background | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  it('runs verbatim: a repository, credentials for the server, a push, and a clone elsewhere with the same bytes', async () => {
    const blocks = recipes(page('git-lfs.md'));
    expect(blocks.length).toBeGreaterThan(0);
    const [port] = await freePorts(1);
    const data = join(work, 'data');
    const env = { HOME: home('lfs-home'), LANG: 'C.UTF-8', TMPDIR: work, DATA_DIR: data, PATH: `${join(root, 'bin')}:${nodeBin}:${systemPath}`, GIT_TERMINAL_PROMPT: '0' };
    server = background(process.execPath, [join(root, 'dist', 'pactum', 'main.js'), 'serve'], { env: { ...env, PORT: String(port) } });
    expect(await answers(`http://127.0.0.1:${port}/healthz`, 60_000), server.output()).toBe(true);
    // What the README's tour made before: the organization acme and its admin ada.
    expect((await run('pactum', ['org', 'create', 'acme'], { env })).code).toBe(0);
    expect((await run('pactum', ['user', 'create', 'ada', '--org', 'acme', '--admin', '--password-stdin'], { env, input: 'ada-password-123\n' })).code).toBe(0);
    const code = blocks.join('\n').replace(/\b8080\b/g, String(port));
    const ran = await run('bash', ['-c', `set -euo pipefail\n${code}\necho RECIPE COMPLETE`], { cwd: work, env });
    const output = ran.stdout + ran.stderr;
    expect(ran.code, output).toBe(0);
    expect(output).toContain('RECIPE COMPLETE');
    expect(missing(code, output), output).toBeNull();
  }, 300_000);
});

describe('docs/development.md', () => {
  it('runs verbatim: Node 24 on PATH from make, then one test file', async () => {
    const blocks = recipes(page('development.md'));
    expect(blocks.length).toBeGreaterThan(0);
    const code = blocks.join('\n');
    // The system's PATH only: whatever node it has (here 20), the recipe brings Node 24 itself.
    const env = { HOME: home('dev-home'), LANG: 'C.UTF-8', TMPDIR: work, PATH: systemPath };
    const ran = await run('bash', ['-c', `set -euo pipefail\n${code}\necho RECIPE COMPLETE`], { cwd: root, env, timeoutMs: 300_000 });
    const output = ran.stdout + ran.stderr;
    expect(ran.code, output).toBe(0);
    expect(output).toContain('RECIPE COMPLETE');
    expect(missing(code, output), output).toBeNull();
  }, 300_000);
});
