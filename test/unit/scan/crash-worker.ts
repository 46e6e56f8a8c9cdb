/** The real scan worker, plus a way to crash it: a job whose HTML holds the crash marker throws uncaught. */
import { workerTask } from '../../../src/compute/worker-task.js';
import { runCheckJob } from '../../../src/compute/check-task.js';
import type { CheckRequest } from '../../../src/domain/scan/worker-protocol.js';

export default workerTask(async (job: CheckRequest) => {
  if (job.html.includes('<!-- crash the worker -->')) {
    setImmediate(() => {
      throw new Error('simulated crash in the checker');
    });
    return new Promise<never>(() => {});
  }
  return runCheckJob(job);
});
