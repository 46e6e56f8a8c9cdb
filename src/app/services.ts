/**
 * The services of a server, built once from its configuration: what the composition hands each
 * part (every handler factory and tool area takes the parts it names, never the whole).
 */
import type { Config } from '../ground/config.js';
import { openDb, poolConnections } from '../db/knex.js';
import { createTokenService } from '../auth/jwt.js';
import { contentStore } from '../objects/store/content-store.js';
import { openBackend } from '../objects/store/open.js';
import { withUploadLeases } from '../objects/store/upload-lease.js';
import { createTransferTokens } from '../objects/transfer-tokens.js';
import { createLimits } from '../objects/limits.js';
import { createPartialQuota, partialBytesDeclared } from '../objects/partial-quota.js';
import { basicAuth as createBasicAuth } from '../objects/access.js';
import { createScanRunner } from '../scans/runner.js';
import { afterScan } from '../scans/after-scan.js';
import { scanLoadByOrg } from '../scans/org-class.js';
import { createCompute } from '../compute/compute.js';
import { livePools } from '../compute/worker-pool.js';
import { screenshotBackend, screenshotStore } from '../reports/screenshots.js';
import { createReportSlots } from '../reports/slots.js';
import { createSecretBox } from '../ground/secret-box.js';
import { connectionStore } from '../db/connections.js';
import { createAuditLog } from '../mcp/audit.js';
import { createUserState } from '../auth/user-state.js';
import { requestScope } from '../http/request-scope.js';
import { createPointReads } from '../db/point-reads.js';
import { watchPrincipals } from '../db/principal-changes.js';
import { createPasswordThrottle } from '../auth/throttle.js';
import { configurePasswordChecks, passwordCheckLoad } from '../auth/passwords.js';
import { createMetrics } from '../telemetry/metrics.js';
import { injectTraceContext, traced, tracingOn } from '../telemetry/tracing.js';
import { traceQueries } from '../db/query-spans.js';
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
import type { ChromiumEngine } from '../domain/scan/chromium/engine.js';
import type { ReportSlots } from '../reports/slots.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { OAuthServerRef } from '../auth/oauth-routes.js';
import { createMonitor, type Monitor } from '../monitoring/monitor.js';

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
  /** The Chromium engine (it prints the ACR as PDF), when this server runs Chromium. */
  browser(): ChromiumEngine | null;
  /** Worker threads for the work whose cost grows with its input (fix drafts, digests, brand scores). */
  compute: Compute;
  /** The Prometheus metrics of this server (GET /metrics). */
  metrics: Metrics;
  /** pactum's own OAuth authorization server, made at its first use (oidc-provider is loaded then); null with OAUTH_ISSUER. */
  oauth: OAuthServerRef;
  /** Schedules' runs, their comparisons and webhook deliveries, ticking in every instance (server.ts starts it). */
  monitor: Monitor;
}

/** Builds every service of a server from its configuration; the server starts and stops them (server.ts). */
export async function createServices(config: Config, log: Logger): Promise<Services> {
  const db = openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const reads = createPointReads(db);
  const secrets = createSecretBox(config);
  const metrics = createMetrics({ recording: config.metrics.port !== null || config.metrics.token !== null });
  const backend = await openBackend(config, log, metrics);
  const leased = withUploadLeases(backend.store, db, config.lfs.uploadLeaseSeconds);
  // A kept tus hash is trusted only while its upload cannot have expired (and been sent again).
  const store = traced(contentStore(leased, { keptHashMaxAgeMs: (config.lfs.partialTtlSeconds * 1000) / 2 }), 'storage', ['put', 'writeTo', 'stat', 'delete', 'uploadOffset', 'appendUpload', 'discardUpload'], { 'pactum.storage': config.storage.kind });
  if (tracingOn()) traceQueries(db);
  const passwords = createPasswordThrottle(db, config.authThrottle);
  configurePasswordChecks(config.passwordChecks);
  const screenshots = screenshotStore(db, await screenshotBackend(config), { bytesPerOrg: config.screenshots.bytesPerOrg, retentionDays: config.screenshots.retentionDays, minFreeBytes: config.lfs.minFreeBytes });
  const users = createUserState(reads, watchPrincipals(db, { databaseUrl: config.databaseUrl, log }), () => requestScope.getStore());
  const services: Services = {
    config,
    db,
    log,
    tokens: createTokenService(config),
    secrets,
    connections: connectionStore(db, secrets, { allowPrivateNetworks: config.outboundAllowPrivateNetworks }, injectTraceContext),
    audit: createAuditLog(db, { onWritten: (rows) => metrics.mcp.auditRows.inc(rows) }),
    reads,
    users,
    passwords,
    objects: { store, backend, leased, tokens: createTransferTokens(config), limits: createLimits(db, config.lfs, store), partialQuota: createPartialQuota(db, config.lfs), basic: createBasicAuth(db, passwords, users) },
    scans: createScanRunner({ db, config, log, screenshots, metrics, onCompleted: async (scan) => {
      await afterScan(services, scan);
      services.monitor.wake();
    } }),
    screenshots,
    reportSlots: createReportSlots(config.reports),
    browser: () => services.scans.chromium(),
    compute: createCompute(config),
    metrics,
    oauth: oauthServerOnFirstUse(config, db, secrets, users),
    monitor: undefined as unknown as Monitor,
  };
  services.monitor = createMonitor(services);
  metrics.observe({
    scanLoad: { load: () => scanLoadByOrg(db), maxRunningPerOrg: config.scanMaxRunningPerOrg },
    dbPool: () => poolConnections(db),
    auditPending: () => services.audit.pending,
    partialBytes: () => partialBytesDeclared(db),
    passwordChecks: passwordCheckLoad,
    workerPools: () => livePools,
    ...(config.storage.kind === 'fs' ? { freeBytes: () => store.freeBytes() } : {}),
  });
  return services;
}

/** Made once, at the first request that needs it (after the migrations); a failed start is tried again. */
function oauthServerOnFirstUse(config: Config, db: Db, secrets: SecretBox, users: UserState): OAuthServerRef {
  let made: ReturnType<OAuthServerRef> | null = null;
  return () => {
    if (config.oauth.issuer) return Promise.resolve(null);
    made ??= import('../auth/oauth-server.js')
      .then((m) => m.createOAuthServer({ config, db, secrets, users }))
      .catch((err: unknown) => {
        made = null;
        throw err;
      });
    return made;
  };
}
