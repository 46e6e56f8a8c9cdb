import type { Handler } from '../http/router.js';
import { VERSION } from '../ground/version.js';

/** Liveness: the process is up and serving. */
export const health: Handler<'ops.health'> = () => ({ status: 200, body: { status: 'ok', version: VERSION } });
