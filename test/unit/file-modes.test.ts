/**
 * Files on disk (issue 14, section 6): the SQLite database (and its -wal and -shm), the keys and
 * the content store are created for the owner only (0600 files, 0700 directories), whatever the
 * umask; a key file others may read stops the server with one line naming the file and the fix.
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate, openDb } from '../../src/db/knex.js';
import { loadOrCreateKey } from '../../src/auth/keys.js';
import { ConfigError } from '../../src/config.js';
import { fsBackend } from '../../src/objects/store/fs.js';
import { body, sha256, written } from './store/helpers.js';
import { pactum } from '../helpers/cli.js';

const mode = (path: string) => statSync(path).mode & 0o777;
const base = mkdtempSync(join(tmpdir(), 'pactum-modes-'));
let umask: number;

/** Every file and directory under `dir`, with its mode. */
function walk(dir: string): [string, number, boolean][] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? [[p, mode(p), true] as [string, number, boolean], ...walk(p)] : [[p, mode(p), false] as [string, number, boolean]];
  });
}

beforeEach(() => {
  // A permissive umask: the modes must come from the code, not from the environment.
  umask = process.umask(0);
});
afterEach(() => void process.umask(umask));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('files on disk are the owner’s only', () => {
  it('creates the data directory 0700 and the SQLite database, its -wal and -shm 0600', async () => {
    const dataDir = join(base, 'db', 'data');
    const db = openDb({ databaseUrl: null, dataDir });
    try {
      await migrate(db);
      await db('orgs').insert({ id: 'org_x', name: 'x', slug: 'x', created_at: 'now', updated_at: 'now' });
      expect(mode(dataDir)).toBe(0o700);
      const files = readdirSync(dataDir).filter((f) => f.startsWith('pactum.sqlite'));
      expect(files).toEqual(expect.arrayContaining(['pactum.sqlite', 'pactum.sqlite-wal', 'pactum.sqlite-shm']));
      for (const f of files) expect([f, mode(join(dataDir, f))]).toEqual([f, 0o600]);
    } finally {
      await db.destroy();
    }
  });

  it('tightens a database file an older version left readable', async () => {
    const dataDir = join(base, 'old');
    await openDb({ databaseUrl: null, dataDir }).destroy();
    chmodSync(join(dataDir, 'pactum.sqlite'), 0o644);
    await openDb({ databaseUrl: null, dataDir }).destroy();
    expect(mode(join(dataDir, 'pactum.sqlite'))).toBe(0o600);
  });

  it('creates keys 0600 in a 0700 directory, and refuses a key file others may read', () => {
    const dataDir = join(base, 'keys');
    loadOrCreateKey(dataDir, 'k', 32);
    const file = join(dataDir, 'keys', 'k.key');
    expect(mode(join(dataDir, 'keys'))).toBe(0o700);
    expect(mode(file)).toBe(0o600);
    chmodSync(file, 0o644);
    expect(() => loadOrCreateKey(dataDir, 'k', 32)).toThrow(ConfigError);
    expect(() => loadOrCreateKey(dataDir, 'k', 32)).toThrow(`run: chmod 600 ${file}`);
  });

  it('creates objects, temporary files and partial uploads 0600 in 0700 directories', async () => {
    const root = join(base, 'lfs');
    const b = fsBackend(root);
    const data = randomBytes(10_000);
    const pending = await written(b, data);
    const during = walk(root);
    await pending.commit();
    await b.partials.append('upload-1', 0, body(data.subarray(0, 5000)), data.length);
    const entries = [...during, ...walk(root)];
    expect(entries.some(([p]) => p.includes(`${join('objects', sha256(data).slice(0, 2))}`))).toBe(true);
    expect(entries.some(([p]) => p.includes('partials'))).toBe(true);
    expect(entries.some(([p]) => p.includes('tmp'))).toBe(true);
    for (const [p, m, dir] of entries) expect([p, m]).toEqual([p, dir ? 0o700 : 0o600]);
  });

  it('pactum serve refuses to start on a key file others may read: one line naming it and the fix, non-zero exit', async () => {
    const dataDir = join(base, 'serve');
    loadOrCreateKey(dataDir, 'jwt-hs256', 32);
    const file = join(dataDir, 'keys', 'jwt-hs256.key');
    chmodSync(file, 0o640);
    const r = await pactum(['serve'], { DATA_DIR: dataDir, PORT: '0', DATABASE_URL: '', JWT_SECRET: '', STORAGE: 'fs' });
    expect(r.code).not.toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(file);
    expect(lines[0]).toContain(`chmod 600 ${file}`);
  });
});
