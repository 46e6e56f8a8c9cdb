/**
 * Small DOM helpers shared by the recipes: names, focusability, text, ids.
 *
 * Queries walk the tree and test each element with matches() rather than asking jsdom's selector
 * engine to search: asked from an element, it checks every candidate against the element's
 * ancestry (a query from each element of a deep snippet cost the cube of its depth), and its
 * searching path keeps every document it has searched in memory for as long as the thread lives
 * (several megabytes a draft).
 */
import { childElementsOf, childNodesOf, ELEMENT_NODE, TEXT_NODE } from './nodes.js';

export { childElementsOf, childNodesOf } from './nodes.js';

/** The elements below `root` (not `root` itself), in document order. */
export function* descendants(root: Element): Generator<Element> {
  let el = root.firstElementChild;
  while (el !== null) {
    yield el;
    if (el.firstElementChild !== null) {
      el = el.firstElementChild;
      continue;
    }
    while (el !== null && el !== root && el.nextElementSibling === null) el = el.parentElement;
    el = el === null || el === root ? null : el.nextElementSibling;
  }
}

/** The elements below `root` that match `selector`, in document order (root.querySelectorAll). */
export function elementsOf(root: ParentNode, selector: string): Element[] {
  const found: Element[] = [];
  const tops = root.nodeType === ELEMENT_NODE ? [root as Element] : childElementsOf(root);
  for (const top of tops) {
    if (top !== root && top.matches(selector)) found.push(top);
    for (const el of descendants(top)) if (el.matches(selector)) found.push(el);
  }
  return found;
}

/**
 * `el` or its nearest ancestor that `test` accepts: el.closest() with a function, for lists of
 * names the engine would match one by one at every level.
 */
export function closestWhere(el: Element | null, test: (el: Element) => boolean): Element | null {
  for (let cur = el; cur !== null; cur = cur.parentElement) if (test(cur)) return cur;
  return null;
}

/** A test for elements with one of these (lower-case) names. */
export function tagIn(...tags: string[]): (el: Element) => boolean {
  const names = new Set(tags);
  return (el) => names.has(tagOf(el));
}

/** The first element below `root` that matches `selector` (root.querySelector, in one walk). */
export function firstWithin(root: Element, selector: string): Element | null {
  for (const el of descendants(root)) if (el.matches(selector)) return el;
  return null;
}

export function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

export function isElement(node: Node | null): node is Element {
  return node !== null && node.nodeType === ELEMENT_NODE;
}

export function isText(node: Node | null): node is Text {
  return node !== null && node.nodeType === TEXT_NODE;
}

export function isBlank(node: Node): boolean {
  return node.nodeType === TEXT_NODE && (node as Text).data.trim() === '';
}

export function tagOf(el: Element): string {
  return el.localName.toLowerCase();
}

export function hasNonEmpty(el: Element, name: string): boolean {
  return (el.getAttribute(name) ?? '').trim() !== '';
}

export function roleOf(el: Element): string {
  return (el.getAttribute('role') ?? '').trim().toLowerCase().split(/\s+/)[0] ?? '';
}

export function classTokens(el: Element): string[] {
  return (el.getAttribute('class') ?? '').split(/\s+/).filter((c) => c !== '');
}

/** Hidden from assistive technology by itself or an ancestor. */
export function isHiddenFromAssistiveTech(el: Element): boolean {
  for (let cur: Element | null = el; cur !== null; cur = cur.parentElement) {
    if (cur.getAttribute('aria-hidden') === 'true' || cur.hasAttribute('hidden')) return true;
    if (/display\s*:\s*none/i.test(cur.getAttribute('style') ?? '')) return true;
  }
  return false;
}

/** Text a screen reader gets from an element's content: text, image alts, nested labels; hidden parts skipped. */
export function contentText(node: Node): string {
  if (node.nodeType === TEXT_NODE) return (node as Text).data;
  if (!isElement(node)) return '';
  const el = node;
  if (el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('hidden')) return '';
  if (/display\s*:\s*none/i.test(el.getAttribute('style') ?? '')) return '';
  const tag = tagOf(el);
  if (tag === 'script' || tag === 'style' || tag === 'template') return '';
  if (hasNonEmpty(el, 'aria-label')) return ` ${el.getAttribute('aria-label')} `;
  if (tag === 'img' || (tag === 'input' && el.getAttribute('type') === 'image')) return ` ${el.getAttribute('alt') ?? ''} `;
  if (tag === 'svg') {
    const title = childElementsOf(el).find((c) => tagOf(c) === 'title');
    return ` ${title?.textContent ?? ''} `;
  }
  return childNodesOf(el).map(contentText).join('');
}

// ---- labels: jsdom's el.labels searches the whole document on every read, and the label
// recipes read it for every field (2,000 fields took minutes); here the labels pointing at an id
// are indexed once per document.

const LABELABLE = new Set(['button', 'input', 'meter', 'output', 'progress', 'select', 'textarea']);

/** An element a <label> can label (HTML's labelable elements; a hidden input is not one). */
export function isLabelable(el: Element): boolean {
  return LABELABLE.has(tagOf(el)) && !(tagOf(el) === 'input' && (el.getAttribute('type') ?? '').toLowerCase() === 'hidden');
}

/** A document's <label for> elements by the id they name: built on first use, added to as labels are made. */
const labelsByFor = new WeakMap<Document, Map<string, Element[]>>();

function labelIndex(doc: Document): Map<string, Element[]> {
  let index = labelsByFor.get(doc);
  if (index === undefined) {
    index = new Map();
    labelsByFor.set(doc, index);
    for (const label of elementsOf(doc, 'label[for]')) addToIndex(index, label);
  }
  return index;
}

function addToIndex(index: Map<string, Element[]>, label: Element): void {
  const id = label.getAttribute('for')!;
  index.set(id, [...(index.get(id) ?? []), label]);
}

/** Records a <label for> a recipe made, so that labelsOf() finds it. */
export function noteLabel(label: Element): void {
  const index = labelsByFor.get(label.ownerDocument);
  if (index !== undefined && label.hasAttribute('for')) addToIndex(index, label);
}

/**
 * The labels of a field, in document order, as el.labels gives them: the <label for> naming its
 * id, and an enclosing <label> without for whose first labelable element it is.
 */
export function labelsOf(field: Element): Element[] {
  if (!isLabelable(field)) return [];
  const doc = field.ownerDocument;
  const id = field.getAttribute('id');
  const found = id === null || id === '' || doc.getElementById(id) !== field
    ? []
    : (labelIndex(doc).get(id) ?? []).filter((l) => l.isConnected && l.getAttribute('for') === id);
  for (let el = field.parentElement; el !== null; el = el.parentElement) {
    if (tagOf(el) !== 'label' || el.hasAttribute('for') || found.includes(el)) continue;
    let first: Element | null = null;
    for (const d of descendants(el)) {
      if (isLabelable(d)) {
        first = d;
        break;
      }
    }
    if (first === field) found.push(el);
  }
  return found.length < 2 ? found : found.sort((a, b) => (a.compareDocumentPosition(b) & 4 ? -1 : 1));
}

const NAME_FROM_CONTENT_ROLES = new Set([
  'button', 'link', 'heading', 'tab', 'checkbox', 'radio', 'switch', 'menuitem', 'menuitemcheckbox',
  'menuitemradio', 'option', 'treeitem', 'cell', 'columnheader', 'rowheader', 'tooltip',
]);
const NAME_FROM_CONTENT_TAGS = new Set(['a', 'button', 'summary', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'td', 'th', 'legend', 'caption', 'label', 'option']);

/** A simplified accessible-name computation, enough to tell "has a name" from "has none". */
export function accessibleName(el: Element): string {
  const doc = el.ownerDocument;
  const labelledBy = (el.getAttribute('aria-labelledby') ?? '').split(/\s+/).filter((id) => id !== '');
  const fromIds = collapse(
    labelledBy.map((id) => doc.getElementById(id)).map((ref) => (ref === null ? '' : contentText(ref))).join(' '),
  );
  if (fromIds !== '') return fromIds;
  if (hasNonEmpty(el, 'aria-label')) return collapse(el.getAttribute('aria-label')!);
  const tag = tagOf(el);
  const type = (el.getAttribute('type') ?? '').toLowerCase();
  if (tag === 'img' || tag === 'area' || (tag === 'input' && type === 'image')) {
    const alt = collapse(el.getAttribute('alt') ?? '');
    if (alt !== '') return alt;
  }
  if (tag === 'input' && (type === 'submit' || type === 'reset' || type === 'button')) {
    const value = el.getAttribute('value');
    if (value !== null) return collapse(value);
    if (type === 'submit') return 'Submit';
    if (type === 'reset') return 'Reset';
  }
  const labels = labelsOf(el);
  if (labels.length > 0) {
    const text = collapse(labels.map((l) => contentText(l)).join(' '));
    if (text !== '') return text;
  }
  if (tag === 'svg') {
    const text = collapse(contentText(el));
    if (text !== '') return text;
  }
  if (NAME_FROM_CONTENT_TAGS.has(tag) || NAME_FROM_CONTENT_ROLES.has(roleOf(el))) {
    const text = collapse(contentText(el));
    if (text !== '') return text;
  }
  if (hasNonEmpty(el, 'title')) return collapse(el.getAttribute('title')!);
  if (tag === 'input' || tag === 'textarea') {
    if (hasNonEmpty(el, 'placeholder')) return collapse(el.getAttribute('placeholder')!);
  }
  return '';
}

/** Reachable with the Tab key without any script. */
export function isKeyboardFocusable(el: Element): boolean {
  const tabindex = el.getAttribute('tabindex');
  if (tabindex !== null && /^\s*-?\d+\s*$/.test(tabindex)) return parseInt(tabindex, 10) >= 0;
  const tag = tagOf(el);
  if ((tag === 'a' || tag === 'area') && el.hasAttribute('href')) return true;
  if (['button', 'select', 'textarea', 'iframe'].includes(tag)) return !el.hasAttribute('disabled');
  if (tag === 'input') return el.getAttribute('type')?.toLowerCase() !== 'hidden' && !el.hasAttribute('disabled');
  if (tag === 'summary') return true;
  if ((tag === 'audio' || tag === 'video') && el.hasAttribute('controls')) return true;
  const editable = el.getAttribute('contenteditable');
  return editable !== null && editable.toLowerCase() !== 'false';
}

/** Interactive content that must not be nested inside a button or a link. */
export function containsInteractive(el: Element): boolean {
  return firstWithin(el, 'a[href], button, input, select, textarea, iframe, [tabindex], [onclick], [contenteditable]') !== null;
}

/** ASCII slug for ids: lower case, accents dropped, words joined by hyphens. */
export function slugify(text: string, maxLength = 40): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return slug.slice(0, maxLength).replace(/-+$/, '');
}

/** An id not yet used in the document: `base`, then `base-2`, `base-3`... */
export function uniqueId(doc: Document, base: string): string {
  const root = base === '' ? 'field' : /^[a-z]/.test(base) ? base : `id-${base}`;
  if (doc.getElementById(root) === null) return root;
  for (let n = 2; ; n++) {
    const candidate = `${root}-${n}`;
    if (doc.getElementById(candidate) === null) return candidate;
  }
}

/** "first_name", "firstName", "first-name" → "First name". */
export function humanise(identifier: string): string {
  const words = identifier
    .replace(/\[\]$/, '')
    .replace(/\[([^\]]*)\]/g, ' $1')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_.\-:]+/)
    .filter((w) => w !== '')
    .map((w) => w.toLowerCase());
  const sentence = words.join(' ');
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
}

/**
 * Replaces `el` by a new element `tag` that takes over its children and the attributes `keep` accepts.
 * Attributes are copied in their original order so the diff stays readable.
 */
export function retag(el: Element, tag: string, keep: (name: string) => boolean = () => true): Element {
  const doc = el.ownerDocument;
  const replacement = doc.createElement(tag);
  for (const a of Array.from(el.attributes)) if (keep(a.name)) replacement.setAttribute(a.name, a.value);
  while (el.firstChild !== null) replacement.appendChild(el.firstChild);
  el.replaceWith(replacement);
  return replacement;
}

const isMeaningful = (n: Node) => !isBlank(n) && n.nodeType !== 8;

/** The element's non-blank child nodes. */
export function meaningfulChildren(el: Element): Node[] {
  return childNodesOf(el).filter(isMeaningful);
}

/** Whether the element has exactly one non-blank child node (without reading past the second). */
export function hasOneMeaningfulChild(el: Element): boolean {
  let seen = 0;
  for (let n = el.firstChild; n !== null && seen < 2; n = n.nextSibling) if (isMeaningful(n)) seen++;
  return seen === 1;
}

export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}

/** Quotes a short piece of page text for an explanation, shortened if long. */
export function quote(text: string, max = 60): string {
  const t = collapse(text);
  return `"${t.length > max ? `${t.slice(0, max - 1)}…` : t}"`;
}
