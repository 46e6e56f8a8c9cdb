/**
 * docs/configuration.md and the settings the server reads stay one list: every setting of
 * src/ground/config.ts is documented there, and the page names no setting that does not exist.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { SETTING_NAMES } from '../../src/ground/config.js';

const page = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'configuration.md'), 'utf8');
/** The settings the page's tables document: the backticked names in each row's first cell. */
const documented = new Set(
  page
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .flatMap((l) => [...l.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!)),
);

it('documents every setting the server reads', () => {
  expect(SETTING_NAMES.filter((s) => !documented.has(s))).toEqual([]);
});

it('documents no setting the server does not read', () => {
  expect([...documented].filter((s) => !SETTING_NAMES.includes(s))).toEqual([]);
});
