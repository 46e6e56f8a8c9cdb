/** What the check pool asks its worker threads (worker.ts), and what they answer. */
import type { CheckedPage, Issue, StyleStats, WcagStandard } from './types.js';

/** A full jsdom check of a page (axe, the DOM checks, and style statistics unless styles is false). */
export interface CheckJob {
  kind: 'check';
  html: string;
  url: string;
  standard: WcagStandard;
  styles: boolean;
}

/** Only the brand-scoring statistics of markup as served (the Chromium engine checks the page itself). */
export interface StyleJob {
  kind: 'style';
  html: string;
  url: string;
  issues: Issue[];
}

export type CheckRequest = CheckJob | StyleJob;

export type JobOutput = { kind: 'check'; page: CheckedPage } | { kind: 'style'; style: StyleStats };
