/**
 * DATA_DIR, where pactum keeps what it keeps on this machine (SQLite, generated keys, objects):
 * made owner-only and checked writable before anything is opened there. Where it is when not set
 * is default-data-dir.ts.
 */
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError, type Config } from './config.js';
import { ownerOnlyDirectory } from './owner-only.js';

/** What pactum keeps in DATA_DIR (the SQLite database and its companions, generated keys, object files). */
const DATA_DIR_ENTRIES = /^(pactum\.sqlite(-wal|-shm|-journal)?|keys|lfs)$/;

/**
 * Creates DATA_DIR (owner only) and checks that it is a writable directory. One level at a time:
 * Node 20's `mkdirSync(…, { recursive: true })` never returns for a path under /proc. One that
 * exists and others may read is tightened to 0700 when it is ours (owned by this user, holding
 * only pactum's files), else refused with the fix (ground/owner-only.ts). Returns the mode it had
 * when it was tightened, else null.
 */
export function ensureDataDir(dir: string): number | null {
  const fail = (why: string): never => {
    throw new ConfigError(`DATA_DIR ${dir}: ${why}`);
  };
  const missing: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    try {
      if (!statSync(d).isDirectory()) fail(d === dir ? 'is not a directory' : `${d} is not a directory`);
      break;
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR') fail('a part of the path is a file, not a directory (ENOTDIR)');
      if (code !== 'ENOENT' || dirname(d) === d) fail(`cannot be read (${code})`);
      missing.unshift(d);
    }
  }
  for (const d of missing) {
    try {
      mkdirSync(d, { mode: 0o700 });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') fail(`cannot be created (${code} at ${d})`);
    }
  }
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (err) {
    fail(`is not writable (${(err as NodeJS.ErrnoException).code})`);
  }
  return ownerOnlyDirectory(dir, `DATA_DIR ${dir}`, (entry) => DATA_DIR_ENTRIES.test(entry));
}

/** Whether this configuration keeps anything in DATA_DIR (SQLite, object files, generated keys). */
export function usesDataDir(config: Config): boolean {
  return (
    !config.databaseUrl ||
    config.storage.kind === 'fs' ||
    !config.secretsKey ||
    !config.lfs.transferTokenSecret ||
    (!config.jwt.secret && !config.jwt.jwksUrl)
  );
}
