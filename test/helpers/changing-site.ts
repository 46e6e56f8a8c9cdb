/**
 * A small website on loopback whose pages the test rewrites between two scans (a release that
 * fixes some findings, keeps others and brings new ones): `site.pages` maps a path to its HTML.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChangingSite {
  origin: string;
  url(path: string): string;
  /** Path → the page's HTML, as answered now; change it between scans. */
  pages: Map<string, string>;
  /** Paths requested so far, in order. */
  requested: string[];
  /** Each page answered after this long (0: at once); change it between scans. */
  delayMs: number;
  close(): Promise<void>;
}

export async function startChangingSite(pages: Record<string, string>): Promise<ChangingSite> {
  const site: ChangingSite = {
    origin: '', url: (p) => `${site.origin}${p}`, pages: new Map(Object.entries(pages)), requested: [], delayMs: 0,
    close: () => new Promise((r) => server.close(() => r())),
  };
  const answer = (path: string, res: ServerResponse) => {
    const html = site.pages.get(path);
    if (html === undefined) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><title>Not found</title>');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  };
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    site.requested.push(path);
    if (site.delayMs) setTimeout(() => answer(path, res), site.delayMs);
    else answer(path, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  site.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return site;
}

/** A page of the site: a title, a language, and `body` inside <main>. */
export const page = (title: string, body: string) =>
  `<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><title>${title}</title></head>\n<body>\n<main>\n<h1>${title}</h1>\n${body}\n</main>\n</body>\n</html>\n`;

/**
 * A page with `n` + 1 images without a text alternative (image-alt errors), the first the same
 * whatever `n`: scanned at n = 2, 1, 0, the site loses one error a run.
 */
export const imagesPage = (n: number) =>
  page('Changing', Array.from({ length: n + 1 }, (_, i) => `<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" id="img${i}" width="20" height="20">`).join('\n'));
