/**
 * `pactum serve` restarts itself with its V8 flag and malloc arenas unless it already has them
 * (cli/serving-process.ts); what an operator set stays as set.
 */
import { expect, it } from 'vitest';
import { servingRelaunch } from '../../src/cli/serving-process.js';

const argv = ['/usr/bin/node', '/opt/pactum/dist/src/cli/main.js', 'serve'];

it('adds the flag after the node options it was started with, and two malloc arenas', () => {
  const r = servingRelaunch(['--max-old-space-size=512'], argv, { PATH: '/bin' });
  expect(r).toEqual({
    args: ['/usr/bin/node', '--max-old-space-size=512', '--no-concurrent-recompilation', '/opt/pactum/dist/src/cli/main.js', 'serve'],
    env: { PATH: '/bin', MALLOC_ARENA_MAX: '2' },
  });
});

it('keeps the arenas an operator chose', () => {
  expect(servingRelaunch([], argv, { MALLOC_ARENA_MAX: '4' })?.env.MALLOC_ARENA_MAX).toBe('4');
});

it('does not restart a process that has both (the restarted one)', () => {
  expect(servingRelaunch(['--no-concurrent-recompilation'], argv, { MALLOC_ARENA_MAX: '2' })).toBeNull();
});
