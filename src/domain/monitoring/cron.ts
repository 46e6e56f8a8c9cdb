/**
 * Schedules' cron expressions (cron-parser, which pg-boss schedules with too), always in UTC:
 * five fields (minute hour day-of-month month day-of-week) or six (seconds first), and the
 * shortest time between two runs an expression allows, which the operator bounds
 * (MONITOR_MIN_INTERVAL_SECONDS).
 */
import { CronExpressionParser } from 'cron-parser';

/** Runs looked at to find the closest two: an expression's pattern repeats well within this. */
const SAMPLE_RUNS = 1000;

export class CronError extends Error {}

function parse(expression: string, after: Date) {
  const fields = expression.trim().split(/\s+/);
  if (!expression.trim().startsWith('@') && (fields.length < 5 || fields.length > 6)) {
    throw new CronError(`cron "${expression}" has ${fields.length} fields; give five (minute hour day-of-month month day-of-week) or six (seconds first)`);
  }
  try {
    return CronExpressionParser.parse(expression, { currentDate: after, tz: 'UTC' });
  } catch (err) {
    throw new CronError(`cron "${expression}" is not a cron expression: ${(err as Error).message}`);
  }
}

/** The first run strictly after `after`; null when the expression names none (e.g. 30 February). */
export function nextRun(expression: string, after: Date): Date | null {
  const it = parse(expression, after);
  try {
    return it.next().toDate();
  } catch {
    return null;
  }
}

/**
 * Checks an expression: it parses, it has a next run, and no two of its runs are closer than
 * `minIntervalSeconds`. Throws CronError with a message naming what is wrong.
 */
export function checkCron(expression: string, minIntervalSeconds: number, now = new Date()): void {
  const it = parse(expression, now);
  let previous: number | null = null;
  let closest = Infinity;
  for (let i = 0; i < SAMPLE_RUNS; i++) {
    let at: number;
    try {
      at = it.next().toDate().getTime();
    } catch {
      break; // no more runs
    }
    if (previous !== null) closest = Math.min(closest, (at - previous) / 1000);
    previous = at;
    if (closest < minIntervalSeconds) break;
  }
  if (previous === null) throw new CronError(`cron "${expression}" never runs`);
  if (closest < minIntervalSeconds) {
    throw new CronError(`cron "${expression}" runs ${closest} s apart; this server allows runs at least ${minIntervalSeconds} s apart (MONITOR_MIN_INTERVAL_SECONDS)`);
  }
}
