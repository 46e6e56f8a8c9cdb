/**
 * Serves test/fixtures/site on 127.0.0.1 (port 0), plus routes that misbehave on purpose:
 * redirects, slow answers, huge bodies, wrong content types, compression and legacy charsets.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

const SITE_DIR = new URL('../../fixtures/site/', import.meta.url);

export interface FixtureServer {
  origin: string;
  url(path: string): string;
  /** Request paths in arrival order (query strings included). */
  requests: string[];
  close(): Promise<void>;
}

type Route = (req: IncomingMessage, res: ServerResponse, query: URLSearchParams) => void | Promise<void>;

export async function startFixtureServer(): Promise<FixtureServer> {
  const requests: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => { timers.delete(timer); fn(); }, ms);
    timers.add(timer);
  };
  let origin = '';

  const routes: Record<string, Route> = {
    '/redirect': (_req, res, query) => { res.writeHead(302, { location: query.get('to') ?? '/' }).end(); },
    '/loop': (_req, res) => { res.writeHead(302, { location: '/loop' }).end(); },
    '/data.json': (_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'); },
    '/brochure.pdf': (_req, res) => { res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-1.4'); },
    '/slow-headers': (_req, res) => later(5_000, () => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>late</p>')),
    '/slow-body': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<!doctype html><p>first bytes');
      later(5_000, () => res.end('</p>'));
    },
    '/huge': (_req, res, query) => streamBytes(res, Number(query.get('bytes')), false),
    '/huge-declared': (_req, res, query) => streamBytes(res, Number(query.get('bytes')), true),
    '/gzip': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip' });
      res.end(gzipSync('<!doctype html><html lang="en"><title>Zipped</title><p>compressed</p></html>'));
    },
    '/latin1': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=windows-1252' });
      res.end(Buffer.from('<!doctype html><title>Caf\xe9</title>', 'latin1'));
    },
    '/meta-charset': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(Buffer.from('<!doctype html><meta charset="iso-8859-1"><title>Na\xefve</title>', 'latin1'));
    },
    '/sitemap.txt': (_req, res) => { res.writeHead(200, { 'content-type': 'text/plain' }).end(`${origin}/clean.html\n`); },
  };

  const server = createServer((req, res) => {
    requests.push(req.url ?? '/');
    const url = new URL(req.url ?? '/', 'http://fixture');
    const route = routes[url.pathname];
    const done = route ? route(req, res, url.searchParams) : serveFile(res, url.pathname, origin);
    Promise.resolve(done).catch((err: unknown) => { res.writeHead(500).end(String(err)); });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    url: (path) => `${origin}${path}`,
    requests,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function serveFile(res: ServerResponse, pathname: string, origin: string): Promise<void> {
  const name = pathname === '/' ? 'index.html' : pathname.slice(1);
  if (!/^[\w-]+\.(html|xml)$/.test(name)) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
  let body: string;
  try {
    body = await readFile(new URL(name, SITE_DIR), 'utf8');
  } catch {
    return void res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
  }
  const type = name.endsWith('.xml') ? 'application/xml' : 'text/html; charset=utf-8';
  res.writeHead(200, { 'content-type': type }).end(body.replaceAll('{{origin}}', origin));
}

/** `bytes` of HTML, in 64 KiB chunks; with or without a Content-Length that announces it. */
function streamBytes(res: ServerResponse, bytes: number, declared: boolean): void {
  res.writeHead(200, { 'content-type': 'text/html', ...(declared ? { 'content-length': String(bytes) } : {}) });
  const chunk = Buffer.alloc(64 * 1024, 'a');
  let left = bytes;
  const pump = () => {
    while (left > 0) {
      const piece = chunk.subarray(0, Math.min(chunk.length, left));
      left -= piece.length;
      if (!res.write(piece)) return void res.once('drain', pump);
    }
    res.end();
  };
  res.on('close', () => { left = 0; });
  pump();
}

/** A realistic page of about `bytes` bytes: nav, sections with text, links, images (every third without alt), tables. */
export function bigPage(bytes: number): string {
  const head = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Big page</title></head><body><header><nav aria-label="Main"><ul>'
    + Array.from({ length: 30 }, (_, i) => `<li><a href="/p${i}">Page ${i}</a></li>`).join('') + '</ul></nav></header><main><h1>Big page</h1>';
  const sections: string[] = [];
  let size = head.length;
  for (let i = 0; size < bytes; i++) {
    const section = `<section><h2>Section ${i}</h2><p>Lorem ipsum dolor sit amet, <a href="/s${i}">consectetur</a> adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>`
      + `<img src="/i${i}.png"${i % 3 ? ' alt="Illustration"' : ''}><ul><li>One</li><li>Two</li></ul><table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table></section>`;
    sections.push(section);
    size += section.length;
  }
  return `${head}${sections.join('')}</main></body></html>`;
}
