/**
 * Log lines carry the ISO time of the millisecond they were written in (telemetry/log.ts makes the
 * text once a millisecond): the same text pino's isoTime writes.
 */
import { Writable } from 'node:stream';
import { afterEach, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/telemetry/log.js';

afterEach(() => vi.useRealTimers());

it('stamps each line with the time of its millisecond', () => {
  const lines: { time: string; msg: string }[] = [];
  const sink = new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString())), done()) });
  const log = createLogger('info', sink);
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2026-12-07T14:00:00.001Z'));
  log.info('a');
  log.info('b');
  vi.setSystemTime(new Date('2026-12-07T14:00:00.002Z'));
  log.info('c');
  vi.setSystemTime(new Date('2027-01-01T00:00:00.000Z'));
  log.info('d');
  expect(lines.map((l) => [l.msg, l.time])).toEqual([
    ['a', '2026-12-07T14:00:00.001Z'],
    ['b', '2026-12-07T14:00:00.001Z'],
    ['c', '2026-12-07T14:00:00.002Z'],
    ['d', '2027-01-01T00:00:00.000Z'],
  ]);
});
