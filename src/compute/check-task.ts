/**
 * Worker-thread task module of the check pool (check-pool.ts): checks pages with axe-core off the
 * server's event loop. jsdom and axe-core load with this module, so once a thread answers it
 * has them, and a job's time limit (which starts with the job) excludes that start-up.
 */
import { workerTask } from './worker-task.js';
import { checkPage, styleStatsOfHtml } from '../domain/scan/check-page.js';
import type { CheckRequest, JobOutput } from '../domain/scan/worker-protocol.js';

export async function runCheckJob(job: CheckRequest): Promise<JobOutput> {
  if (job.kind === 'style') return { kind: 'style', style: styleStatsOfHtml(job.html, job.url, job.issues) };
  return { kind: 'check', page: await checkPage(job.html, job.url, job.standard, { styles: job.styles }) };
}

export default workerTask(runCheckJob);
