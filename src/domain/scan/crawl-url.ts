/** Which links a same-origin crawl follows, and the one spelling each page is known by (its canonical key). */

/** File types that are certainly not HTML pages; fetching them would only waste a page of the budget. */
const NON_HTML_EXTENSIONS: ReadonlySet<string> = new Set([
  'pdf', 'jpg', 'jpeg', 'png', 'gif', 'webp', 'avif', 'svg', 'ico', 'bmp', 'tif', 'tiff',
  'zip', 'gz', 'tgz', 'bz2', 'xz', '7z', 'rar', 'tar', 'dmg', 'exe', 'msi', 'apk', 'iso',
  'mp3', 'mp4', 'm4a', 'm4v', 'wav', 'ogg', 'oga', 'webm', 'mov', 'avi', 'mkv', 'flac',
  'doc', 'docx', 'xls', 'xlsx', 'ppt', 'pptx', 'odt', 'ods', 'odp', 'rtf', 'csv', 'txt',
  'css', 'js', 'mjs', 'json', 'xml', 'rss', 'atom', 'woff', 'woff2', 'ttf', 'otf', 'eot',
]);

/** Absolute URL without its fragment, or null for anything that is not an http(s) URL. */
export function normalizePageUrl(href: string, base?: string): string | null {
  let url: URL;
  try {
    url = new URL(href, base);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null; // mailto:, tel:, javascript:, data: ...
  url.hash = '';
  return url.href;
}

function extensionOf(pathname: string): string {
  const last = pathname.slice(pathname.lastIndexOf('/') + 1);
  const dot = last.lastIndexOf('.');
  return dot > 0 ? last.slice(dot + 1).toLowerCase() : '';
}

/** The normalized URL if the crawl should visit it: same origin, likely HTML. */
export function crawlableUrl(href: string, origin: string, base?: string): string | null {
  const normalized = normalizePageUrl(href, base);
  if (!normalized) return null;
  const url = new URL(normalized);
  if (url.origin !== origin) return null;
  if (NON_HTML_EXTENSIONS.has(extensionOf(url.pathname))) return null;
  return normalized;
}

/** Query parameters that only track where a visitor came from: the page is the same without them. */
const TRACKING_PARAMS = /^(utm_[a-z_]+|gclid|gclsrc|dclid|fbclid|msclkid|yclid|mc_cid|mc_eid|_ga|_gl|igshid|twclid|li_fat_id|wbraid|gbraid|_hsenc|_hsmi|mkt_tok|oly_anon_id|oly_enc_id|vero_id|ref_src)$/i;
/** Directory index files servers answer for the directory itself. */
const INDEX_FILE = /\/(index|default)\.(html?|php|aspx?|jsp)$/i;

/**
 * The key a page is known by in one scan: `/` and `/index.html`, `/a` and `/a/`, with or without
 * a fragment or tracking parameters, are one page. Only used to recognise a page already planned;
 * the crawler still fetches the URL as it was found.
 */
export function canonicalPageKey(href: string, base?: string): string | null {
  const normalized = normalizePageUrl(href, base);
  if (!normalized) return null;
  const url = new URL(normalized);
  for (const name of [...url.searchParams.keys()]) if (TRACKING_PARAMS.test(name)) url.searchParams.delete(name);
  url.searchParams.sort();
  let path = url.pathname.replace(INDEX_FILE, '/');
  if (path.length > 1 && path.endsWith('/')) path = path.replace(/\/+$/, '') || '/';
  url.pathname = path;
  return url.href;
}
