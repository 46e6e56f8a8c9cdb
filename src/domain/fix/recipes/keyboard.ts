/**
 * 2.1.1 Keyboard: things that react to clicks but cannot be reached or used with a keyboard.
 * Simple controls become native elements (<button type="button">, or <a href> when the handler only
 * navigates); everything else becomes focusable with a role and an Enter/Space key handler.
 */
import { childNodesOf, closestWhere, collapse, containsInteractive, contentText, elementsOf, firstWithin, isKeyboardFocusable, plural, retag, roleOf, tagIn, tagOf } from '../dom.js';
import { draftWithFixers, type Finding } from '../drafting.js';
import { iconHint } from '../icon-hints.js';
import type { Markup } from '../markup.js';
import { Placeholder, type FixInput, type FixResult, type Recipe } from '../model.js';
import { Tally } from '../tally.js';

const INTERACTIVE_ROLES = new Set([
  'button', 'link', 'checkbox', 'radio', 'switch', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'treeitem', 'slider', 'spinbutton',
]);
// Elements that can simply be renamed to <button> without breaking their parent's content model.
const RETAGGABLE = new Set(['div', 'span', 'a', 'i', 'b', 'strong', 'em', 'font', 'small', 'p', 'label']);
const BLOCK_DESCENDANTS = 'p, div, ul, ol, dl, table, h1, h2, h3, h4, h5, h6, section, article, form, blockquote, figure, header, footer, nav';
const MAX_CONTROL_TEXT = 100;
// Items whose parent requires them as they are: a role on them would break the list or table.
const STRUCTURAL = new Set(['li', 'td', 'th', 'dt', 'dd', 'tr']);
const NEVER = new Set(['html', 'body', 'head', 'form', 'option', 'optgroup', 'label', 'main', 'video', 'audio']);
const FIELDS = tagIn('button', 'input', 'select', 'textarea', 'summary');
/** a[href], button, input, select, textarea, summary, [tabindex] */
const focusable = (el: Element) => FIELDS(el) || (tagOf(el) === 'a' && el.hasAttribute('href')) || el.hasAttribute('tabindex');
const buttonOrLink = tagIn('button', 'a');

export const KEY_HANDLER_ENTER_SPACE = "if(event.key==='Enter'||event.key===' '){event.preventDefault();this.click();}";
export const KEY_HANDLER_ENTER = "if(event.key==='Enter'){event.preventDefault();this.click();}";

/** A literal URL the click handler navigates to ("location.href='/contact'"), or null. */
export function navigationTarget(onclick: string | null): string | null {
  if (onclick === null) return null;
  const script = onclick.trim().replace(/;?\s*(return\s+false\s*;?\s*)?$/, '');
  const m =
    /^(?:(?:window|document|top|self)\.)?location(?:\.href)?\s*=\s*(['"])([^'"]+)\1$/.exec(script) ??
    /^(?:(?:window|document)\.)?location\.(?:assign|replace)\(\s*(['"])([^'"]+)\1\s*\)$/.exec(script);
  return m === null ? null : m[2]!;
}

function needsKeyboardAccess(el: Element): boolean {
  const tag = tagOf(el);
  if (NEVER.has(tag) || isKeyboardFocusable(el)) return false;
  const clickable = el.hasAttribute('onclick') || INTERACTIVE_ROLES.has(roleOf(el));
  if (!clickable) return false;
  // A click on a child of a real control reaches the control; the control is what gets focus.
  return closestWhere(el.parentElement, focusable) === null;
}

function isSimpleControl(el: Element): boolean {
  const role = roleOf(el);
  if (role !== '' && role !== 'button' && role !== 'link') return false;
  if (firstWithin(el, BLOCK_DESCENDANTS) !== null || containsInteractive(el)) return false;
  return collapse(contentText(el)).length <= MAX_CONTROL_TEXT;
}

const DROP_ON_BUTTON = new Set(['role', 'tabindex', 'href', 'onkeydown', 'onkeypress', 'onkeyup']);

interface Outcome {
  readonly placeholders: string[];
}

/** Gives a control without text a name from its icon, so the fix does not trade one failure for another. */
function nameIfEmpty(control: Element, fallback: string, outcome: Outcome): void {
  if (collapse(contentText(control)) !== '' || (control.getAttribute('aria-label') ?? '').trim() !== '') return;
  const hint = iconHint(control);
  control.setAttribute('aria-label', hint ?? fallback);
  if (hint === null) outcome.placeholders.push(fallback);
}

function toButton(el: Element, outcome: Outcome): Element {
  const button = retag(el, 'button', (name) => !DROP_ON_BUTTON.has(name));
  // type first: without it a button inside a form would submit the form.
  const attrs = Array.from(button.attributes, (a) => [a.name, a.value] as const);
  attrs.forEach(([name]) => button.removeAttribute(name));
  button.setAttribute('type', 'button');
  attrs.forEach(([name, value]) => button.setAttribute(name, value));
  nameIfEmpty(button, Placeholder.buttonAction, outcome);
  return button;
}

function toLink(el: Element, href: string, outcome: Outcome): Element {
  const drop = new Set(['role', 'tabindex', 'onclick', 'onkeydown', 'onkeypress', 'onkeyup']);
  const link = tagOf(el) === 'a' ? el : retag(el, 'a', (name) => !drop.has(name));
  for (const name of drop) link.removeAttribute(name);
  link.setAttribute('href', href);
  nameIfEmpty(link, Placeholder.linkTarget, outcome);
  return link;
}

/** <img onclick>: the image goes inside a real button, which takes over the handler. */
function wrapImageInButton(img: Element, outcome: Outcome): Element {
  const doc = img.ownerDocument;
  const button = doc.createElement('button');
  button.setAttribute('type', 'button');
  const handler = img.getAttribute('onclick');
  if (handler !== null) button.setAttribute('onclick', handler);
  for (const name of ['onclick', 'role', 'tabindex']) img.removeAttribute(name);
  if ((img.getAttribute('alt') ?? '').trim() === '') {
    const hint = iconHint(img);
    img.setAttribute('alt', hint ?? Placeholder.buttonAction);
    if (hint === null) outcome.placeholders.push(Placeholder.buttonAction);
  }
  img.replaceWith(button);
  button.appendChild(img);
  return button;
}

/**
 * <li onclick>: a role on the item would break the list (or table) it belongs to, so a button inside
 * it takes over the content and the handler.
 */
function buttonInside(el: Element, outcome: Outcome): Element {
  const doc = el.ownerDocument;
  const button = doc.createElement('button');
  button.setAttribute('type', 'button');
  const handler = el.getAttribute('onclick');
  if (handler !== null) button.setAttribute('onclick', handler);
  el.removeAttribute('onclick');
  button.append(...childNodesOf(el));
  el.appendChild(button);
  nameIfEmpty(button, Placeholder.buttonAction, outcome);
  return button;
}

function makeFocusable(el: Element, navigates: boolean): void {
  el.setAttribute('tabindex', '0');
  if (roleOf(el) === '' && !STRUCTURAL.has(tagOf(el))) el.setAttribute('role', navigates ? 'link' : 'button');
  const hasKeyHandler = ['onkeydown', 'onkeyup', 'onkeypress'].some((h) => el.hasAttribute(h));
  if (!hasKeyHandler) el.setAttribute('onkeydown', roleOf(el) === 'link' ? KEY_HANDLER_ENTER : KEY_HANDLER_ENTER_SPACE);
}

function fixKeyboardAccess(markup: Markup): Finding | null {
  const tally = new Tally();
  const outcome: Outcome = { placeholders: [] };
  const targets = elementsOf(markup.document, '[onclick], [role]').filter(needsKeyboardAccess);
  for (const el of targets) {
    if (!el.isConnected) continue;
    const tag = tagOf(el);
    const href = navigationTarget(el.getAttribute('onclick'));
    if (href !== null && (tag === 'a' || (RETAGGABLE.has(tag) && isSimpleControl(el)))) {
      toLink(el, href, outcome);
      tally.add('', `element that only navigated became an <a href>`, 'elements that only navigated became <a href> links');
    } else if (RETAGGABLE.has(tag) && isSimpleControl(el) && closestWhere(el.parentElement, buttonOrLink) === null) {
      toButton(el, outcome);
      tally.add('', `<${tag}> became a <button type="button">`, `<${tag}> elements became <button type="button">`);
    } else if (STRUCTURAL.has(tag) && roleOf(el) === '' && el.hasAttribute('onclick') && isSimpleControl(el)) {
      buttonInside(el, outcome);
      tally.add('', `<${tag}> got a <button type="button"> inside that took over its content and handler`, `<${tag}> elements got a <button type="button"> inside that took over their content and handler`);
    } else if (tag === 'img' && el.hasAttribute('onclick')) {
      wrapImageInButton(el, outcome);
      tally.add('', 'clickable image was wrapped in a <button>', 'clickable images were wrapped in <button> elements');
    } else {
      makeFocusable(el, href !== null);
      tally.add('', `<${tag}> got tabindex="0", a role and an Enter/Space key handler`, `<${tag}> elements got tabindex="0", a role and an Enter/Space key handler`);
    }
  }
  if (tally.total === 0) return null;
  return {
    count: tally.total,
    headline: `keyboard access for ${plural(tally.total, 'control')}`,
    restructured: true,
    summary: `${tally.total === 1 ? 'An element reacted' : `${tally.total} elements reacted`} to mouse clicks but could not be reached or used with the keyboard: ${tally.describe()}`,
    check: 'Check that the changed controls still look the same (reset default button styles if needed), that scripts selecting the old elements still find them, and that focus is visible.',
    placeholders: outcome.placeholders,
  };
}

export const keyboard: Recipe = {
  criteria: ['2.1.1'],
  draft(input: FixInput): FixResult {
    return draftWithFixers(
      input,
      [fixKeyboardAccess],
      'No clickable element without keyboard access (onclick or an interactive role without focusability) was found in the snippet; handlers attached by script need a manual check.',
    );
  },
};
