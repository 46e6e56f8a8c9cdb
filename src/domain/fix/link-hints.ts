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

/**
 * The text of the last heading before `el` inside its nearest sectioning ancestor (card, article,
 * list item...) that has one: "Read more" under "Annual report 2024" is about the annual report.
 */
export function nearestHeadingText(el: Element): string | null {
  for (let scope = el.parentElement; scope !== null && scope.localName !== 'html'; scope = scope.parentElement) {
    const before = elementsOf(scope, 'h1, h2, h3, h4, h5, h6, [role="heading"]').filter(
      (h) => !h.contains(el) && (h.compareDocumentPosition(el) & 4) !== 0,
    );
    const heading = before.at(-1);
    if (heading !== undefined) {
      const text = collapse(contentText(heading));
      return text === '' || text.length > MAX_HINT ? null : text;
    }
    if (scope.localName === 'body') break;
  }
  return null;
}
