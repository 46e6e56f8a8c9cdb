/**
 * A finding's fingerprint: the name one finding keeps from scan to scan, so that what a reviewer
 * decided about it (marks.ts) follows it into later scans and a rescan can say whether it was
 * fixed. It is a hash of four things, each normalised so that what does not concern the finding
 * leaves it alone:
 *
 * - the rule (`code`);
 * - the page: its canonical key (crawl-url.ts: no fragment, no tracking parameters, query
 *   parameters sorted, `/index.html` and a trailing slash folded);
 * - the element's selector without its positional parts (`:nth-child(2)`, `:first-of-type`, …),
 *   so that moving the element among its siblings, or adding siblings before it, keeps it;
 * - the element's start tag from its markup: tag and attribute names lower-cased, attributes
 *   sorted, white space collapsed, the element's content left out (a changed text or child is
 *   the same element), and `nonce` left out (it changes on every response).
 *
 * Two findings of a page that agree on all four (two identical images without alt text) are
 * told apart by their order among themselves: the first keeps the plain hash, the second hashes
 * with `#1`, and so on. Anything else about the page can change without changing a fingerprint.
 * A fingerprint changes when the rule, the page's address, the element's path through the
 * document (its tags, ids and classes as the selector names them) or its own attributes change.
 */
import { createHash } from 'node:crypto';
import { canonicalPageKey } from '../scan/crawl-url.js';
import type { Issue } from '../scan/types.js';

/** The scheme's version, hashed in: a later scheme makes new fingerprints instead of colliding with these. */
const SCHEME = 'pactum-finding/v1';

/** Positional pseudo-classes: they name a place among siblings, which unrelated markup moves. */
const POSITIONAL = /:(?:nth-child|nth-last-child|nth-of-type|nth-last-of-type)\([^)]*\)|:(?:first|last|only)-(?:child|of-type)/g;

/** The selector without its positional parts and with its white space normalised. */
export function stableSelector(selector: string): string {
  return selector
    .replace(POSITIONAL, '')
    .replace(/\s*([>+~])\s*/g, ' $1 ')
    .replace(/\s+/g, ' ')
    .trim();
}

const START_TAG = /^\s*<([a-zA-Z][\w:-]*)((?:\s+[^\s=/>]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?)*)\s*\/?>/;
const ATTRIBUTE = /([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g;
/** Attributes whose value is made afresh on each response. */
const VOLATILE = new Set(['nonce']);

/** The element's start tag, normalised; markup that is not an element (or is cut short) as its collapsed text. */
export function stableMarkup(context: string): string {
  const tag = START_TAG.exec(context);
  if (!tag) return context.replace(/\s+/g, ' ').trim();
  const attributes: string[] = [];
  for (const m of tag[2]!.matchAll(ATTRIBUTE)) {
    const name = m[1]!.toLowerCase();
    if (VOLATILE.has(name)) continue;
    const value = m[2] ?? m[3] ?? m[4];
    attributes.push(value === undefined ? name : `${name}="${value.replace(/\s+/g, ' ').trim()}"`);
  }
  attributes.sort();
  return `<${[tag[1]!.toLowerCase(), ...attributes].join(' ')}>`;
}

/** The page as a fingerprint names it. */
export const stablePage = (url: string): string => canonicalPageKey(url) ?? url;

const hash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

/** Each issue of one page with its fingerprint (in the issues' order). */
export function fingerprintsOf(pageUrl: string, issues: readonly Pick<Issue, 'code' | 'selector' | 'context'>[]): string[] {
  const page = stablePage(pageUrl);
  const seen = new Map<string, number>();
  return issues.map((issue) => {
    const key = [SCHEME, issue.code, page, stableSelector(issue.selector), stableMarkup(issue.context)].join('\0');
    const n = seen.get(key) ?? 0;
    seen.set(key, n + 1);
    return hash(n === 0 ? key : `${key}\0#${n}`);
  });
}

/** The page's issues, each with its fingerprint. */
export function withFingerprints<T extends Pick<Issue, 'code' | 'selector' | 'context'>>(pageUrl: string, issues: readonly T[]): (T & { fingerprint: string })[] {
  const prints = fingerprintsOf(pageUrl, issues);
  return issues.map((issue, i) => ({ ...issue, fingerprint: prints[i]! }));
}

/** The fingerprints of a page's issues: those they carry, else computed. */
export function pagePrints(page: { url: string; issues: readonly Pick<Issue, 'code' | 'selector' | 'context' | 'fingerprint'>[] }): string[] {
  return page.issues.every((i) => i.fingerprint) ? page.issues.map((i) => i.fingerprint!) : fingerprintsOf(page.url, page.issues);
}
