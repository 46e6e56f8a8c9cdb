/**
 * 4.1.2 Name, Role, Value: controls without a name get one (from their icon when it is recognisable),
 * custom widgets get the state attributes their role requires, frames get a title, and fields without
 * any accessible name get a label.
 */
import { accessibleName, classTokens, collapse, contentText, elementsOf, isHiddenFromAssistiveTech, plural, roleOf, tagOf } from '../dom.js';
import { draftWithFixers, fixersFor, type Finding, type Fixer } from '../drafting.js';
import { hasNoAccessibleName } from '../form-labels.js';
import { iconHint } from '../icon-hints.js';
import { hrefHint } from '../link-hints.js';
import type { Markup } from '../markup.js';
import { Placeholder, type FixInput, type FixResult, type Recipe } from '../model.js';
import { Tally } from '../tally.js';
import { labelUnlabelledFields } from './labels.js';

// ---- names of buttons and links -------------------------------------------------------------

const CONTROLS = 'button, input, [role="button"], a[href], [role="link"], summary';
const INPUT_CONTROLS = new Set(['button', 'submit', 'reset']);
// (Not the selector input[type="button" i]: jsdom's engine keeps every document it tested that on.)
const isControl = (el: Element) => tagOf(el) !== 'input' || INPUT_CONTROLS.has((el.getAttribute('type') ?? '').toLowerCase()) || el.matches('[role="button"], [role="link"]');

/** Icon fonts and unnamed SVGs inside a now-named control would be read as noise. */
function hideIcons(control: Element): void {
  for (const icon of elementsOf(control, 'i, span, svg')) {
    if (icon.getAttribute('aria-hidden') === 'true' || (collapse(contentText(icon)) !== '' && tagOf(icon) !== 'svg')) continue;
    const looksLikeIcon = tagOf(icon) === 'svg' || classTokens(icon).some((c) => /icon|^fa|glyph|material|bi-|ti-|feather|lucide/i.test(c));
    if (looksLikeIcon && accessibleName(icon) === '') icon.setAttribute('aria-hidden', 'true');
  }
}

function fixNamelessControls(markup: Markup): Finding | null {
  const tally = new Tally();
  const placeholders: string[] = [];
  const guesses: string[] = [];
  for (const control of elementsOf(markup.document, CONTROLS).filter(isControl)) {
    if (isHiddenFromAssistiveTech(control) || accessibleName(control) !== '') continue;
    const isLink = tagOf(control) === 'a' || roleOf(control) === 'link';
    const hint = iconHint(control) ?? (isLink ? hrefHint(control.getAttribute('href')) : null);
    const text = hint ?? (isLink ? Placeholder.linkTarget : Placeholder.buttonAction);
    if (tagOf(control) === 'input') control.setAttribute('value', text);
    else {
      control.setAttribute('aria-label', text);
      hideIcons(control);
    }
    if (hint === null) placeholders.push(text);
    else guesses.push(hint);
    tally.add(hint === null ? 'a name placeholder on' : 'a name taken from its icon on', isLink ? 'link' : 'button');
  }
  if (tally.total === 0) return null;
  return {
    count: tally.total,
    headline: `names for ${plural(tally.total, 'control')}`,
    restructured: false,
    summary: `Controls had no accessible name (icon only or empty), so screen readers announced just "button" or "link": added ${tally.describe()}${guesses.length > 0 ? ` (${guesses.map((g) => `"${g}"`).join(', ')})` : ''}`,
    check: guesses.length > 0
      ? 'Check that the names guessed from the icons match what the controls really do.'
      : 'Name each control after what it does or where it goes.',
    placeholders,
  };
}

// ---- required states -------------------------------------------------------------------------

const ON_CLASSES = /^(is-)?(checked|active|selected|on|enabled|open|expanded|show|current|pressed)$/i;

function classSaysOn(el: Element): boolean {
  if (classTokens(el).some((c) => ON_CLASSES.test(c))) return true;
  const state = (el.getAttribute('data-state') ?? el.getAttribute('data-checked') ?? '').toLowerCase();
  return ['checked', 'on', 'true', 'active', 'open', 'selected'].includes(state);
}

/** Whether the element a toggle controls is currently shown, when it is in the snippet. */
function controlledIsOpen(el: Element): boolean | null {
  const ids = (el.getAttribute('aria-controls') ?? el.getAttribute('data-target') ?? el.getAttribute('data-bs-target') ?? '').replace(/^#/, '').split(/\s+/);
  const target = ids[0] ? el.ownerDocument.getElementById(ids[0]) : null;
  if (target === null) return null;
  if (target.hasAttribute('hidden') || /display\s*:\s*none/i.test(target.getAttribute('style') ?? '')) return false;
  const classes = classTokens(target);
  if (classes.some((c) => /^(hidden|is-hidden|d-none|sr-only)$/i.test(c))) return false;
  if (classes.includes('collapse')) return classes.includes('show');
  return true;
}

interface StateRule {
  readonly roles: readonly string[];
  readonly attribute: string;
  readonly value: (el: Element) => string;
}

function numberIn(el: Element): string {
  const candidates = [el.getAttribute('data-value'), el.getAttribute('value'), collapse(el.textContent ?? '')];
  for (const c of candidates) {
    if (c !== null && /^-?\d+(\.\d+)?$/.test(c.trim())) return c.trim();
  }
  return el.getAttribute('aria-valuemin') ?? '0';
}

const STATE_RULES: readonly StateRule[] = [
  { roles: ['checkbox', 'switch', 'radio', 'menuitemcheckbox', 'menuitemradio'], attribute: 'aria-checked', value: (el) => String(classSaysOn(el)) },
  { roles: ['tab', 'option'], attribute: 'aria-selected', value: (el) => String(classSaysOn(el) || el.getAttribute('aria-current') === 'true') },
  { roles: ['combobox'], attribute: 'aria-expanded', value: (el) => String(classSaysOn(el)) },
  { roles: ['slider', 'scrollbar', 'meter'], attribute: 'aria-valuenow', value: numberIn },
  { roles: ['heading'], attribute: 'aria-level', value: () => '2' },
];

// Disclosure buttons: things that open and close something else.
const TOGGLE_HINT = /toggle|dropdown|accordion|collapse|collaps|disclosure|hamburger|menu-button|navbar-toggler|expand|burger/i;

function isDisclosure(el: Element): boolean {
  if (el.hasAttribute('aria-expanded')) return false;
  const isButton = tagOf(el) === 'button' || roleOf(el) === 'button';
  if (!isButton) return false;
  return (
    el.hasAttribute('aria-controls') ||
    ['data-toggle', 'data-bs-toggle'].some((a) => el.hasAttribute(a)) ||
    classTokens(el).some((c) => TOGGLE_HINT.test(c))
  );
}

function fixMissingStates(markup: Markup): Finding | null {
  const tally = new Tally();
  const added: string[] = [];
  for (const el of elementsOf(markup.document, '[role]')) {
    const role = roleOf(el);
    for (const rule of STATE_RULES) {
      if (!rule.roles.includes(role) || el.hasAttribute(rule.attribute)) continue;
      // A native control already exposes its own state.
      if (tagOf(el) === 'input' && rule.attribute === 'aria-checked') continue;
      const value = rule.value(el);
      el.setAttribute(rule.attribute, value);
      added.push(`${rule.attribute}="${value}"`);
      tally.add(`${rule.attribute} on`, `role="${role}" element`);
    }
  }
  for (const el of elementsOf(markup.document, 'button, [role="button"]')) {
    if (!isDisclosure(el)) continue;
    const open = controlledIsOpen(el) ?? classSaysOn(el);
    el.setAttribute('aria-expanded', String(open));
    added.push(`aria-expanded="${open}"`);
    tally.add('aria-expanded on', 'toggle button');
  }
  if (tally.total === 0) return null;
  return {
    count: tally.total,
    headline: `${plural(tally.total, 'state attribute')} added`,
    restructured: false,
    summary: `Custom controls did not expose their state, so assistive technology could not tell whether they were on, selected or open: added ${tally.describe()} (initial values read from their classes)`,
    check: 'Check the initial values, and make sure the scripts update these attributes whenever the state changes.',
    placeholders: [],
  };
}

// ---- frames ------------------------------------------------------------------------------------

function fixFrameTitles(markup: Markup): Finding | null {
  let count = 0;
  for (const frame of elementsOf(markup.document, 'iframe, frame')) {
    if ((frame.getAttribute('title') ?? '').trim() !== '' || (frame.getAttribute('aria-label') ?? '').trim() !== '') continue;
    frame.setAttribute('title', Placeholder.frame);
    count++;
  }
  if (count === 0) return null;
  return {
    count,
    headline: `titles for ${plural(count, 'frame')}`,
    restructured: false,
    summary: `${count === 1 ? 'A frame had' : `${count} frames had`} no title, so screen-reader users could not tell what it contains before entering it: added title="${Placeholder.frame}"`,
    check: `Replace "${Placeholder.frame}" with a short description such as "Map of our office" or "Video: product tour".`,
    placeholders: [Placeholder.frame],
  };
}

// ---- form fields ------------------------------------------------------------------------------

function fixNamelessFields(markup: Markup): Finding | null {
  const { labels, placeholders } = labelUnlabelledFields(markup, { needsLabel: hasNoAccessibleName, useAriaLabel: false });
  if (labels.length === 0) return null;
  return {
    count: labels.length,
    headline: `labels for ${plural(labels.length, 'unnamed field')}`,
    restructured: false,
    summary:
      labels.length === 1
        ? `A form field had no accessible name, so screen readers announced only its type: added <label for> "${labels[0]}"`
        : `${labels.length} form fields had no accessible name, so screen readers announced only their type: added a <label for> to each`,
    check: placeholders.length > 0 ? `Replace "${Placeholder.label}" with what the field asks for.` : 'Check that each label says what the field asks for.',
    placeholders,
  };
}

const FAMILIES = [
  { key: 'frames', matches: /frame/i, fixers: [fixFrameTitles] },
  { key: 'states', matches: /aria-(checked|selected|expanded|valuenow|level)|required (aria )?attr|\bstates?\b|checked|selected|expanded/i, fixers: [fixMissingStates] },
  { key: 'fields', matches: /label|form (field|element)|select element|input|textarea/i, fixers: [fixNamelessFields] },
  // "accessible name" also appears in frame and field messages, which their own families handle.
  { key: 'names', matches: /button|link|discernible|^(?!.*(frame|select|input|textarea|form)).*\bname\b/i, fixers: [fixNamelessControls] },
] as const satisfies ReadonlyArray<{ key: string; matches: RegExp; fixers: readonly Fixer[] }>;

export const nameRoleValue: Recipe = {
  criteria: ['4.1.2'],
  draft(input: FixInput): FixResult {
    return draftWithFixers(
      input,
      fixersFor(input.issueMessage, FAMILIES),
      'No control without a name, widget without its required state, untitled frame or unnamed field was found in the snippet; check the reported element in the live page.',
    );
  },
};
