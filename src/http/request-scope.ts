/**
 * The request being served, for code that has no ctx at hand: the process-level fault handlers
 * (cli/serve.ts) name the request whose code left an error unhandled.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface RequestScope {
  requestId: string;
  method: string;
  path: string;
  /** When it arrived (performance.now(), once its headers were read). */
  arrived: number;
}

export const requestScope = new AsyncLocalStorage<RequestScope>();
