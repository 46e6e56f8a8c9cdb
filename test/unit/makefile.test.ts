/**
 * The Makefile's promises that a user relies on without reading it: `make clean` never deletes
 * the local database, and `make help` says where the target that does is.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, cpSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const make = (cwd: string, args: string[], env: Record<string, string> = {}) =>
  execFileSync('make', ['-s', '-f', join(cwd, 'Makefile'), ...args], { cwd, encoding: 'utf8', env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });

/** A directory with the Makefile and what its first lines need, and data/ and dist/ to delete or keep. */
function sandbox() {
  const dir = mkdtempSync(join(tmpdir(), 'pactum-make-'));
  cpSync(join(root, 'Makefile'), join(dir, 'Makefile'));
  cpSync(join(root, 'scripts', 'ensure-node.sh'), join(dir, 'scripts', 'ensure-node.sh'));
  for (const f of ['.node-version']) if (existsSync(join(root, f))) cpSync(join(root, f), join(dir, f));
  for (const d of ['data', 'dist']) {
    mkdirSync(join(dir, d));
    writeFileSync(join(dir, d, 'file'), 'x');
  }
  return dir;
}

it('make clean keeps data/; make clean-data deletes it, and make help says which does what', () => {
  const dir = sandbox();
  make(dir, ['clean']);
  expect(existsSync(join(dir, 'dist'))).toBe(false);
  expect(existsSync(join(dir, 'data', 'file'))).toBe(true);
  make(dir, ['clean-data'], { FORCE: '1' });
  expect(existsSync(join(dir, 'data'))).toBe(false);
  const help = make(dir, ['help']);
  expect(help).toMatch(/^clean\s+.*keeps data\//m);
  expect(help).toMatch(/^clean-data\s+DELETE data\//m);
});

it('make clean-data asks first: without a yes, data/ stays, and declining is no error', () => {
  const dir = sandbox();
  const declined = spawnSync('make', ['-s', 'clean-data'], { cwd: dir, input: 'n\n', encoding: 'utf8' });
  expect(declined.stdout).toContain('kept data/');
  expect(declined.status, declined.stderr).toBe(0);
  expect(declined.stderr).not.toMatch(/Error/);
  expect(existsSync(join(dir, 'data', 'file'))).toBe(true);
});

it('make help shows the env line as a shell takes it, and pasted, it works', () => {
  const dir = sandbox();
  const help = make(dir, ['help']);
  expect(help).not.toContain('$$');
  const line = /^env\s.*?: (eval "\$\(make -s env\)")$/m.exec(help)?.[1];
  expect(line, help).toBeDefined();
  const pasted = spawnSync('bash', ['-c', `${line} && command -v node`], { cwd: dir, encoding: 'utf8' });
  expect(pasted.status, pasted.stderr).toBe(0);
});
