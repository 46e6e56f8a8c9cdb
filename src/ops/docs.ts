/**
 * /docs: Swagger UI over the three specs, its files served from the swagger-ui-dist package (no
 * CDN: the page works on a machine without internet access). `/`: a landing page naming the APIs
 * at this server's PUBLIC_URL, and the object APIs' error statuses (their documentation_url).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Handler } from '../http/router.js';
import { loadBundledSpec, type JsonObject } from '../spec/documents.js';
import type { Identity } from '../domain/access/identity.js';
import type { ScanRow } from '../db/scans.js';
import type { OpsDeps } from './services.js';
import { latestScansHtml } from '../reports/scan-list.js';

const assetDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const TYPES: Record<string, string> = { css: 'text/css; charset=utf-8', js: 'text/javascript; charset=utf-8' };
const SPECS = { 'dashboard-mcp': 'dashboard', 'objects-legacy': 'legacy', 'objects-batch': 'batch' } as const;

/**
 * No inline script or style: every HTML page is served under a Content-Security-Policy that
 * allows only this server's own files (http/security-headers.ts), so the Swagger UI set-up is a
 * file of its own. validatorUrl null: the specs are never sent to validator.swagger.io.
 */
const DOCS_SCRIPT = `window.ui = SwaggerUIBundle({
  urls: [
    { url: 'docs/openapi/dashboard-mcp', name: 'Dashboard MCP endpoint' },
    { url: 'docs/openapi/objects-batch', name: 'Batch object API v1.3' },
    { url: 'docs/openapi/objects-legacy', name: 'Legacy object API v0.5' }
  ],
  dom_id: '#swagger-ui',
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
  validatorUrl: null
});
`;

const HOME_STYLE = 'body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;line-height:1.5}code{background:#f3f3f3;padding:0 .2em}td,th{vertical-align:top;padding:.2em .6em;text-align:left}label{display:inline-block;min-width:6rem}input{font:inherit;margin:.2rem 0}button{font:inherit}:focus-visible{outline:3px solid #0b57c2;outline-offset:2px}\n';

let styleHashes: string[] | undefined;

/**
 * The inline <style> elements Swagger UI creates itself (its logo's colours), as CSP hash
 * sources: read from the installed swagger-ui-dist once, when the first page is served, so an
 * upgrade brings its own. No other inline style is allowed.
 */
export function swaggerUiStyleHashes(): string[] {
  if (!styleHashes) {
    const preset = readFileSync(join(assetDir, 'swagger-ui-standalone-preset.js'), 'utf8');
    const styles = [...preset.matchAll(/createElement\("style",null,("(?:[^"\\]|\\.)*")\)/g)].map((m) => JSON.parse(m[1]!) as string);
    styleHashes = styles.map((css) => `'sha256-${createHash('sha256').update(css).digest('base64')}'`);
  }
  return styleHashes;
}

/**
 * The landing page's sign-in: the form's fields sent as JSON to POST api/v1/auth/login (the only
 * body it takes), then the page reloads with the session. No inline script: a file of its own.
 */
const SIGNIN_SCRIPT = `(() => {
  const form = document.getElementById('signin');
  if (!form) return;
  const out = document.getElementById('signin-status');
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    out.textContent = 'Signing in…';
    const body = JSON.stringify({ username: form.elements.username.value, password: form.elements.password.value });
    try {
      const r = await fetch('api/v1/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body, credentials: 'same-origin' });
      if (r.ok) return location.reload();
      const answer = await r.json().catch(() => ({}));
      out.textContent = answer.message || 'Signing in failed (' + r.status + ').';
    } catch {
      out.textContent = 'The server could not be reached.';
    }
  });
})();
`;

/** The documentation page's own files, beside swagger-ui-dist's. */
const OWN_ASSETS: Record<string, string> = { 'docs.js': DOCS_SCRIPT, 'home.css': HOME_STYLE, 'signin.js': SIGNIN_SCRIPT };

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>pactum API documentation</title>
<link rel="stylesheet" href="docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/assets/swagger-ui-bundle.js"></script>
<script src="docs/assets/swagger-ui-standalone-preset.js"></script>
<script src="docs/assets/docs.js"></script>
</body>
</html>
`;

/** Relative links (docs/assets/…) resolve against /docs whatever prefix a proxy mounts it under. */
export const docsPage: Handler<'ops.docs'> = ({ ctx }) => {
  ctx.status = 200;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-cache');
  ctx.body = PAGE;
};

const assetCache = new Map<string, Buffer>();

export const docsAsset: Handler<'ops.docsAsset'> = async ({ ctx, params }) => {
  const file = params.file; // validated against the spec's enum: no path tricks reach here
  let bytes = assetCache.get(file);
  if (!bytes) assetCache.set(file, (bytes = Object.hasOwn(OWN_ASSETS, file) ? Buffer.from(OWN_ASSETS[file]!) : await readFile(join(assetDir, file))));
  ctx.status = 200;
  ctx.type = TYPES[file.split('.').pop()!]!;
  ctx.set('Cache-Control', 'public, max-age=86400');
  ctx.body = bytes;
};

/**
 * The spec as Swagger UI shows it: `servers` at this server's PUBLIC_URL (the files in specs/ name
 * a local `make run`), and without `jsonSchemaDialect`, which Swagger UI cannot read and flags in
 * red; 2020-12 is what OpenAPI 3.1 means without it, so the contract is unchanged.
 */
export function specForDocs(spec: JsonObject, publicUrl: string): JsonObject {
  const { jsonSchemaDialect: _dialect, servers, ...rest } = spec;
  const local = /^https?:\/\/127\.0\.0\.1:8080/;
  const served = (servers as { url: string }[] | undefined)?.map((s) => ({ ...s, url: s.url.replace(local, publicUrl), description: 'This server.' }));
  return { ...rest, ...(served ? { servers: served } : {}) };
}

/** Each spec is read, adapted and serialised once, on first request. */
export function docsSpec(publicUrl: string): Handler<'ops.docsSpec'> {
  const cache = new Map<string, JsonObject>();
  return ({ params }) => {
    const name = SPECS[params.api];
    let spec = cache.get(name);
    if (!spec) cache.set(name, (spec = specForDocs(loadBundledSpec(name), publicUrl)));
    return { status: 200, body: spec };
  };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The object APIs' error statuses, as the landing page explains them (documentation_url points here). */
export const OBJECT_API_ERRORS: readonly [number, string][] = [
  [400, 'The request could not be read: malformed JSON, a bad header or parameter. The message names what.'],
  [401, 'No credentials, or wrong ones. Git LFS asks for a user name and a password: use a personal token (pactum user token) as the password.'],
  [403, 'The credentials are valid but grant no access to this repository or action (pactum repo grant).'],
  [404, 'No such repository or object, or it is not visible to you.'],
  [406, 'The Accept header excludes application/vnd.git-lfs+json.'],
  [409, 'A conflict: a lock held by someone else, a hash algorithm other than sha256, a tus offset that is not the stored one, or an upload of an object that is stored already (its upload action is spent: run the batch again).'],
  [410, 'The object was deleted (taken down) by an operator; the message gives the reason. Uploads of it are refused too until an operator lifts the takedown (pactum repo restore-object).'],
  [413, 'Too much in one request: more objects than LFS_MAX_BATCH_OBJECTS, a body over LFS_MAX_BATCH_BYTES, or a size the server refuses.'],
  [415, 'The Content-Type is not application/vnd.git-lfs+json (or application/json).'],
  [422, 'Well-formed but invalid: an unknown operation, a malformed oid, a negative size, or an upload whose bytes do not hash to its oid or whose length is not its announced size (nothing is stored).'],
  [429, 'Too many requests (LFS_RATE_LIMIT_PER_MINUTE) or too many failed passwords; Retry-After says when to retry.'],
  [503, 'A part of the server (the database, the storage) is unavailable; Retry-After says when to retry.'],
  [507, 'The store has less free space than LFS_MIN_FREE_BYTES, or unfinished resumable uploads already declare as many bytes as LFS_PARTIAL_BYTES_PER_REPO or LFS_PARTIAL_BYTES_PER_ORG allow.'],
  [509, 'The repository has used its daily bandwidth (LFS_BANDWIDTH_QUOTA_BYTES_PER_DAY).'],
];

/** Signed in: the latest scans of the user's org, each a link to its report page. Otherwise: the sign-in form. */
async function yourReports(s: Pick<OpsDeps, 'db'>, identity: Identity | null): Promise<string> {
  if (!identity) {
    return `<h2 id="reports">Reports</h2>
<p>Sign in to see your organization's scans and their reports.</p>
<form id="signin">
<p><label for="username">Username</label> <input id="username" name="username" autocomplete="username" required></p>
<p><label for="password">Password</label> <input id="password" name="password" type="password" autocomplete="current-password" required></p>
<p><button type="submit">Sign in</button> <span id="signin-status" role="status"></span></p>
</form>
<script src="docs/assets/signin.js"></script>`;
  }
  const scans = await s.db<ScanRow>('scans').where({ org_id: identity.orgId }).orderBy('id', 'desc').limit(20);
  return `<h2 id="reports">Reports</h2>
<p>Signed in as ${escapeHtml(identity.username ?? identity.subject)}. The latest scans of your organization:</p>
${await latestScansHtml(s.db, identity.orgId, scans)}`;
}

export function homePage(s: Pick<OpsDeps, 'config' | 'db'>): Handler<'ops.home'> {
  const u = escapeHtml(s.config.publicUrl);
  const rows = OBJECT_API_ERRORS.map(([status, meaning]) => `<tr><td>${status}</td><td>${escapeHtml(meaning)}</td></tr>`).join('\n');
  const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>pactum</title>
<link rel="stylesheet" href="docs/assets/home.css">
</head>
<body>
<h1>pactum</h1>
<p>This server answers three APIs. Their specs and a page to try them: <a href="docs">API documentation</a>.</p>
%REPORTS%
<h2>APIs</h2>
<ul>
<li><strong>Dashboard MCP endpoint</strong> (JSON-RPC 2.0 over MCP Streamable HTTP): <code>POST ${u}/api/v1/mcp</code>. Sign in at <code>${u}/api/v1/auth/login</code>, or send a bearer token.</li>
<li><strong>Batch object API v1.3</strong> (Git LFS, with the basic and tus transfers, and locks): <code>${u}/{org}/{repo}.git/info/lfs</code>. Point Git LFS at it with <code>git config lfs.url ${u}/{org}/{repo}.git/info/lfs</code>.</li>
<li><strong>Legacy object API v0.5</strong> (Git LFS before batch): the same base URL, <code>${u}/{org}/{repo}.git/info/lfs/objects</code>.</li>
</ul>
<h2>Health</h2>
<ul>
<li><a href="healthz"><code>${u}/healthz</code></a>: the process is serving.</li>
<li><a href="readyz"><code>${u}/readyz</code></a>: the database and the object storage answer (503 names what does not).</li>
</ul>
<h2 id="object-api-errors">Object API errors</h2>
<p>The object APIs answer an error with <code>{"message", "request_id", "documentation_url"}</code>. The message says what went wrong; the request id finds the request in the server's log. The statuses:</p>
<table>
${rows}
</table>
</body>
</html>
`;
  return async ({ ctx, identity }) => {
    ctx.status = 200;
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', identity ? 'no-store' : 'no-cache');
    const reports = await yourReports(s, identity);
    ctx.body = page.replace('%REPORTS%', () => reports);
  };
}
