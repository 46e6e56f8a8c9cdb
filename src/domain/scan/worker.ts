/**
 * Worker-thread entry: checks pages with axe-core off the server's event loop. One job at a time
 * (the pool never sends a second before the first is answered); axe's source is loaded once per thread.
 */
import { parentPort } from 'node:worker_threads';
import { checkPage, styleStatsOfHtml } from './check-page.js';
import type { CheckRequest, CheckResponse, JobOutput, WorkerReady } from './worker-protocol.js';

if (!parentPort) throw new Error('worker.ts must run as a worker thread (see pool.ts)');
const port = parentPort;

async function run(job: CheckRequest): Promise<JobOutput> {
  if (job.kind === 'style') return { kind: 'style', style: styleStatsOfHtml(job.html, job.url, job.issues) };
  return { kind: 'check', page: await checkPage(job.html, job.url, job.standard, { styles: job.styles }) };
}

port.on('message', (job: CheckRequest) => {
  run(job).then(
    (output) => port.postMessage({ kind: 'result', id: job.id, ok: true, output } satisfies CheckResponse),
    (err: unknown) => port.postMessage({ kind: 'result', id: job.id, ok: false, error: err instanceof Error ? err.message : String(err) } satisfies CheckResponse),
  );
});

port.postMessage({ kind: 'ready' } satisfies WorkerReady);
