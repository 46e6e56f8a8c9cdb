/**
 * What checks pages: an engine (Chromium or jsdom) opens a session per scan, and the session
 * checks the pages the crawler fetched. Both engines answer the same CheckedPage, so the crawler,
 * the reports and the tools do not know which one ran.
 */
import type { FetchOptions } from './fetch-page.js';
import type { CheckedPage, EngineName, WcagStandard } from './types.js';
import type { ShotOptions } from './types.js';
import type { PhaseObserver } from './phases.js';

/** A page as fetched: its final URL and its markup. */
export interface PageToCheck {
  url: string;
  html: string;
  standard: WcagStandard;
  /** Also gather the style statistics brand scoring reads (costs a pass over the DOM). */
  styles?: boolean;
  /** Chromium: screenshots of the first failing elements, at most `max` (jsdom takes none). */
  screenshots?: ShotOptions;
}

export interface CheckSession {
  /** Checks one page; rejects with a CheckError when the page could not be checked (the crawler reports it as the page's error). */
  check(page: PageToCheck, signal?: AbortSignal): Promise<CheckedPage>;
  /** Frees what the session holds (Chromium: its browser context). */
  close(): Promise<void>;
}

export interface SessionOptions {
  /**
   * Whose pages these are (an org): when pages wait for the engine's slots (browser pages,
   * checker threads), owners take turns, so one scan's many pages do not hold another's few.
   */
  owner?: string;
  /**
   * Chromium: how long a check may wait for a page slot before it fails as 'busy' (someone waits
   * for the answer: dashboard_scan_page). Default: until a slot is free (a site scan's pages).
   */
  maxWaitMs?: number;
  /**
   * Told, once a page is done, how long each phase of its check took (phases.ts). The Chromium
   * engine records them; the jsdom engine, whose pages are checked whole in a worker, does not.
   */
  phases?: PhaseObserver;
}

export interface ScanEngine {
  readonly name: EngineName;
  /**
   * A session for one scan. `fetch` is the scan's address policy: Chromium applies it to every
   * request the page makes (images, scripts, frames, XHR), not only to the page itself.
   */
  openSession(fetch: FetchOptions, session?: SessionOptions): CheckSession;
  close(): Promise<void>;
}

/** busy: no slot came free within maxWaitMs; cpu: the page used more than its CPU budget (Chromium). */
export type CheckErrorCode = 'timeout' | 'crashed' | 'failed' | 'closed' | 'busy' | 'cpu';

/** Why a page could not be checked, worded for the report. */
export class CheckError extends Error {
  constructor(readonly code: CheckErrorCode, message: string) {
    super(message);
    this.name = 'CheckError';
  }
}
