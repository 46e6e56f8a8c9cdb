/**
 * The fixture website (test/fixtures/site) on loopback, each page answered after `delayMs`, so a
 * scan lasts long enough to watch its progress.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const SITE_DIR = new URL('../fixtures/site/', import.meta.url);

export interface FixtureSite {
  origin: string;
  url(path: string): string;
  delayMs: number;
  /** Requests received so far. */
  requests: number;
  close(): Promise<void>;
}

export async function startFixtureSite(delayMs = 0): Promise<FixtureSite> {
  let origin = '';
  const site: FixtureSite = {
    origin: '',
    url: (p) => `${origin}${p}`,
    delayMs,
    requests: 0,
    close: () => new Promise((r) => server.close(() => r())),
  };
  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    site.requests++;
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const file = path === '/' ? 'index.html' : path.slice(1);
    await new Promise((r) => setTimeout(r, site.delayMs));
    if (!/^[a-z-]+\.(html|xml)$/.test(file)) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><title>404</title>');
    try {
      const body = (await readFile(new URL(file, SITE_DIR), 'utf8')).replaceAll('{{origin}}', origin);
      res.writeHead(200, { 'content-type': file.endsWith('.xml') ? 'application/xml' : 'text/html; charset=utf-8' }).end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><title>404</title>');
    }
  };
  const server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  site.origin = origin;
  return site;
}
