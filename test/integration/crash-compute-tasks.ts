/** The real compute task module, plus a way to kill its thread: a fix whose htmlContext holds the marker. */
import { workerTask } from '../../src/compute/worker-task.js';
import { runComputeTask, type ComputeTask } from '../../src/compute/tasks.js';

export default workerTask(async (task: ComputeTask) => {
  if (task.kind === 'fix' && task.input.htmlContext.includes('<!-- crash the compute thread -->')) {
    setImmediate(() => {
      throw new Error('simulated crash of a compute thread');
    });
    return new Promise<never>(() => {});
  }
  return runComputeTask(task);
});
