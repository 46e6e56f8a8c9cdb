/**
 * Programmatic labels for form fields, shared by 1.3.1 (text next to a field that is not tied to it),
 * 3.3.2 (fields with no visible label) and 4.1.2 (fields with no accessible name).
 */
import {
  accessibleName,
  collapse,
  contentText,
  containsInteractive,
  elementsOf,
  hasNonEmpty,
  firstWithin,
  humanise,
  isBlank,
  isElement,
  isText,
  labelsOf,
  hasOneMeaningfulChild,
  noteLabel,
  slugify,
  tagOf,
  uniqueId,
} from './dom.js';
import { Placeholder } from './model.js';

const UNLABELLED_INPUT_TYPES = new Set(['hidden', 'submit', 'button', 'image', 'reset']);
const MAX_LABEL_LENGTH = 80;

export function formFields(root: ParentNode): Element[] {
  return elementsOf(root, 'input, select, textarea').filter(
    (el) => tagOf(el) !== 'input' || !UNLABELLED_INPUT_TYPES.has((el.getAttribute('type') ?? 'text').toLowerCase()),
  );
}

function isToggle(field: Element): boolean {
  const type = (field.getAttribute('type') ?? '').toLowerCase();
  return tagOf(field) === 'input' && (type === 'checkbox' || type === 'radio');
}

/** Tied to a <label> or to visible text through aria-labelledby. */
export function hasProgrammaticLabel(field: Element): boolean {
  if (labelsOf(field).some((l) => collapse(contentText(l)) !== '')) return true;
  const ids = (field.getAttribute('aria-labelledby') ?? '').split(/\s+/).filter((id) => id !== '');
  return ids.some((id) => {
    const ref = field.ownerDocument.getElementById(id);
    return ref !== null && collapse(contentText(ref)) !== '';
  });
}

// Inline elements whose text can serve as a label once wrapped.
const LABEL_CARRIERS = new Set(['span', 'b', 'strong', 'em', 'i', 'small', 'font', 'div', 'p', 'td', 'th', 'dt', 'dd', 'li']);

function usableLabelText(node: Node): boolean {
  const text = collapse(contentText(node));
  if (text === '' || text.length > MAX_LABEL_LENGTH) return false;
  if (!isElement(node)) return true;
  return LABEL_CARRIERS.has(tagOf(node)) && !containsInteractive(node) && node.closest('label') === null && firstWithin(node, 'label, br') === null;
}

function siblingNonBlank(node: Node, forward: boolean): Node | null {
  let cur = forward ? node.nextSibling : node.previousSibling;
  while (cur !== null && (isBlank(cur) || cur.nodeType === 8)) cur = forward ? cur.nextSibling : cur.previousSibling;
  return cur;
}

/** Visible text right next to the field (or in the cell before its cell) that reads as its label. */
export function adjacentLabelSource(field: Element): Node | null {
  if (field.closest('label') !== null) return null;
  const order = isToggle(field) ? [true, false] : [false];
  for (const forward of order) {
    const candidate = siblingNonBlank(field, forward);
    if (candidate === null || (isElement(candidate) && tagOf(candidate) === 'br')) continue;
    if (isText(candidate) || isElement(candidate)) {
      if (isText(candidate) && candidate.parentElement?.closest('label') != null) continue;
      if (usableLabelText(candidate)) return candidate;
    }
  }
  // A field alone in its cell or box, labelled by the cell or box before it.
  const parent = field.parentElement;
  if (parent !== null && parent !== field.ownerDocument.body && hasOneMeaningfulChild(parent)) {
    const previous = parent.previousElementSibling;
    if (previous !== null && usableLabelText(previous)) return previous;
  }
  return null;
}

/** Wraps the text of `source` in <label for="id">, keeping surrounding whitespace and elements in place. */
export function wrapAsLabel(source: Node, fieldId: string): Element {
  const doc = source.ownerDocument!;
  const label = doc.createElement('label');
  label.setAttribute('for', fieldId);
  noteLabel(label);
  if (isText(source)) {
    const match = /^(\s*)([\s\S]*?)(\s*)$/.exec(source.data)!;
    label.textContent = match[2]!;
    const parts: Node[] = [];
    if (match[1] !== '') parts.push(doc.createTextNode(match[1]!));
    parts.push(label);
    if (match[3] !== '') parts.push(doc.createTextNode(match[3]!));
    (source).replaceWith(...parts);
    return label;
  }
  const el = source as Element;
  if (['span', 'b', 'strong', 'em', 'i', 'small', 'font'].includes(tagOf(el))) {
    el.replaceWith(label);
    label.appendChild(el);
    return label;
  }
  // Block carriers (cells, divs) keep their box; the label goes inside.
  while (el.firstChild !== null) label.appendChild(el.firstChild);
  el.appendChild(label);
  return label;
}

const KNOWN_NAMES: ReadonlyArray<readonly [RegExp, string]> = [
  [/^(q|s|query|search|search[-_]?term|keywords?)$/i, 'Search'],
  [/^(e-?mail|mail|email[-_]?address|user[-_]?email)$/i, 'Email address'],
  [/^(tel|phone|telephone|mobile|phone[-_]?number)$/i, 'Phone number'],
  [/^(pw|pwd|pass|passwd|password)$/i, 'Password'],
  [/^(f[-_]?name|first[-_]?name|given[-_]?name|firstname|vorname|prenom)$/i, 'First name'],
  [/^(l[-_]?name|last[-_]?name|family[-_]?name|surname|lastname|nachname|nom)$/i, 'Last name'],
  [/^(name|full[-_]?name|your[-_]?name)$/i, 'Name'],
  [/^(zip|zip[-_]?code|postcode|postal[-_]?code|plz)$/i, 'Postcode'],
  [/^(dob|birth[-_]?date|date[-_]?of[-_]?birth)$/i, 'Date of birth'],
  [/^(msg|message|comment|comments)$/i, 'Message'],
  [/^(user|username|user[-_]?name|login)$/i, 'Username'],
];

/** A label guessed from the field's name or id; null when the identifier says nothing (e.g. "field_12"). */
export function labelFromIdentifier(identifier: string | null): string | null {
  if (identifier === null || identifier.trim() === '') return null;
  const bare = identifier.trim().replace(/\[\]$/, '').replace(/^.*\[([^\]]+)\]$/, '$1');
  for (const [pattern, label] of KNOWN_NAMES) if (pattern.test(bare)) return label;
  const words = humanise(bare);
  const letters = words.replace(/[^a-z]/gi, '');
  if (letters.length < 3 || /^(field|input|text|txt|select|textarea|form|item|value|data|f|fld)\s*\d*$/i.test(words)) return null;
  if (/\d{3,}/.test(words)) return null;
  return words;
}

/** Placeholder text that reads as a label, not as an example value. */
function labelFromPlaceholder(field: Element): string | null {
  const ph = collapse(field.getAttribute('placeholder') ?? '');
  if (ph === '' || ph.length > MAX_LABEL_LENGTH) return null;
  if (/^(e\.?\s?g\.?|z\.\s?b\.?|ex\.?|p\.\s?ej\.?|bijv\.?|es\.)\s/i.test(ph) || /@|^[\d\s+()./-]+$|https?:/.test(ph)) return null;
  return ph.replace(/(\.{3}|…)$/, '');
}

export interface LabelText {
  readonly text: string;
  readonly source: 'aria-label' | 'placeholder' | 'title' | 'name' | 'placeholder-todo';
}

/** The best text for a new visible label. */
export function labelTextFor(field: Element, options: { readonly useAriaLabel: boolean }): LabelText {
  if (options.useAriaLabel && hasNonEmpty(field, 'aria-label')) {
    return { text: collapse(field.getAttribute('aria-label')!), source: 'aria-label' };
  }
  const fromPlaceholder = labelFromPlaceholder(field);
  if (fromPlaceholder !== null) return { text: fromPlaceholder, source: 'placeholder' };
  if (hasNonEmpty(field, 'title')) return { text: collapse(field.getAttribute('title')!), source: 'title' };
  const fromName = labelFromIdentifier(field.getAttribute('name')) ?? labelFromIdentifier(field.getAttribute('id'));
  if (fromName !== null) return { text: fromName, source: 'name' };
  return { text: Placeholder.label, source: 'placeholder-todo' };
}

/** The field's id, giving it a deterministic one (from its name, placeholder or label) if it has none. */
export function ensureFieldId(field: Element, labelText: string): string {
  const existing = field.getAttribute('id');
  if (existing !== null && existing.trim() !== '') return existing;
  const name = field.getAttribute('name');
  const value = isToggle(field) ? field.getAttribute('value') : null;
  const seed = [name ?? field.getAttribute('placeholder') ?? labelText, value].filter((s) => s !== null && s !== '').join(' ');
  const base = slugify(seed.startsWith('TODO') ? 'field' : seed);
  const id = uniqueId(field.ownerDocument, base === '' ? 'field' : base);
  field.setAttribute('id', id);
  return id;
}

/** Inserts a new <label for> next to the field: before it, or after a checkbox or radio button. */
export function insertLabel(field: Element, text: string): Element {
  const doc = field.ownerDocument;
  const id = ensureFieldId(field, text);
  const label = doc.createElement('label');
  label.setAttribute('for', id);
  noteLabel(label);
  label.textContent = text;
  if (isToggle(field)) field.after(doc.createTextNode(' '), label);
  else field.before(label, doc.createTextNode(' '));
  return label;
}

/** For 4.1.2: no name at all, not even from title or placeholder. */
export function hasNoAccessibleName(field: Element): boolean {
  return accessibleName(field) === '';
}
