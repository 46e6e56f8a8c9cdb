/**
 * Which engine checks pages in this process (SCAN_ENGINE): Chromium when asked for, or in auto
 * mode when its executable is there; jsdom otherwise. In auto mode a Chromium that cannot start
 * hands over to jsdom for the rest of the process (logged once), so a broken browser install
 * degrades scans instead of failing them.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { cpus } from 'node:os';
import { ConfigError, type Config } from '../ground/config.js';
import { createChromiumEngine, type ChromiumEngine } from '../domain/scan/chromium/engine.js';
import { processUid, ROOT_WARNING, sandboxFor } from '../domain/scan/chromium/sandbox.js';
import { CheckError, type CheckSession, type ScanEngine } from '../domain/scan/engine.js';
import { createJsdomEngine } from '../domain/scan/jsdom-engine.js';
import { createCheckPool } from '../compute/check-pool.js';
import type { CheckPool } from '../domain/scan/check-pool.js';
import type { EngineName } from '../domain/scan/types.js';
import type { Logger } from '../telemetry/log.js';

export function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The engine SCAN_ENGINE and CHROMIUM_PATH select; a refused combination is a ConfigError naming both. */
export function engineName(config: Pick<Config, 'scanEngine' | 'chromiumPath'>): EngineName {
  if (config.scanEngine === 'jsdom') return 'jsdom';
  const found = executable(config.chromiumPath);
  if (config.scanEngine === 'chromium' && !found) {
    throw new ConfigError(`SCAN_ENGINE=chromium, but CHROMIUM_PATH ${config.chromiumPath} is not an executable file: install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH`);
  }
  return found ? 'chromium' : 'jsdom';
}

/**
 * jsdom worker threads: one per core, at least two (so one slow page never holds every other
 * check), at most four (axe on jsdom is CPU-bound; more threads only share the same cores).
 */
export function jsdomPoolSize(): number {
  return Math.max(2, Math.min(4, cpus().length));
}

/**
 * Said once at start-up when Chromium will run without its sandbox because the server runs as
 * root (where the sandbox cannot start for want of user namespaces, the engine says so at launch).
 */
export function warnUnsandboxed(log: Logger, uid = processUid()): void {
  if (!sandboxFor(uid).sandboxed) log.warn({ uid }, ROOT_WARNING);
}

/** Chromium's page slots (SCAN_PAGE_SLOTS): by default one more than the cores (a page also waits, on its subresources and timers). */
export function pageSlots(config: Pick<Config, 'scanPageSlots'>): number {
  return config.scanPageSlots ?? cpus().length + 1;
}

/** The page slots one org may hold (SCAN_PAGE_SLOTS_PER_ORG): by default all but one, at least 1. */
export function pageSlotsPerOrg(config: Pick<Config, 'scanPageSlots' | 'scanPageSlotsPerOrg'>): number {
  return config.scanPageSlotsPerOrg ?? Math.max(1, pageSlots(config) - 1);
}

export interface Engines {
  engine: ScanEngine;
  pool: CheckPool;
  /** The Chromium engine when it may be used (its launches are counted in the metrics). */
  chromium?: ChromiumEngine;
}

export function createEngines(config: Config, log: Logger): Engines {
  const name = engineName(config);
  const pageTimeoutMs = config.scanPageTimeoutSeconds * 1000;
  // The jsdom pool also computes brand-scoring styles for Chromium, so it always exists (its workers start on first use).
  const pool = createCheckPool(jsdomPoolSize(), { jobTimeoutMs: pageTimeoutMs });
  const jsdom = createJsdomEngine(pool);
  if (name === 'jsdom') return { engine: jsdom, pool };
  const chromium = createChromiumEngine({
    executablePath: config.chromiumPath,
    pageTimeoutMs,
    pageCpuSeconds: config.scanPageCpuSeconds,
    maxPages: pageSlots(config),
    maxPagesPerOwner: pageSlotsPerOrg(config),
    styleStats: (html, url, issues, signal, owner) => pool.styleStats(html, url, issues, signal, owner),
    log,
  });
  if (config.scanEngine === 'chromium') return { engine: withPool(chromium, pool), pool, chromium };
  return { engine: fallingBack(chromium, jsdom, pool, log), pool, chromium };
}

function withPool(engine: ScanEngine, pool: CheckPool): ScanEngine {
  return {
    get name() { return engine.name; },
    openSession: (fetch, session) => engine.openSession(fetch, session),
    async close() {
      await engine.close();
      await pool.close();
    },
  };
}

/** Chromium until it fails to start, jsdom from then on. */
function fallingBack(chromium: ScanEngine, jsdom: ScanEngine, pool: CheckPool, log: Logger): ScanEngine {
  let broken = false;
  const isLaunchFailure = (err: unknown) => err instanceof CheckError && err.code === 'failed' && /could not be started/.test(err.message);
  return {
    get name() { return broken ? 'jsdom' : 'chromium'; },
    openSession(fetch, options) {
      if (broken) return jsdom.openSession(fetch, options);
      const browser = chromium.openSession(fetch, options);
      const fallback = jsdom.openSession(fetch, options);
      const session: CheckSession = {
        async check(page, signal) {
          if (broken) return fallback.check(page, signal);
          try {
            return await browser.check(page, signal);
          } catch (err) {
            if (!isLaunchFailure(err)) throw err;
            if (!broken) log.warn({ err: (err as Error).message }, 'Chromium could not start; scans use jsdom from now on (SCAN_ENGINE=auto)');
            broken = true;
            return fallback.check({ ...page, styles: page.styles }, signal);
          }
        },
        async close() {
          await browser.close();
          await fallback.close();
        },
      };
      return session;
    },
    async close() {
      await chromium.close();
      await pool.close();
    },
  };
}
