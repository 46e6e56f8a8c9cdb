/**
 * The report view as one self-contained HTML document: its script (view.ts and host.ts, bundled
 * by esbuild once, at first use) and its stylesheet inline, allowed by their hashes in
 * the document's own Content-Security-Policy; no network fetch, no eval. The same document is the
 * MCP App resource ui://pactum/report and, with its report embedded, the page GET /reports/{id}.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
/** The sources: beside this module in src/, or in src/ beside dist/src/report-view/ (tsc's build) or dist/pactum/ (the bundle). */
const source = (name: string) => {
  for (const dir of [here, join(here, '..', '..', '..', 'src', 'report-view'), join(here, '..', '..', 'src', 'report-view')]) {
    try {
      return { path: join(dir, name), text: readFileSync(join(dir, name), 'utf8') };
    } catch {
      /* try the next */
    }
  }
  throw new Error(`report view: ${name} not found beside ${here}`);
};

export interface ViewAssets {
  script: string;
  style: string;
  scriptHash: string;
  styleHash: string;
  /** The report page's own script (page.ts: sharing), after the view's; not in the MCP App resource. */
  pageScript: string;
  pageScriptHash: string;
}

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

let assets: Promise<ViewAssets> | null = null;

/**
 * The view's script and style as `make build` wrote them beside the bundle (report-view/, what the
 * package ships: it has no esbuild), or null from the sources.
 */
function prebuilt(): { script: string; style: string; pageScript: string } | null {
  const read = (name: string) => readFileSync(join(here, 'report-view', name), 'utf8');
  try {
    return { script: read('view.js'), style: read('style.css'), pageScript: read('page.js') };
  } catch {
    return null;
  }
}

/** A literal "</script" inside a script would end its element early. */
const inline = (script: string) => script.replace(/<\/(script)/gi, '<\\/$1').trim();

/**
 * The view's scripts are the repository's own code only. A package in them is refused, loudly:
 * ext-apps' `App` (with the MCP SDK's `Protocol` and zod) alone would take the MCP App resource
 * past its 150 kB, which is why host.ts speaks MCP Apps itself.
 */
export function assertNoPackages(name: string, inputs: string[]) {
  const packages = inputs.filter((input) => /(^|[\\/])node_modules[\\/]/.test(input));
  if (packages.length > 0) throw new Error(`report view bundle: ${name} bundles ${packages.join(', ')}; the view's scripts take no package (the MCP App resource has 150 kB)`);
}

/** The view's script and style: prebuilt, else bundled here (about a second, once per process; esbuild comes with tsx). */
export function viewAssets(): Promise<ViewAssets> {
  return (assets ??= (async () => {
    const built = prebuilt();
    if (built) return { ...built, scriptHash: sha256(built.script), styleHash: sha256(built.style), pageScriptHash: sha256(built.pageScript) };
    const esbuild = await import('esbuild');
    const bundle = async (name: string) => {
      const result = await esbuild.build({
        entryPoints: [source(name).path], bundle: true, minify: true, format: 'iife', target: 'es2022', write: false, legalComments: 'none', metafile: true, logLevel: 'silent',
      });
      assertNoPackages(name, Object.keys(result.metafile.inputs));
      return inline(result.outputFiles[0]!.text);
    };
    const [script, pageScript] = await Promise.all([bundle('view.ts'), bundle('page.ts')]);
    const style = source('style.css').text.trim();
    return { script, style, scriptHash: sha256(script), styleHash: sha256(style), pageScript, pageScriptHash: sha256(pageScript) };
  })()).catch((err: unknown) => {
    assets = null;
    throw err;
  });
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** JSON inside a data block: `<` escaped so no "</script>" or "<!--" can occur. */
const dataBlock = (data: unknown) => JSON.stringify(data).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');

/** The policy the document carries itself: its own script and style, images as data: URLs (and `imgSelf`: this server's). */
export function viewPolicy(a: ViewAssets, opts: { imgSelf?: boolean } = {}): string {
  return [
    "default-src 'none'",
    `script-src ${a.scriptHash}`,
    `style-src ${a.styleHash}`,
    `img-src data:${opts.imgSelf ? " 'self'" : ''}`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/** The document; `data` (the report page) is embedded for the script to draw. */
export function viewDocument(a: ViewAssets, opts: { title?: string; data?: unknown; imgSelf?: boolean; csp?: boolean; page?: boolean } = {}): string {
  const policy = opts.csp === false ? '' : `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(viewPolicy(a, opts))}">\n`;
  const data = opts.data === undefined ? '' : `<script type="application/json" id="pactum-data">${dataBlock(opts.data)}</script>\n`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${policy}<title>${escapeHtml(opts.title ?? 'Accessibility report')}</title>
<style>${a.style}</style>
</head>
<body>
<main id="app" aria-busy="true"><h1>Accessibility report</h1><p id="status" role="status" class="status">Loading the report…</p></main>
${data}<script>${a.script}</script>
${opts.page ? `<script>${a.pageScript}</script>\n` : ''}</body>
</html>
`;
}
