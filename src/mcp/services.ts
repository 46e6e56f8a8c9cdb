/**
 * What the MCP endpoint and its tools are given by the composition (app/services.ts): each tool
 * area names the parts it takes (Pick), and the endpoint the parts its dispatch needs.
 */
import type { Config } from '../ground/config.js';
import type { Db } from '../db/knex.js';
import type { ConnectionStore } from '../db/connections.js';
import type { Logger } from '../telemetry/log.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { TokenService } from '../auth/jwt.js';
import type { UserState } from '../auth/user-state.js';
import type { Compute } from '../compute/compute.js';
import type { ScanRunner } from '../scans/runner.js';
import type { ScreenshotStore } from '../reports/screenshots.js';
import type { basicAuth } from '../objects/access.js';
import type { AuditLog } from './audit.js';
import type { SecretBox } from '../ground/secret-box.js';

export interface McpDeps {
  config: Config;
  db: Db;
  log: Logger;
  metrics: Metrics;
  /** The audit trail every tool call writes a row to. */
  audit: AuditLog;
  tokens: TokenService;
  users: UserState;
  connections: ConnectionStore;
  /** Seals stored secrets (webhooks' signing secrets). */
  secrets: SecretBox;
  compute: Compute;
  scans: ScanRunner;
  screenshots: ScreenshotStore;
  /** The Basic-auth check of the object APIs, whose remembered passwords a user change drops. */
  objects: { basic: ReturnType<typeof basicAuth> };
}
