/**
 * Keys kept in DATA_DIR/keys when the environment supplies none: generated once, mode 0600,
 * created with O_EXCL so two processes starting together agree on one key. A key file that
 * others may read is refused: the server does not start on a key that may already be known.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { ConfigError } from './config.js';
import { ownerOnlyDirectory } from './owner-only.js';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

export function loadOrCreateKey(dataDir: string, name: string, bytes = 32): Buffer {
  const dir = join(dataDir, 'keys');
  const file = join(dir, `${name}.key`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // A keys directory others may enter (an older install, a restored backup) is tightened or refused.
  ownerOnlyDirectory(dir, dir, (entry) => entry.endsWith('.key'));
  try {
    writeFileSync(file, randomBytes(bytes).toString('base64') + '\n', { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const mode = statSync(file).mode & 0o777;
  if (mode & 0o077) throw new ConfigError(`${file} is open to other users (mode ${mode.toString(8).padStart(4, '0')}); run: chmod 600 ${file}`);
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length < bytes) throw new ConfigError(`${file} holds ${key.length} bytes; expected ${bytes}`);
  return key;
}

/** A key given in the environment as hex (64 digits) or base64 (of 32 bytes). */
export function parseKey(value: string, name: string, bytes = 32): Buffer {
  const key = /^[0-9a-f]+$/i.test(value) && value.length === bytes * 2 ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
  if (key.length !== bytes) throw new ConfigError(`${name} must be ${bytes} bytes, as ${bytes * 2} hex digits or base64`);
  return key;
}
