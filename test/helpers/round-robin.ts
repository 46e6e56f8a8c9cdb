/**
 * A small load balancer for the two-instance topology: consecutive requests go to alternating
 * instances (by request, not by connection, so one client's keep-alive connection is spread
 * too). Bodies stream both ways; a client that goes away aborts the upstream request.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RoundRobin {
  url: string;
  /** Where requests go, in turn; set once the instances are up. */
  targets: string[];
  /** How many requests each target got. */
  counts: number[];
  close(): Promise<void>;
}

export async function startRoundRobin(): Promise<RoundRobin> {
  let next = 0;
  const rr: RoundRobin = { url: '', targets: [], counts: [], close: async () => {} };
  const server: Server = createServer((req, res) => {
    if (!rr.targets.length) {
      res.writeHead(503).end();
      return;
    }
    const i = next++ % rr.targets.length;
    rr.counts[i] = (rr.counts[i] ?? 0) + 1;
    const upstream = request(`${rr.targets[i]}${req.url}`, { method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode!, r.headers);
      r.pipe(res);
      r.on('error', () => res.destroy());
    });
    // Headers go on at once, as a real balancer sends them: a server may answer before any body.
    upstream.flushHeaders();
    upstream.on('error', () => res.destroy());
    req.on('error', () => upstream.destroy());
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  rr.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  rr.close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return rr;
}
