/**
 * The headers a browser needs to treat this server's answers safely, set in one place so that a
 * new page or endpoint has them without doing anything.
 *
 * Every answer: `X-Content-Type-Options: nosniff`, so a JSON error or a downloaded object is
 * never read as HTML or script whatever its bytes look like; and, when PUBLIC_URL is https,
 * `Strict-Transport-Security`, so a browser that reached the server once never again sends its
 * session cookie or a token over plain http (a network attacker's downgrade). Subdomains are not
 * included: they may be other services of the same domain.
 *
 * Every HTML page: a Content-Security-Policy that allows scripts, styles and fetches from this
 * server only: no inline script, no eval, no inline style but the exact ones Swagger UI makes (by
 * hash), no fonts, images also as data: URLs (Swagger UI's stylesheet draws its icons so), no
 * <base>, no form posts, and no framing (`frame-ancestors 'none'`, and `X-Frame-Options: DENY`
 * for browsers older than CSP 2); and no Referer sent to other sites, since a page URL may name
 * an org or a repository.
 */
import type { Context, Middleware } from 'koa';

/**
 * The policy of every HTML page: `publicUrl`'s origin may be fetched too (Swagger UI's "Try it
 * out" behind a proxy), and `styleHashes` are the exact inline styles a page's own library makes.
 */
export function contentSecurityPolicy(publicUrl: string, styleHashes: readonly string[] = []): string {
  const publicOrigin = new URL(publicUrl).origin;
  return [
    "default-src 'none'",
    "script-src 'self'",
    ["style-src 'self'", ...styleHashes].join(' '),
    "img-src 'self' data:",
    `connect-src 'self' ${publicOrigin}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The headers of a page whose own inline script and style are allowed by hash (the report page):
 * otherwise the same policy as every page. The middleware keeps a policy a handler set.
 */
export function pageHeaders(publicUrl: string, hashes: { scripts: readonly string[]; styles: readonly string[] }): Record<string, string> {
  const policy = contentSecurityPolicy(publicUrl, hashes.styles).replace("script-src 'self'", ["script-src 'self'", ...hashes.scripts].join(' '));
  return { 'Content-Security-Policy': policy, 'X-Frame-Options': 'DENY', 'Referrer-Policy': 'no-referrer' };
}

export function htmlPageHeaders(publicUrl: string, styleHashes: readonly string[] = []): Record<string, string> {
  return {
    'Content-Security-Policy': contentSecurityPolicy(publicUrl, styleHashes),
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
  };
}

/** Two years, what browsers' HSTS preload lists ask for. */
export const HSTS = 'max-age=63072000';

/** The headers of every answer from a server at `publicUrl`. */
export function everyAnswerHeaders(publicUrl: string): Readonly<Record<string, string>> {
  const https = new URL(publicUrl).protocol === 'https:';
  return Object.freeze({ 'X-Content-Type-Options': 'nosniff', ...(https ? { 'Strict-Transport-Security': HSTS } : {}) });
}

function finish(ctx: Context, always: Readonly<Record<string, string>>, html: () => Record<string, string>) {
  if (ctx.headerSent) return;
  // Set again: the error boundary clears the headers of a failed answer.
  ctx.set(always);
  if (ctx.response.type !== 'text/html') return;
  // A page with its own hashed inline script (pageHeaders) keeps its policy; the others get the default.
  if (ctx.response.get('Content-Security-Policy')) return;
  ctx.set(html());
}

/** `styleHashes`: asked for once, at the first HTML page (it may read files). */
export function securityHeaders(publicUrl: string, styleHashes: () => readonly string[] = () => []): Middleware {
  let headers: Record<string, string> | undefined;
  const html = () => (headers ??= htmlPageHeaders(publicUrl, styleHashes()));
  const always = everyAnswerHeaders(publicUrl);
  return async function secureHeaders(ctx, next) {
    // Before the handler: streamed answers (MCP over SSE) write their headers themselves.
    ctx.set(always);
    try {
      await next();
    } finally {
      finish(ctx, always, html);
    }
  };
}
