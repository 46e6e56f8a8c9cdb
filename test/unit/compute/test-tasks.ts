/** A task module for the worker-pool tests: answers, spins forever, throws, or kills its thread. */
import { workerTask } from '../../../src/compute/worker-task.js';

export type TestTask = { kind: 'echo'; value: string } | { kind: 'spin' } | { kind: 'throw' } | { kind: 'crash' } | { kind: 'wait'; ms: number };

export default workerTask(async (task: TestTask) => {
  switch (task.kind) {
    case 'echo':
      return task.value;
    case 'spin':
      for (;;); // synchronous and endless: only terminating the thread stops it
    case 'throw':
      throw new Error('the task refused its input');
    case 'crash':
      setImmediate(() => {
        throw new Error('simulated crash of the thread');
      });
      return new Promise<never>(() => {});
    case 'wait':
      await new Promise((resolve) => setTimeout(resolve, task.ms));
      return 'waited';
  }
});
