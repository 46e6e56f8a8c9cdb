/**
 * /docs: Swagger UI over the three specs, its files served from the swagger-ui-dist package (no
 * CDN: the page works on a machine without internet access).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Handler } from '../http/router.js';
import { loadBundledSpec } from '../spec/documents.js';

const assetDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const TYPES: Record<string, string> = { css: 'text/css; charset=utf-8', js: 'text/javascript; charset=utf-8' };
const SPECS = { 'dashboard-mcp': 'dashboard', 'objects-legacy': 'legacy', 'objects-batch': 'batch' } as const;

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
<script>
window.ui = SwaggerUIBundle({
  urls: [
    { url: 'docs/openapi/dashboard-mcp', name: 'Dashboard MCP endpoint' },
    { url: 'docs/openapi/objects-batch', name: 'Batch object API v1.3' },
    { url: 'docs/openapi/objects-legacy', name: 'Legacy object API v0.5' }
  ],
  dom_id: '#swagger-ui',
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout'
});
</script>
</body>
</html>
`;

/** Relative links (docs/assets/…) resolve against /docs whatever prefix a proxy mounts it under. */
export const docsPage: Handler = ({ ctx }) => {
  ctx.status = 200;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-cache');
  ctx.body = PAGE;
};

const assetCache = new Map<string, Buffer>();

export const docsAsset: Handler = async ({ ctx, params }) => {
  const file = params.file as string; // validated against the spec's enum: no path tricks reach here
  let bytes = assetCache.get(file);
  if (!bytes) assetCache.set(file, (bytes = await readFile(join(assetDir, file))));
  ctx.status = 200;
  ctx.type = TYPES[file.split('.').pop()!]!;
  ctx.set('Cache-Control', 'public, max-age=86400');
  ctx.body = bytes;
};

const specCache = new Map<string, unknown>();

/** Each spec is read and parsed once, on first request. */
export const docsSpec: Handler = ({ params }) => {
  const name = SPECS[params.api as keyof typeof SPECS];
  let spec = specCache.get(name);
  if (!spec) specCache.set(name, (spec = loadBundledSpec(name)));
  return { status: 200, body: spec };
};
