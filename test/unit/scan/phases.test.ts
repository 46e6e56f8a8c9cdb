/**
 * A page's phases: each phase handed over once per page with its times summed, a failing phase
 * still counted, nothing after the page is done, and sleeps of the checks that wait counted as
 * settle. No figure is asserted beyond its being there and positive.
 */
import { describe, expect, it } from 'vitest';
import { PhaseClock, settle, type ScanPhase } from '../../../src/domain/scan/phases.js';

function recorder() {
  const seen: [ScanPhase, number][] = [];
  return { seen, observe: (phase: ScanPhase, seconds: number) => void seen.push([phase, seconds]) };
}

describe('PhaseClock', () => {
  it('hands each phase over once, summed, when the page is done', async () => {
    const { seen, observe } = recorder();
    const clock = new PhaseClock(observe);
    expect(await clock.time('open', () => Promise.resolve('context'))).toBe('context');
    await clock.time('load', () => settle(2));
    await clock.time('open', () => Promise.resolve('page'));
    expect(seen).toEqual([]);
    clock.flush();
    expect(seen.map(([p]) => p)).toEqual(['open', 'load']);
    expect(seen.every(([, s]) => s >= 0)).toBe(true);
    expect(seen.find(([p]) => p === 'load')![1]).toBeGreaterThan(0);
  });

  it('counts a phase that fails, and drops what comes after the page was handed over', async () => {
    const { seen, observe } = recorder();
    const clock = new PhaseClock(observe);
    await expect(clock.time('axe', () => Promise.reject(new Error('page gone')))).rejects.toThrow('page gone');
    clock.flush();
    clock.add('screenshots', 1);
    await clock.time('quiet', () => Promise.resolve());
    clock.flush();
    expect(seen.map(([p]) => p)).toEqual(['axe']);
  });

  it('counts the sleeps of a check that waits as settle, inside the check', async () => {
    const { seen, observe } = recorder();
    const clock = new PhaseClock(observe);
    await clock.time('check:auto-update', async () => {
      await settle(1, clock);
      await settle(1, clock);
    });
    clock.flush();
    const [check, waited] = [seen.find(([p]) => p === 'check:auto-update')![1], seen.find(([p]) => p === 'settle')![1]];
    expect(seen).toHaveLength(2);
    expect(waited).toBeGreaterThan(0);
    expect(waited).toBeLessThanOrEqual(check);
  });

  it('passes the work and its answer through without an observer', async () => {
    const clock = new PhaseClock();
    expect(await clock.time('load', () => Promise.resolve(1))).toBe(1);
    clock.add('settle', 1);
    clock.flush();
  });
});
