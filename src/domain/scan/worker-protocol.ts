/** Messages between the check pool and its worker threads. */
import type { CheckedPage, Issue, StyleStats, WcagStandard } from './types.js';

/** A full jsdom check of a page (axe, the DOM checks, and style statistics unless styles is false). */
export interface CheckJob {
  id: number;
  kind: 'check';
  html: string;
  url: string;
  standard: WcagStandard;
  styles: boolean;
}

/** Only the brand-scoring statistics of markup as served (the Chromium engine checks the page itself). */
export interface StyleJob {
  id: number;
  kind: 'style';
  html: string;
  url: string;
  issues: Issue[];
}

export type CheckRequest = CheckJob | StyleJob;

export type JobOutput = { kind: 'check'; page: CheckedPage } | { kind: 'style'; style: StyleStats };

export type CheckResponse =
  | { kind: 'result'; id: number; ok: true; output: JobOutput }
  | { kind: 'result'; id: number; ok: false; error: string };

/** Sent once the worker has loaded jsdom and axe-core, so job deadlines exclude thread start-up. */
export interface WorkerReady {
  kind: 'ready';
}

export type WorkerMessage = CheckResponse | WorkerReady;
