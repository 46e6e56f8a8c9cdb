/**
 * Where a page's time goes: the phases an engine goes through for one page, timed with
 * performance.now() deltas (no tracing), summed per page and handed to whoever listens once the
 * page is done (scans/engine-metrics.ts turns them into pactum_scan_phase_seconds).
 *
 * The phases of one page follow each other, except `settle`, which is part of the checks that
 * wait (time they spend sleeping between looks at the page) and overlaps them. Pages of a scan are
 * checked side by side, so the phases of different pages overlap too; a phase's figure is one
 * page's own.
 */

/** The phases, a bounded set (they are a metric's label values). */
export const SCAN_PHASES = [
  /** Waiting for a page slot (other pages hold them): queue time, not the page's own work. */
  'slot',
  /** The scan's browser context and a page for it (on the first page, starting the browser). */
  'open',
  /** Navigation to the load event. */
  'load',
  /** axe-core's run, and the page facts its answer is corrected with. */
  'axe',
  /** The DOM survey the checks beyond axe read (links, headings, landmarks…). */
  'survey',
  /** The checks beyond axe, each by name. */
  'check:link-destinations',
  'check:playback',
  'check:media',
  'check:auto-update',
  'check:keyboard',
  'check:layout',
  'check:motion',
  /** Sleeps between looks inside the checks that wait (playback, auto-update): overlaps them. */
  'settle',
  /** Stopping what the page plays and collecting its garbage before the page is reused. */
  'quiet',
  /** Screenshots of failing elements. */
  'screenshots',
  /** Brand-scoring statistics of the markup (the jsdom pool), when the scan wants them. */
  'styles',
  /** Writing the page's row and its screenshots (after the check, by the scan queue). */
  'store',
] as const;

export type ScanPhase = (typeof SCAN_PHASES)[number];

/** Phases that are part of others (recorded as spans of their own, not added to a page's total). */
export const OVERLAPPING_PHASES: ReadonlySet<ScanPhase> = new Set(['settle']);

/** Told each phase a page went through and its seconds, once per phase per page. */
export type PhaseObserver = (phase: ScanPhase, seconds: number) => void;

/** One page's phases, summed (a phase entered twice, e.g. on a retry, counts once with both times). */
export class PhaseClock {
  private readonly spent = new Map<ScanPhase, number>();

  constructor(private observer?: PhaseObserver) {}

  /** Times `work` as `phase`, whether it succeeds or fails. */
  async time<T>(phase: ScanPhase, work: () => Promise<T>): Promise<T> {
    if (!this.observer) return work();
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.add(phase, (performance.now() - started) / 1000);
    }
  }

  add(phase: ScanPhase, seconds: number): void {
    if (this.observer) this.spent.set(phase, (this.spent.get(phase) ?? 0) + seconds);
  }

  /** Hands the page's phases to the observer, once; later additions are dropped. */
  flush(): void {
    if (!this.observer) return;
    for (const [phase, seconds] of this.spent) this.observer(phase, seconds);
    this.spent.clear();
    this.observer = undefined;
  }
}

/** A sleep that adds its time to `settle` (the checks that wait between looks use it). */
export function settle(ms: number, clock?: PhaseClock): Promise<void> {
  const started = performance.now();
  return new Promise((resolve) => setTimeout(resolve, ms)).then(() => clock?.add('settle', (performance.now() - started) / 1000));
}
