/**
 * The server as a process: it checks the settings, listens, builds the services and the app
 * (app/services.ts, app/koa-app.ts), starts the parts that run on their own (storage
 * housekeeping, the scan queue, the metrics listener), and stops everything gracefully.
 * `pactum serve` and every test that needs a server start it here.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from './http/node-http.js';
import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from './ground/config.js';
import { migrate, oneInstanceAtATime } from './db/knex.js';
import { createLogger, type Logger } from './telemetry/log.js';
import { createTokenService } from './auth/jwt.js';
import type { Middleware } from 'koa';
import { StoreUnavailable } from './objects/store/backend.js';
import { createTransferTokens } from './objects/transfer-tokens.js';
import { startScreenshotExpiry } from './reports/screenshots.js';
import { createSecretBox } from './ground/secret-box.js';
import { trustedProxies } from './ground/address-list.js';
import { capConnections, peerIn } from './http/connection-caps.js';
import { DESCRIPTORS_KEPT, descriptorLimit } from './ground/descriptor-limit.js';
import { drainUnreadBodies, guardSlowClients, hurryAnonymousHeaders, serverTimeouts } from './http/slow-clients.js';
import { createServices, type Services } from './app/services.js';
import { createApp } from './app/koa-app.js';

import { databaseStartError, listenError, storageStartError } from './app/startup-checks.js';
import { ensureDataDir, usesDataDir } from './ground/data-dir.js';
import { recordServerUrl } from './db/server-settings.js';
import { startTracing, stopTracing } from './telemetry/tracing.js';
import { VERSION } from './ground/version.js';
import { listenerUrl, startMetricsListener } from './ops/metrics-endpoint.js';
import { effectiveSettings } from './app/settings-line.js';


export interface RunningServer {
  url: string;
  services: Services;
  server: Server;
  /** The METRICS_PORT listener's URL, or null without one. */
  metricsUrl: string | null;
  close: () => Promise<void>;
}

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  log?: Logger;
  /** Middleware placed before the router (tests use it to check every response against the specs). */
  before?: Middleware[];
  /** More fields for the start line (the CLI: which settings file, which database). */
  announce?: (config: Config) => Record<string, unknown>;
}

export async function startServer(opts: StartOptions = {}): Promise<RunningServer> {
  const env = opts.env ?? process.env;
  let config = loadConfig(env);
  // What can be checked without the port is checked before listening: a bad setting then never
  // holds the port, and fails with one line naming it.
  const loosened = usesDataDir(config) ? ensureDataDir(config.dataDir) : null;
  createSecretBox(config);
  createTransferTokens(config);
  createTokenService(config);
  // No limit on a whole request (a multi-GiB upload takes minutes); headers, silence and a body's
  // average rate are bounded instead (http/slow-clients.ts).
  const server = createServer(serverTimeouts(config.http));
  let metrics: Services['metrics'] | null = null;
  guardSlowClients(server, config.http, () => metrics?.http.cut.inc({ reason: 'body_rate' }));
  drainUnreadBodies(server);
  // Caps on open connections, at accept (http/connection-caps.ts); trusted proxies carry many
  // clients, so they are not capped as one, nor hurried through headers they have read whole.
  const proxies = trustedProxies(config.trustedProxies);
  capConnections(server, { maxConnections: config.http.maxConnections, maxPerAddress: config.http.maxConnectionsPerAddress, exempt: proxies }, (reason) => metrics?.http.connectionsRefused.inc({ reason }));
  hurryAnonymousHeaders(server, config.http, (socket) => peerIn(proxies, socket), () => metrics?.http.cut.inc({ reason: 'anonymous_headers' }));
  // Requests that arrive while the database is migrated and the store started wait for the app
  // (a client that polls /healthz during start-up gets its answer when it is ready, not never).
  const early: [IncomingMessage, ServerResponse][] = [];
  const hold = (req: IncomingMessage, res: ServerResponse) => early.push([req, res]);
  server.on('request', hold);
  const abandon = () => {
    server.close();
    server.closeAllConnections(); // a held request's connection would keep the process alive
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(listenError(err, config)));
    server.listen(config.port, config.host, () => resolve());
  });
  // Port 0 means any free port: the public URL (and so hrefs and audience) follows the real one.
  if (config.port === 0) config = loadConfig({ ...env, PORT: String((server.address() as AddressInfo).port) });
  const log = opts.log ?? createLogger(config.logLevel, undefined, config.logFormat);
  if (config.otlpEndpoint) await startTracing(config.otlpEndpoint, VERSION);
  if (loosened !== null) log.warn({ dataDir: config.dataDir, mode: loosened.toString(8).padStart(4, '0') }, 'DATA_DIR was open to other users; it is now 0700');
  let services: Services;
  try {
    services = await createServices(config, log);
    metrics = services.metrics;
  } catch (err) {
    // A refused key file, say: stop listening, so the process can exit with the message.
    abandon();
    if (config.otlpEndpoint) await stopTracing();
    throw err;
  }
  let metricsServer: Server | null = null;
  let stopScreenshotExpiry = () => {};
  try {
    await migrate(services.db).catch((err: unknown) => {
      throw databaseStartError(err, config);
    });
    services.users.start();
    // An S3 store that refuses our settings is reported now rather than at the first upload.
    let storageAnswered = true;
    if (config.storage.kind === 's3') {
      await services.objects.store.backend.ping().catch((err: unknown) => {
        // A store that does not answer may be back in a moment: serve, and let /readyz say so.
        // An answer that refuses our settings (no such bucket, unknown key) will not change.
        if (!(err instanceof StoreUnavailable)) throw storageStartError(err, config);
        storageAnswered = false;
        log.warn({ err: err.message }, 'the object storage does not answer at start-up; /readyz reports it');
      });
    }
    await services.objects.backend.start({ exclusive: oneInstanceAtATime(services.db, 'storage-sweep'), partials: services.objects.leased.partials, sweepNow: storageAnswered });
    stopScreenshotExpiry = await startScreenshotExpiry(services.screenshots, { intervalMs: config.lfs.sweepIntervalSeconds * 1000, exclusive: oneInstanceAtATime(services.db, 'screenshot-expiry'), log });
    await services.scans.recover();
    services.monitor.start();
    await recordServerUrl(services.db, config.publicUrl);
    if (config.metrics.port !== null) metricsServer = await startMetricsListener(config, services.metrics);
  } catch (err) {
    abandon();
    stopScreenshotExpiry();
    metricsServer?.close();
    await services.monitor.stop().catch(() => {});
    await services.scans.stop().catch(() => {});
    await services.compute.close();
    services.objects.backend.close();
    await services.users.close();
    services.reads.close();
    await services.db.destroy();
    if (config.otlpEndpoint) await stopTracing();
    throw err;
  }

  const app = createApp(services, { before: opts.before ?? [] });
  const handle = app.callback();
  server.off('request', hold);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => void handle(req, res));
  for (const [req, res] of early.splice(0)) void handle(req, res);
  // Only once the start has succeeded: a start that fails says one thing, its reason.
  services.scans.startupWarnings();
  const metricsUrl = metricsServer ? listenerUrl(metricsServer) : null;
  const descriptors = descriptorLimit();
  if (descriptors && config.http.maxConnections > descriptors.soft - DESCRIPTORS_KEPT) {
    log.warn({ maxConnections: config.http.maxConnections, descriptors }, `HTTP_MAX_CONNECTIONS (${config.http.maxConnections}) leaves fewer than ${DESCRIPTORS_KEPT} of the ${descriptors.soft} descriptors this process may open: a flood of connections can leave none for files and the database; raise the limit (ulimit -n) or lower the cap`);
  }
  log.info({ url: config.publicUrl, dataDir: config.dataDir, ...opts.announce?.(config), metricsUrl, descriptors, settings: effectiveSettings(config) }, 'pactum is serving');

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      const began = performance.now();
      const inFlight = await new Promise<number>((resolve) => server.getConnections((_err, n) => resolve(n ?? 0)));
      const waited: Record<string, number> = {};
      const timed = async (what: string, work: () => unknown) => {
        const t = performance.now();
        await work();
        waited[what] = Math.round(performance.now() - t);
      };
      // Stop accepting, let in-flight requests finish, then cut what is left after the timeout.
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      // A keep-alive connection whose request finishes during shutdown becomes idle: close it then, not at the timeout.
      server.closeIdleConnections();
      const idle = setInterval(() => server.closeIdleConnections(), 50);
      let cut = false;
      const timer = setTimeout(() => {
        cut = true;
        server.closeAllConnections();
      }, config.shutdownTimeoutMs);
      await timed('requests', () => done);
      clearInterval(idle);
      clearTimeout(timer);
      stopScreenshotExpiry();
      metricsServer?.close();
      metricsServer?.closeAllConnections();
      await timed('monitoring', () => services.monitor.stop());
      await timed('scans', () => services.scans.stop());
      await timed('compute', () => services.compute.close());
      const auditRows = services.audit.pending;
      await timed('audit', () => services.audit.flush());
      services.objects.backend.close();
      await services.users.close();
      services.reads.close();
      await timed('database', () => services.db.destroy());
      if (config.otlpEndpoint) await timed('traces', () => stopTracing());
      log.info({ ms: Math.round(performance.now() - began), connections: inFlight, requestsCut: cut, auditRows, waitedMs: waited }, 'shut down');
    })());

  return { url: config.publicUrl, services, server, metricsUrl, close };
}
