// A worker pool's task module when pactum runs from its TypeScript sources (tsx, vitest); dist/
// loads the compiled module directly. On Node 20, tsx given as a worker's --import reaches only
// CommonJS loading, so the thread registers tsx's ESM loader itself, then loads the .ts module
// named in workerData and hands on its handler. See worker-pool.ts taskModule().
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const loaded = await import(workerData.taskModule);
export default loaded.default;
