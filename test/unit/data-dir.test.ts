/**
 * Where the data go when DATA_DIR is unset: ./data from a checkout (the README's make run), the
 * XDG data directory from the installed package (whose working directory is anywhere).
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { defaultDataDir, packageRoot, runsFromCheckout, xdgDataDir } from '../../src/ground/default-data-dir.js';

it('from a checkout: ./data of the working directory', () => {
  expect(runsFromCheckout()).toBe(true);
  expect(packageRoot()).toBe(join(import.meta.dirname, '..', '..'));
  expect(defaultDataDir(process.env, true)).toEqual({ dir: './data', why: './data of the working directory' });
});

it('installed: $XDG_DATA_HOME/pactum, else ~/.local/share/pactum; a relative XDG_DATA_HOME is ignored, as the spec says', () => {
  expect(xdgDataDir({ HOME: '/home/ada', XDG_DATA_HOME: '/srv/xdg' })).toBe('/srv/xdg/pactum');
  expect(xdgDataDir({ HOME: '/home/ada' })).toBe('/home/ada/.local/share/pactum');
  expect(xdgDataDir({ HOME: '/home/ada', XDG_DATA_HOME: 'relative/dir' })).toBe('/home/ada/.local/share/pactum');
  expect(defaultDataDir({ HOME: '/home/ada' }, false)).toEqual({ dir: '/home/ada/.local/share/pactum', why: '/home/ada/.local/share/pactum, the XDG data directory (pactum runs as an installed package)' });
});
