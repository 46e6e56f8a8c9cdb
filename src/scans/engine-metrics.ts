/**
 * The scan metrics, taken around the engine rather than inside it: a session is a running scan
 * (its engine and org, classed when scraped), a check is a page (its time, whether it was
 * checked, what it could not decide). Only the phases of a page's check come from inside the
 * engine, which times them and hands them over through SessionOptions.phases.
 */
import type { ScanEngine } from '../domain/scan/engine.js';
import type { Metrics } from '../telemetry/metrics.js';
import { inSpan } from '../telemetry/tracing.js';

export function measuredEngine(engine: ScanEngine, metrics: Metrics): ScanEngine {
  const { scans } = metrics;
  return {
    get name() {
      return engine.name;
    },
    openSession(fetch, options) {
      // The name is read per call: an automatic engine hands over to jsdom when Chromium cannot start.
      const session = engine.openSession(fetch, {
        ...options,
        phases: (phase, seconds) => scans.phaseDuration.observe({ engine: engine.name, phase }, seconds),
      });
      const running = scans.sessions.open(engine.name, options?.owner);
      let closed = false;
      return {
        async check(page, signal) {
          const name = engine.name;
          const end = scans.pageDuration.startTimer({ engine: name });
          try {
            // The page's URL is an attribute of the span; no trace context is sent to the site.
            const checked = await inSpan('scan page', { 'pactum.engine': name, 'url.full': page.url }, () => session.check(page, signal));
            scans.pages.inc({ engine: name, outcome: 'checked' });
            if (checked.notEvaluated.length) scans.notEvaluated.inc({ engine: name }, checked.notEvaluated.length);
            return checked;
          } catch (err) {
            scans.pages.inc({ engine: name, outcome: 'failed' });
            throw err;
          } finally {
            end();
          }
        },
        async close() {
          if (!closed) scans.sessions.close(running);
          closed = true;
          await session.close();
        },
      };
    },
    close: () => engine.close(),
  };
}
