/**
 * `pactum serve` restarts itself with two malloc arenas unless its environment sets them
 * (cli/serving-process.ts); what an operator set stays as set.
 */
import { expect, it } from 'vitest';
import { servingRelaunch } from '../../src/cli/serving-process.js';

const argv = ['/usr/bin/node', '/opt/pactum/dist/src/cli/main.js', 'serve'];

it('keeps the node options it was started with, and adds two malloc arenas', () => {
  const r = servingRelaunch(['--max-old-space-size=512'], argv, { PATH: '/bin' });
  expect(r).toEqual({
    args: ['/usr/bin/node', '--max-old-space-size=512', '/opt/pactum/dist/src/cli/main.js', 'serve'],
    env: { PATH: '/bin', MALLOC_ARENA_MAX: '2' },
  });
});

it('keeps the arenas an operator chose: no restart', () => {
  expect(servingRelaunch([], argv, { MALLOC_ARENA_MAX: '4' })).toBeNull();
});

it('does not restart a process that has them (the restarted one)', () => {
  expect(servingRelaunch([], argv, { MALLOC_ARENA_MAX: '2' })).toBeNull();
});
