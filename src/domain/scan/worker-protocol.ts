/** Messages between the check pool and its worker threads. */
import type { CheckedPage, WcagStandard } from './types.js';

export interface CheckRequest {
  id: number;
  html: string;
  url: string;
  standard: WcagStandard;
}

export type CheckResponse =
  | { kind: 'result'; id: number; ok: true; page: CheckedPage }
  | { kind: 'result'; id: number; ok: false; error: string };

/** Sent once the worker has loaded jsdom and axe-core, so job deadlines exclude thread start-up. */
export interface WorkerReady {
  kind: 'ready';
}

export type WorkerMessage = CheckResponse | WorkerReady;
