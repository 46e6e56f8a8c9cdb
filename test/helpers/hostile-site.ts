/**
 * The hostile pages of test/fixtures/hostile on 127.0.0.1 and on 127.0.0.2 at the same port (a
 * second site, for cross-site frames), and a 1×1 image each page loads.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const DIR = new URL('../fixtures/hostile/', import.meta.url);
/** A 1×1 transparent PNG. */
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');
const TYPES: Record<string, string> = { html: 'text/html; charset=utf-8', js: 'text/javascript' };

export interface HostileSite {
  /** http://127.0.0.1:port */
  origin: string;
  url(path: string): string;
  /** Request paths in arrival order, with the host they were asked of. */
  requests: string[];
  close(): Promise<void>;
}

export async function startHostileSite(): Promise<HostileSite> {
  const requests: string[] = [];
  const handler = (host: string) => (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push(`${host}${req.url ?? '/'}`);
    if (path === '/pixel.png') return void res.writeHead(200, { 'content-type': 'image/png' }).end(PIXEL);
    const m = /^\/([a-z-]+)\.(html|js)$/.exec(path);
    if (!m) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><title>404</title>');
    readFile(new URL(`${m[1]}.${m[2]}`, DIR)).then(
      (body) => res.writeHead(200, { 'content-type': TYPES[m[2]!]! }).end(body),
      () => res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><title>404</title>'),
    );
  };
  const listen = (server: Server, host: string, port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
  const first = createServer(handler('127.0.0.1'));
  await listen(first, '127.0.0.1', 0);
  const port = (first.address() as AddressInfo).port;
  const second = createServer(handler('127.0.0.2'));
  await listen(second, '127.0.0.2', port);
  const origin = `http://127.0.0.1:${port}`;
  const stop = (server: Server) =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { origin, url: (p) => `${origin}${p}`, requests, close: async () => void (await Promise.all([stop(first), stop(second)])) };
}
