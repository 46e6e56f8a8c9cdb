/**
 * GET /metrics (ops.metrics): on the main port only when METRICS_TOKEN is set, and then only with
 * it as a bearer token (compared in constant time); on METRICS_PORT, a listener of its own that
 * serves it and GET /healthz, nothing else (the token is required for /metrics there too when it
 * is set). The main port's connection caps do not apply to this listener: under a flood that holds
 * HTTP_MAX_CONNECTIONS of the main port, a probe of this port's /healthz is still answered.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from '../http/node-http.js';
import type { AddressInfo } from 'node:net';
import { createHash, timingSafeEqual } from 'node:crypto';
import { HttpError } from '../http/errors.js';
import type { Handler } from '../http/router.js';
import { ConfigError, type Config } from '../ground/config.js';
import type { Metrics } from '../telemetry/metrics.js';
import { VERSION } from '../ground/version.js';

const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="pactum metrics"' };

/** Whether an Authorization header carries the token; digests first, so the comparison takes the same time whatever the length. */
export function carriesToken(header: string | undefined, token: string): boolean {
  const m = /^Bearer +(\S+) *$/i.exec(header ?? '');
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(m?.[1] ?? ''), digest(token)) && Boolean(m);
}

export function metricsHandler(config: Config, metrics: Metrics): Handler<'ops.metrics'> {
  const token = config.metrics.token;
  return async ({ ctx }) => {
    if (!token) throw new HttpError(404, 'Metrics are not served on this port');
    if (!carriesToken(ctx.get('authorization'), token)) throw new HttpError(401, 'The metrics need the bearer token METRICS_TOKEN', CHALLENGE);
    const text = await metrics.registry.metrics();
    ctx.status = 200;
    ctx.type = metrics.registry.contentType;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = text;
  };
}

/** The METRICS_PORT listener; resolves once it listens. */
export async function startMetricsListener(config: Config, metrics: Metrics): Promise<Server> {
  const token = config.metrics.token;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    const json = (status: number, error: string, message: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
      res.end(JSON.stringify({ error, statusCode: status, message }));
    };
    if (path !== '/metrics' && path !== '/healthz') return json(404, 'Not Found', `Nothing is served at ${path} on the metrics port`);
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(405, 'Method Not Allowed', `GET ${path}`, { Allow: 'GET, HEAD' });
    if (path === '/healthz') {
      // As the main port's liveness answer (ops/health.ts).
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return void res.end(req.method === 'HEAD' ? undefined : JSON.stringify({ status: 'ok', version: VERSION }));
    }
    if (token && !carriesToken(req.headers.authorization, token)) return json(401, 'Unauthorized', 'The metrics need the bearer token METRICS_TOKEN', CHALLENGE);
    metrics.registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': metrics.registry.contentType, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => json(500, 'Internal Server Error', 'The metrics could not be collected'),
    );
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new ConfigError(`METRICS_PORT ${config.metrics.port}: ${config.metrics.host}:${config.metrics.port} ${err.code === 'EADDRINUSE' ? 'is in use by another process' : `cannot be listened on (${err.code})`}`)),
    );
    server.listen(config.metrics.port!, config.metrics.host, () => resolve());
  });
  return server;
}

export const listenerUrl = (server: Server) => {
  const a = server.address() as AddressInfo;
  return `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
};
