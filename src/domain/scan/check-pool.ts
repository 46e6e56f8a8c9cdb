/**
 * What the jsdom engine checks pages with: threads that run checkPage and style statistics off
 * the event loop, orgs taking turns for them (compute/check-pool.ts runs them).
 */
import type { CheckedPage, Issue, StyleStats, WcagStandard } from './types.js';

export interface CheckPool {
  /**
   * Checks a page in a worker; `signal` withdraws a queued job, or abandons a running one (its
   * thread is replaced). Queued jobs of different `owner`s (orgs) take turns for the threads.
   */
  check(html: string, url: string, standard: WcagStandard, signal?: AbortSignal, options?: { styles?: boolean; owner?: string }): Promise<CheckedPage>;
  /** Brand-scoring statistics of markup as served, in a worker (for pages another engine checked). */
  styleStats(html: string, url: string, issues: Issue[], signal?: AbortSignal, owner?: string): Promise<StyleStats>;
  /** Fails queued and running jobs and stops every worker. */
  close(): Promise<void>;
}

export type CheckPoolErrorCode = 'check-failed' | 'worker-crashed' | 'timeout' | 'closed';

export class CheckPoolError extends Error {
  constructor(readonly code: CheckPoolErrorCode, message: string) {
    super(message);
    this.name = 'CheckPoolError';
  }
}
