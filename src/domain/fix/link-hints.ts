/** Hints about where a link goes: well-known sites in its href, or the heading it sits under. */
import { collapse, contentText, elementsOf } from './dom.js';

const SITES: ReadonlyArray<readonly [RegExp, string]> = [
  [/(^|\.)facebook\.com$/, 'Facebook'],
  [/(^|\.)(twitter\.com|x\.com)$/, 'X (Twitter)'],
  [/(^|\.)instagram\.com$/, 'Instagram'],
  [/(^|\.)linkedin\.com$/, 'LinkedIn'],
  [/(^|\.)(youtube\.com|youtu\.be)$/, 'YouTube'],
  [/(^|\.)github\.com$/, 'GitHub'],
  [/(^|\.)tiktok\.com$/, 'TikTok'],
  [/(^|\.)pinterest\.[a-z.]+$/, 'Pinterest'],
  [/(^|\.)xing\.com$/, 'XING'],
  [/(^|\.)bsky\.app$/, 'Bluesky'],
];

/** "Facebook" for https://www.facebook.com/acme; "Email" for mailto:, "Phone" for tel:. */
export function hrefHint(href: string | null): string | null {
  if (href === null) return null;
  const h = href.trim();
  if (/^mailto:/i.test(h)) return 'Email';
  if (/^tel:/i.test(h)) return 'Phone';
  const host = /^(?:https?:)?\/\/([^/?#:]+)/i.exec(h)?.[1]?.toLowerCase();
  if (host === undefined) return null;
  for (const [pattern, name] of SITES) if (pattern.test(host)) return name;
  return null;
}

const MAX_HINT = 100;

const HEADINGS = 'h1, h2, h3, h4, h5, h6, [role="heading"]';

/** The top of the scopes a heading is looked for in: the ancestor just below <html> (usually <body>). */
function topScope(el: Element): Element | null {
  let top: Element | null = null;
  for (let scope = el.parentElement; scope !== null && scope.localName !== 'html'; scope = scope.parentElement) top = scope;
  return top;
}

/**
 * For each of `els`, the last heading before it inside its nearest sectioning
 * ancestor (card, article, list item...) that has one: "Read more" under "Annual report 2024" is
 * about the annual report. That heading is the last one before the element in document order that
 * does not contain it (any such heading sits in some ancestor of the element, and one in a nearer
 * ancestor would come after it), so one pass over the document finds them all.
 */
export function nearestHeadings(doc: Document, els: readonly Element[]): Map<Element, Element> {
  const wanted = new Set(els);
  const found = new Map<Element, Element>();
  const seen: Element[] = [];
  for (const el of elementsOf(doc, '*')) {
    if (wanted.has(el)) {
      const top = topScope(el);
      let i = seen.length - 1;
      while (i >= 0 && seen[i]!.contains(el)) i--;
      if (i >= 0 && top !== null && top.contains(seen[i]!)) found.set(el, seen[i]!);
    }
    if (el.matches(HEADINGS)) seen.push(el);
  }
  return found;
}

/** A heading's text as a hint, or null when it has none or too much. */
export function headingHint(heading: Element | undefined): string | null {
  const text = heading === undefined ? '' : collapse(contentText(heading));
  return text === '' || text.length > MAX_HINT ? null : text;
}
