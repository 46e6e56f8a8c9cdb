/**
 * Files on disk: the SQLite database (and its -wal and -shm), the keys and
 * the content store are created for the owner only (0600 files, 0700 directories), whatever the
 * umask; a key file others may read stops the server with one line naming the file and the fix.
 * A DATA_DIR (or keys directory) that existed with a looser mode is tightened to 0700 when it is
 * ours (this user's, holding only pactum's files), else refused with one line naming it and the fix.
 */
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate, openDb } from '../../src/db/knex.js';
import { loadOrCreateKey } from '../../src/ground/keys.js';
import { ConfigError } from '../../src/ground/config.js';
import { fsBackend } from '../../src/objects/store/fs.js';
import { body, sha256, written } from './store/helpers.js';
import { pactum } from '../helpers/cli.js';
import { ensureDataDir } from '../../src/ground/data-dir.js';
import { startServer } from '../../src/server.js';
import { createLogger } from '../../src/telemetry/log.js';

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

  it('tightens a DATA_DIR that exists with mode 0755 to 0700 when it is ours (empty, or holding only pactum\'s files)', () => {
    for (const [name, entries] of [['empty', []], ['used', ['pactum.sqlite', 'pactum.sqlite-wal', 'keys', 'lfs']]] as const) {
      const dir = join(base, `loose-${name}`);
      mkdirSync(dir, { mode: 0o755 });
      for (const e of entries) {
        if (e.includes('.')) writeFileSync(join(dir, e), '', { mode: 0o600 });
        else mkdirSync(join(dir, e), { mode: 0o700 });
      }
      expect(mode(dir)).toBe(0o755);
      expect(ensureDataDir(dir)).toBe(0o755);
      expect(mode(dir)).toBe(0o700);
      expect(ensureDataDir(dir)).toBeNull();
    }
  });

  it('refuses a DATA_DIR open to others that holds what pactum did not make, or that belongs to another user: one line naming it and the fix', () => {
    const shared = join(base, 'shared');
    mkdirSync(shared, { mode: 0o755 });
    writeFileSync(join(shared, 'notes.txt'), 'not ours');
    expect(() => ensureDataDir(shared)).toThrow(ConfigError);
    expect(() => ensureDataDir(shared)).toThrow(`DATA_DIR ${shared}: is open to other users (mode 0755) and holds 1 entry that pactum did not make; give pactum a directory of its own, or run: chmod 700 ${shared}`);
    expect(mode(shared)).toBe(0o755);
    // Another user's directory: as root, one made and given away; else one root owns (/).
    let theirs = '/';
    if (process.getuid?.() === 0) {
      theirs = join(base, 'theirs');
      mkdirSync(theirs, { mode: 0o755 });
      chownSync(theirs, 65534, 65534);
    }
    const refusal = (() => {
      try {
        ensureDataDir(theirs);
        return 'accepted';
      } catch (err) {
        return (err as Error).message;
      }
    })();
    expect(refusal).toMatch(new RegExp(`^DATA_DIR ${theirs}: (is open to other users \\(mode 0755\\) and belongs to another user \\(uid \\d+\\); as its owner run: chmod 700 ${theirs}|is not writable)`));
    expect(mode(theirs)).toBe(0o755);
  });

  it('tightens a keys directory that exists with mode 0755, keys inside it staying 0600', () => {
    const dataDir = join(base, 'loose-keys');
    mkdirSync(join(dataDir, 'keys'), { recursive: true, mode: 0o755 });
    loadOrCreateKey(dataDir, 'k', 32);
    expect(mode(join(dataDir, 'keys'))).toBe(0o700);
    expect(mode(join(dataDir, 'keys', 'k.key'))).toBe(0o600);
  });

  it('a server started on a DATA_DIR with mode 0755 serves with it at 0700, and says so in its log', async () => {
    const dataDir = join(base, 'serve-loose');
    mkdirSync(dataDir, { mode: 0o755 });
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, cb) => void (lines.push(String(chunk)), cb()) });
    const running = await startServer({ env: { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, log: createLogger('warn', sink) });
    try {
      expect(mode(dataDir)).toBe(0o700);
      expect(lines.join('')).toMatch(/DATA_DIR was open to other users; it is now 0700/);
      expect(lines.join('')).toMatch(/"mode":"0755"/);
    } finally {
      await running.close();
    }
  });

  it('pactum serve refuses a DATA_DIR open to others that it cannot make its own: one line naming DATA_DIR and the fix, exit 2', async () => {
    const dataDir = join(base, 'serve-shared');
    mkdirSync(dataDir, { mode: 0o755 });
    writeFileSync(join(dataDir, 'other-app.db'), '');
    const r = await pactum(['serve'], { DATA_DIR: dataDir, PORT: '0', DATABASE_URL: '', JWT_SECRET: '', STORAGE: 'fs' });
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`DATA_DIR ${dataDir}: is open to other users \\(mode 0755\\).*chmod 700 ${dataDir}`));
  });
});
