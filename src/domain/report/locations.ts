/**
 * Where a scanned page is, as a code host's SARIF reader wants it. GitHub code scanning refuses a
 * whole upload when an artifact location is an absolute URI whose scheme is not the checkout's
 * (`file`), and matches relative URIs against the repository's files. So a page's URL becomes a
 * relative URI: the repository path of its source when the user maps URL prefixes to source
 * directories (`https://example.com/docs/=site/docs/`), else `host/path` without a scheme.
 */

/** A URL prefix and the repository directory its pages come from. */
export interface SourceMapping {
  prefix: string;
  dir: string;
}

/** What a source mapping may be: refused with this message, which names the rule broken. */
export class SourceMappingError extends Error {}

/**
 * `PREFIX=DIR`: an http(s) URL prefix and a relative directory of the repository, split at the
 * last `=` (a URL prefix may hold one in its query; a directory name rarely does).
 */
export function parseSourceMapping(text: string): SourceMapping {
  const at = text.lastIndexOf('=');
  if (at <= 0) throw new SourceMappingError(`${text}: a source mapping is URL-PREFIX=DIRECTORY, e.g. https://example.com/docs/=site/docs/`);
  const prefix = text.slice(0, at);
  let dir = text.slice(at + 1).replace(/^\.\//, '');
  let url: URL;
  try {
    url = new URL(prefix);
  } catch {
    throw new SourceMappingError(`${text}: ${prefix} is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SourceMappingError(`${text}: the prefix is an http or https URL`);
  if (dir.startsWith('/') || dir.includes('\\') || dir.split('/').some((s) => s === '..') || /^[a-z][a-z0-9+.-]*:/i.test(dir)) {
    throw new SourceMappingError(`${text}: the directory is a path relative to the repository's root, without .. (${dir || 'empty'} is not)`);
  }
  if (dir && !dir.endsWith('/')) dir += '/';
  return { prefix: url.href, dir };
}

/** `:` in the first segment of a relative URI would make it a scheme (RFC 3986, 4.2). */
const hostSegment = (url: URL) => url.host.replace(/:/g, '%3A');

/**
 * The artifact URI of a page: the longest matching prefix's directory and the rest of the path
 * (a path ending in `/` is its directory's index.html, as static sites and servers have it), else
 * `host/path`. Query and fragment are left out of both: they name no file. A URL that does not
 * parse is kept as `page` plus its text made safe, never with a scheme.
 */
export function artifactUri(pageUrl: string, sourceMap: readonly SourceMapping[]): string {
  let url: URL;
  try {
    url = new URL(pageUrl);
  } catch {
    return `page/${encodeURIComponent(pageUrl)}`;
  }
  const bare = `${url.origin}${url.pathname}`;
  let best: SourceMapping | null = null;
  // A prefix matches whole segments: https://example.com/docs is not a prefix of /docs-old/.
  const matches = (m: SourceMapping) => bare.startsWith(m.prefix) && (m.prefix.endsWith('/') || bare.length === m.prefix.length || bare[m.prefix.length] === '/');
  for (const m of sourceMap) if (matches(m) && (!best || m.prefix.length > best.prefix.length)) best = m;
  if (best) {
    const rest = bare.slice(best.prefix.length).replace(/^\/+/, '');
    const file = rest === '' || rest.endsWith('/') ? `${rest}index.html` : rest;
    return `${best.dir}${file}`;
  }
  return `${hostSegment(url)}${url.pathname}`;
}
