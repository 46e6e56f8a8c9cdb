/**
 * Slow clients. The whole request is not time-bounded (a multi-GiB upload over a slow link takes
 * as long as it takes); instead:
 *   - headers must arrive within HTTP_HEADERS_TIMEOUT_MS (slowloris);
 *   - a connection silent for HTTP_IDLE_TIMEOUT_MS is closed (a stalled body);
 *   - a body must keep an average of HTTP_MIN_BODY_RATE bytes/s over each window of
 *     HTTP_BODY_RATE_WINDOW_MS after the first: a trickle of a byte every few seconds resets an
 *     idle timer forever, but not this. The first window is grace for a slow start.
 * The rate is read from the socket's byte count, so watching never touches the body stream.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Middleware } from 'koa';
import { stateOf } from './state.js';
import type { Config } from '../ground/config.js';
import { transientBytes } from './transient-buffers.js';

const hasBody = (req: IncomingMessage) => (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0') || req.headers['transfer-encoding'] !== undefined;

export function serverTimeouts(http: Pick<Config['http'], 'headersTimeoutMs' | 'idleTimeoutMs'>) {
  return {
    headersTimeout: http.headersTimeoutMs,
    // Node checks the headers deadline on this interval; a coarse one would let slowloris linger.
    connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(http.headersTimeoutMs / 4))),
    requestTimeout: 0,
    // Never longer than the idle timeout, so the Keep-Alive hint clients read is one the server keeps.
    keepAliveTimeout: Math.min(65_000, http.idleTimeoutMs),
  };
}

/** `onCut`: told of each request whose connection was closed for its rate. */
export function guardSlowClients(server: Server, http: Pick<Config['http'], 'headersTimeoutMs' | 'idleTimeoutMs' | 'minBodyRate' | 'bodyRateWindowMs'>, onCut?: () => void) {
  server.setTimeout(http.idleTimeoutMs);
  if (!http.minBodyRate) return;
  const floor = (http.minBodyRate * http.bodyRateWindowMs) / 1000;
  server.on('request', (req: IncomingMessage) => {
    if (!hasBody(req)) return;
    const socket = req.socket;
    let seen = socket.bytesRead;
    let windows = 0;
    const timer = setInterval(() => {
      if (req.complete || socket.destroyed) return stop();
      const got = socket.bytesRead - seen;
      seen = socket.bytesRead;
      if (++windows > 1 && got < floor) {
        stop();
        onCut?.();
        socket.destroy();
      }
    }, http.bodyRateWindowMs);
    timer.unref();
    // Stopped when the request closes or, for a request refused before its body (which never
    // closes), when its connection does: an interval left to notice at its next tick kept each
    // such request, its socket and their buffers alive for a whole window (30 s by default), and
    // a flood of refused bodies grew the heap by every one of them.
    const stop = () => {
      clearInterval(timer);
      req.off('close', stop);
      socket.off('close', stop);
    };
    req.once('close', stop);
    socket.once('close', stop);
  });
}

/**
 * A request answered before its body was read to the end (a 409 for an upload another request
 * holds, a 413) has the rest of its body discarded, as Node does for a handler that never read
 * it. Without this, a body a handler had started to pipe somewhere stayed paused: the client's
 * next request on that keep-alive connection was never parsed, and it waited until the rate
 * guard cut the connection (transfer-aborts.test.ts). This is the case of a rest that had already
 * arrived; a body still arriving when the answer goes out gets `Connection: close` from Node and
 * its connection ends (measured: a refused 64 MiB PATCH was cut after ~4 MiB), so a refused
 * multi-GiB upload is not read to its end. The slow-client limits above still apply.
 */
export function drainUnreadBodies(server: Server) {
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    res.once('finish', () => {
      if (req.complete || req.destroyed) return;
      // A body nobody asked for (a request refused for its credentials before it was read): its
      // connection ends as soon as the answer is out, and not a byte more of it is read.
      if (unwanted.has(req)) {
        // What arrived with the headers (up to a socket read, 64 KiB) is garbage from here on: a
        // flood of refused bodies must not pile up tens of MB of it before V8 collects.
        transientBytes(req.readableLength);
        return void req.socket.destroy();
      }
      req.unpipe();
      req.resume();
    });
  });
}

const unwanted = new WeakSet<IncomingMessage>();

/**
 * Marks a request whose body will not be read: its answer says `Connection: close`, and its
 * connection ends once the answer is sent. For requests refused before their body (no or bad
 * credentials, an anonymous body over its cap), so that whoever sends megabytes without
 * credentials costs the server a header parse, not the reading of those megabytes.
 */
export function refuseUnreadBody(req: IncomingMessage, res: ServerResponse) {
  if (req.complete || !hasBody(req)) return;
  unwanted.add(req);
  res.shouldKeepAlive = false;
}

/** Connections that have carried a request with accepted credentials. */
const known = new WeakSet<Socket>();

/** Notes that `socket` carried a request whose credentials were accepted: its next headers get the longer timeout. */
export function knownConnection(socket: Socket) {
  known.add(socket);
}

/** Koa middleware: a request whose credentials were accepted marks its connection known. */
export const noteKnownConnections: Middleware = async (ctx, next) => {
  try {
    await next();
  } finally {
    // A request whose connection is gone has no socket left to mark.
    const socket = ctx.req.socket as Socket | null;
    if (stateOf(ctx).identity && socket) knownConnection(socket);
  }
};

interface Watched {
  /** Requests of the connection being served (pipelined ones count too). */
  inFlight: number;
  /** When the headers being waited for started to arrive (performance.now()); null: nothing has yet. */
  since: number | null;
  /** The connection's bytes read when its last answer ended, to see the next request begin. */
  bytes: number;
}

/**
 * A shorter headers timeout, HTTP_ANON_HEADERS_TIMEOUT_MS, for connections no credentials have
 * been accepted on. At accept nobody is known, so every connection's first request has it,
 * counted from the accept; a connection whose request carried accepted credentials
 * (`knownConnection`) keeps HTTP_HEADERS_TIMEOUT_MS for its later requests, and any other has the
 * short one again for its next request, counted from that request's first byte (seen in the
 * socket's byte count, so watching never reads the stream). Idle keep-alive is not a request in
 * progress: HTTP_IDLE_TIMEOUT_MS and the keep-alive timeout govern it.
 *
 * Node applies one headers timeout to a whole server, so this one is kept here: one timer for
 * every watched connection, ticking at a quarter of the limit (a connection is cut between the
 * limit and a quarter past it). `exempt`: peers never watched (trusted proxies, which send
 * headers they have already read whole). `onCut`: told of each connection cut.
 */
export function hurryAnonymousHeaders(server: Server, http: Pick<Config['http'], 'headersTimeoutMs' | 'anonHeadersTimeoutMs'>, exempt: (socket: Socket) => boolean, onCut?: () => void) {
  const limit = http.anonHeadersTimeoutMs;
  if (limit >= http.headersTimeoutMs) return;
  const watched = new Map<Socket, Watched>();
  const tick = setInterval(() => {
    const now = performance.now();
    for (const [socket, w] of watched) {
      if (w.inFlight > 0) continue;
      if (w.since === null) {
        if (socket.bytesRead !== w.bytes) w.since = now;
      } else if (now - w.since >= limit) {
        watched.delete(socket);
        onCut?.();
        socket.destroy();
      }
    }
  }, Math.max(25, Math.floor(limit / 4)));
  tick.unref();
  server.once('close', () => clearInterval(tick));
  server.on('connection', (socket: Socket) => {
    if (socket.destroyed || exempt(socket)) return;
    watched.set(socket, { inFlight: 0, since: performance.now(), bytes: 0 });
    socket.once('close', () => watched.delete(socket));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // Taken now: Node lets go of a request's socket once its response is done.
    const socket = req.socket;
    const w = watched.get(socket);
    if (!w) return;
    w.inFlight++;
    res.once('close', () => {
      if (--w.inFlight > 0) return;
      if (known.has(socket)) return void watched.delete(socket);
      w.since = null;
      w.bytes = socket.bytesRead;
    });
  });
}
