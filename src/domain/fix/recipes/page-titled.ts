/** 2.4.2 Page Titled: a document without a <title>, or with an empty one, gets a placeholder title. */
import { childElementsOf, collapse, elementsOf, isBlank, quote, tagOf } from '../dom.js';
import { draftWithFixers, type Finding } from '../drafting.js';
import { HTML_NS, type Markup } from '../markup.js';
import { Placeholder, type FixInput, type FixResult, type Recipe } from '../model.js';

function documentTitles(doc: Document): Element[] {
  return elementsOf(doc, 'title').filter((t) => t.namespaceURI === HTML_NS && t.closest('svg') === null);
}

/** Inserts `el` after `ref` (or first in `parent`), copying the indentation the siblings already use. */
function insertIndented(parent: Element, ref: ChildNode | null, el: Element): void {
  const doc = parent.ownerDocument;
  if (ref !== null) {
    const indent = ref.previousSibling !== null && isBlank(ref.previousSibling) ? (ref.previousSibling as Text).data : null;
    ref.after(...(indent === null ? [el] : [doc.createTextNode(indent), el]));
    return;
  }
  const first = parent.firstChild;
  if (first !== null && isBlank(first)) first.after(el, doc.createTextNode((first as Text).data));
  else parent.prepend(el);
}

function fixTitle(markup: Markup): Finding | null {
  const doc = markup.document;
  const titles = documentTitles(doc);
  const h1 = elementsOf(doc, 'h1')[0] ?? null;
  const hint = h1 === null ? '' : collapse(h1.textContent ?? '');
  const hintSentence = hint === '' ? '' : ` The main heading ${quote(hint)} may be a good start, followed by the site name.`;
  const existing = titles[0];
  if (existing !== undefined) {
    if (collapse(existing.textContent ?? '') !== '') return null;
    existing.textContent = Placeholder.pageTitle;
    return {
      count: 1,
      headline: 'the empty <title> filled',
      restructured: false,
      summary: 'The page had an empty <title>, so browser tabs, bookmarks and screen readers had nothing to announce: it now holds a placeholder',
      check: `Replace "${Placeholder.pageTitle}" with a title that says what this page is about and is unique on the site.${hintSentence}`,
      placeholders: [Placeholder.pageTitle],
    };
  }
  const title = doc.createElement('title');
  title.textContent = Placeholder.pageTitle;
  const head = doc.head;
  // After <meta charset>, which must stay first, otherwise at the top of <head>.
  const charset = childElementsOf(head).filter((c) => tagOf(c) === 'meta' && (c.hasAttribute('charset') || c.hasAttribute('http-equiv'))).at(-1) ?? null;
  insertIndented(head, charset, title);
  return {
    count: 1,
    headline: 'a <title> added',
    restructured: false,
    summary: `The ${markup.isDocument ? 'page' : 'snippet'} had no <title>, so browser tabs, bookmarks and screen readers had nothing to announce: added <title>${Placeholder.pageTitle}</title> to the <head>`,
    check: `Replace "${Placeholder.pageTitle}" with a title that says what this page is about and is unique on the site.${hintSentence}`,
    placeholders: [Placeholder.pageTitle],
  };
}

export const pageTitled: Recipe = {
  criteria: ['2.4.2'],
  pageLevel: true,
  draft(input: FixInput): FixResult {
    return draftWithFixers(
      input,
      [fixTitle],
      'The document already has a non-empty <title>; check that it describes the page and differs from other pages\' titles.',
    );
  },
};
