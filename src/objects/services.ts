/**
 * The parts of the object store the object APIs' handlers use, as the composition builds them
 * (app/services.ts): each handler factory names the ones it takes.
 */
import type { Config } from '../ground/config.js';
import type { Db } from '../db/knex.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { ContentStore } from './store/content-store.js';
import type { TransferTokens } from './transfer-tokens.js';
import type { Limits } from './limits.js';
import type { PartialQuota } from './partial-quota.js';

export interface ObjectStores {
  /** Content-addressed bytes, verified as they are written (the leases and the backend below). */
  store: ContentStore;
  /** The signed tokens of batch actions. */
  tokens: TransferTokens;
  /** Rate, bandwidth and free-space limits. */
  limits: Limits;
  /** The cap on bytes declared by unfinished resumable uploads, per repository and per org. */
  partialQuota: PartialQuota;
}

/** Everything a handler of the object APIs may be given; each factory names the parts it takes (Pick). */
export interface ObjectDeps {
  config: Config;
  db: Db;
  metrics: Metrics;
  objects: ObjectStores;
}
