/**
 * Directories that hold secrets (DATA_DIR: the SQLite database, generated keys, object files) are
 * the owner's only, 0700, also when they existed before pactum first ran.
 */
import { chmodSync, readdirSync, statSync } from 'node:fs';
import { ConfigError } from './config.js';

const octal = (mode: number) => mode.toString(8).padStart(4, '0');

/**
 * Makes `dir` the owner's only. A directory others may read or enter is tightened to 0700 when
 * this process's user owns it and every entry in it passes `ours`; otherwise it is refused with
 * one line (starting with `label`) that says why and how to fix it: tightening a directory that
 * holds other things (DATA_DIR=/var/lib, say) would break whatever else uses them. Returns the
 * mode it had when it was tightened, else null.
 */
export function ownerOnlyDirectory(dir: string, label: string, ours: (entry: string) => boolean): number | null {
  const st = statSync(dir);
  const mode = st.mode & 0o777;
  if (!(mode & 0o077)) return null;
  const open = `${label}: is open to other users (mode ${octal(mode)})`;
  const fix = `chmod 700 ${dir}`;
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) throw new ConfigError(`${open} and belongs to another user (uid ${st.uid}); as its owner run: ${fix}`);
  const foreign = readdirSync(dir).filter((entry) => !ours(entry)).length;
  if (foreign) throw new ConfigError(`${open} and holds ${foreign} ${foreign === 1 ? 'entry' : 'entries'} that pactum did not make; give pactum a directory of its own, or run: ${fix}`);
  try {
    chmodSync(dir, 0o700);
  } catch (err) {
    throw new ConfigError(`${open} and cannot be tightened (${(err as NodeJS.ErrnoException).code}); run: ${fix}`);
  }
  return mode;
}
