/**
 * What every part of the server is given: the configuration and the services built from it.
 * The composition root (server.ts) builds it; handlers, tools and routes receive it. It depends
 * on nothing above it, so no part needs to import server.ts.
 */
import type { Config } from '../ground/config.js';
import type { Db } from '../db/knex.js';
import type { PointReads } from '../db/point-reads.js';
import type { Logger } from '../telemetry/log.js';
import type { TokenService } from '../auth/jwt.js';
import type { SecretBox } from '../ground/secret-box.js';
import type { ConnectionStore } from '../db/connections.js';
import type { AuditLog } from '../mcp/audit.js';
import type { UserState } from '../auth/user-state.js';
import type { PasswordThrottle } from '../auth/throttle.js';
import type { ContentStore } from '../objects/store/content-store.js';
import type { StorageLifecycle } from '../objects/store/open.js';
import type { BlobBackend } from '../objects/store/backend.js';
import type { TransferTokens } from '../objects/transfer-tokens.js';
import type { Limits } from '../objects/limits.js';
import type { PartialQuota } from '../objects/partial-quota.js';
import type { basicAuth } from '../objects/access.js';
import type { ScanRunner } from '../scans/runner.js';
import type { Compute } from '../compute/compute.js';
import type { ScreenshotStore } from '../reports/screenshots.js';
import type { ReportSlots } from '../reports/slots.js';
import type { Metrics } from '../telemetry/metrics.js';

export interface Services {
  config: Config;
  db: Db;
  log: Logger;
  tokens: TokenService;
  secrets: SecretBox;
  connections: ConnectionStore;
  audit: AuditLog;
  /** Rows read by primary key on every request (SQLite: a read-only connection outside knex). */
  reads: PointReads;
  users: UserState;
  /** Back-off for failed password checks (sign-in and HTTP Basic). */
  passwords: PasswordThrottle;
  objects: {
    store: ContentStore;
    /** Start-up and shutdown work of the storage backend. */
    backend: StorageLifecycle;
    /** The backend under the upload leases: what the content store writes through. */
    leased: BlobBackend;
    tokens: TransferTokens;
    limits: Limits;
    /** The cap on bytes declared by unfinished resumable uploads, per repository and per org. */
    partialQuota: PartialQuota;
    /** The Basic-auth check, whose cache a password change clears. */
    basic: ReturnType<typeof basicAuth>;
  };
  scans: ScanRunner;
  /** Screenshots of failing elements, readable by those who may read their scan's report. */
  screenshots: ScreenshotStore;
  /** The caps on report downloads under way, per user and per org. */
  reportSlots: ReportSlots;
  /** Worker threads for the work whose cost grows with its input (fix drafts, digests, brand scores). */
  compute: Compute;
  /** The Prometheus metrics of this server (GET /metrics). */
  metrics: Metrics;
}
