/**
 * Where pactum keeps its data (SQLite, generated keys, objects) when DATA_DIR is not set.
 *
 * From a checkout (`make run`, bin/pactum) that is ./data of the working directory, as the README
 * says. Installed as a package (npm install -g, npx), the working directory is wherever the user
 * happens to be, so the data go to the XDG data directory instead: $XDG_DATA_HOME/pactum, or
 * ~/.local/share/pactum. Every command of one installation finds the same database that way.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The directory holding package.json: the checkout, or the installed package. This module runs
 * from src/ (tsx), dist/src/ (tsc's build) or dist/pactum/ (the bundle); dist/ has no package.json.
 */
export function packageRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/** A checkout has the Makefile; the package's files leave it out. */
export const runsFromCheckout = (root = packageRoot()) => existsSync(join(root, 'Makefile'));

/** The XDG data directory of pactum (XDG Base Directory: a relative XDG_DATA_HOME is ignored). */
export function xdgDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_DATA_HOME && isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : join(env.HOME || homedir(), '.local', 'share');
  return join(base, 'pactum');
}

export interface DefaultDataDir {
  dir: string;
  /** Why this one, for the start line and the CLI's messages. */
  why: string;
}

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, checkout = runsFromCheckout()): DefaultDataDir {
  if (checkout) return { dir: './data', why: './data of the working directory' };
  return { dir: xdgDataDir(env), why: `${xdgDataDir(env)}, the XDG data directory (pactum runs as an installed package)` };
}
