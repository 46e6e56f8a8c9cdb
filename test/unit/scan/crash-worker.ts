/** The real scan worker, plus a way to crash it: a job whose HTML holds CRASH_MARKER throws uncaught. */
import { parentPort } from 'node:worker_threads';

await import('../../../src/domain/scan/worker.js');

parentPort!.on('message', (job: { html: string }) => {
  if (job.html.includes('<!-- crash the worker -->')) throw new Error('simulated crash in the checker');
});
