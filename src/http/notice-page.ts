/**
 * A small HTML page of its own for what a person's browser is told instead of the page it asked
 * for: not signed in, not allowed, no such report, and any error of an operation that answers
 * with pages. No script, the site's stylesheet; the security headers are added like on every page.
 */
import type { Context } from 'koa';
import type { OperationSpec } from '../../generated/operations.js';
import { negotiate } from './media.js';

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** From the request's path back to the root, so that a proxy's prefix is kept ("../" from /reports/x). */
const toRoot = (path: string) => '../'.repeat(Math.max(0, (path.match(/\//g)?.length ?? 1) - 1));

export function writeNoticePage(ctx: Context, status: number, title: string, bodyHtml: string) {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${toRoot(ctx.path)}docs/assets/home.css">
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${bodyHtml}
</main>
</body>
</html>
`;
}

/**
 * Whether an error of `op` is answered as a page: the spec declares that status as HTML, or does
 * not declare it for an operation that answers with pages and a client that takes them.
 */
export function errorIsPage(op: OperationSpec, status: number, accept: string): boolean {
  const declared = op.responses[String(status)];
  if (declared) return declared.mediaTypes.length === 1 ? declared.mediaTypes[0] === 'text/html' : negotiate(accept, declared.mediaTypes) === 'text/html';
  const pages = Object.entries(op.responses).some(([s, r]) => s.startsWith('2') && r.mediaTypes.includes('text/html'));
  return pages && Boolean(negotiate(accept, ['text/html']));
}
