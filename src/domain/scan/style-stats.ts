/**
 * Style statistics of a checked page, for brand scoring: which text colours sit on which
 * backgrounds, which fonts text uses, and which classes and custom properties occur.
 *
 * jsdom has no layout, but its getComputedStyle resolves the cascade of the page's own <style>
 * sheets and style attributes (linked stylesheets are never loaded). Everything here is read from
 * that, once per element, after axe-core has run (its style cache is warm by then).
 */
import { composite, parseColour, toHex, WHITE, type Rgb } from '../fix/colour.js';
import type { ColourPairStat, FontStat, Issue, StyleStats } from './types.js';
import { lookupTable } from '../../ground/lookup-table.js';

export interface StyleLimits {
  /** Text elements analysed per page; later ones are only counted, so huge pages stay cheap. */
  textElements: number;
  /** Colour pairs and fonts kept per page: the most frequent. */
  styleEntries: number;
  /** Classes and custom properties kept per page (most frequent), so a hostile page cannot bloat the result. */
  nameEntries: number;
  /** Distinct issue selectors looked up (about 1 ms each on a big page); issues past it go unattributed. */
  issueLookups: number;
}

export const STYLE_LIMITS: Readonly<StyleLimits> = { textElements: 5000, styleEntries: 200, nameEntries: 2000, issueLookups: 2000 };

/** An issue as matched to its element: axe's selector and, when known, the element's markup. */
export type IssueRef = Pick<Issue, 'selector'> & Partial<Pick<Issue, 'context'>>;

/** The part of a jsdom window this needs. */
export interface StyleWindow {
  document: Document;
  getComputedStyle(element: Element): CSSStyleDeclaration;
}

/** Never rendered, so neither they nor anything inside them is text. */
const NOT_RENDERED = new Set(['head', 'script', 'style', 'noscript', 'template']);

/** What a child needs from its parent: whether it is hidden, and the opaque colour painted behind it. */
interface Paint {
  hidden: boolean;
  bg: Rgb;
}

export function collectStyleStats(
  window: StyleWindow,
  issues: readonly IssueRef[],
  limits: Readonly<StyleLimits> = STYLE_LIMITS,
): StyleStats {
  const { document } = window;
  const pairs = new Map<string, ColourPairStat>();
  const fonts = new Map<string, FontStat>();
  const classes = new Map<string, number>();
  let textElements = 0;
  let skippedTextElements = 0;

  // Depth-first in document order, with an explicit stack: deeply nested markup must not overflow.
  const root = document.documentElement;
  const stack: { element: Element; parent: Paint }[] = root ? [{ element: root, parent: { hidden: false, bg: WHITE } }] : [];
  while (stack.length > 0) {
    const { element, parent } = stack.pop()!;
    countClasses(element, classes);
    if (NOT_RENDERED.has(element.localName)) {
      countClassesBelow(element, classes);
      continue;
    }
    const ownText = hasOwnText(element);
    const hidden = parent.hidden || hiddenByMarkup(element);
    let paint: Paint = { hidden, bg: parent.bg };
    if (textElements >= limits.textElements) {
      // Past the cap no style is computed at all: what remains is only counted.
      if (ownText && !hidden) skippedTextElements++;
    } else if (!hidden && (ownText || element.firstElementChild !== null)) {
      // A childless element without text (img, input, br) has nothing to paint text on: no style needed.
      const style = computedStyle(window, element);
      if (style !== null) paint = { hidden: style.display === 'none', bg: paintedBackground(style, parent.bg) };
      if (style !== null && ownText && !paint.hidden && !invisible(style)) {
        textElements++;
        recordText(style, paint.bg, pairs, fonts);
      }
    }
    const children: Element[] = [];
    for (let child = element.firstElementChild; child; child = child.nextElementSibling) children.push(child);
    for (let i = children.length - 1; i >= 0; i--) stack.push({ element: children[i]!, parent: paint });
  }

  return {
    colourPairs: mostFrequent(pairs, limits.styleEntries),
    fonts: mostFrequent(fonts, limits.styleEntries),
    ...nameCounts(classes, customPropertyDeclarations(document), classesWithIssues(document, issues, limits.issueLookups), limits.nameEntries),
    textElements,
    skippedTextElements,
  };
}

/** Statistics of a page with nothing to count (or whose counting failed). */
export function emptyStyleStats(): StyleStats {
  return { colourPairs: [], fonts: [], classes: {}, customProperties: {}, classesWithIssues: {}, textElements: 0, skippedTextElements: 0 };
}

/** Each class once per element, even when the attribute repeats it. */
function countClasses(element: Element, classes: Map<string, number>): void {
  for (const name of new Set(element.classList)) classes.set(name, (classes.get(name) ?? 0) + 1);
}

/** Classes inside a subtree the walk does not enter (noscript's markup...): still classes in use. */
function countClassesBelow(element: Element, classes: Map<string, number>): void {
  for (const inner of Array.from(element.querySelectorAll('[class]'))) countClasses(inner, classes);
}

/**
 * jsdom's getComputedStyle throws on elements without a style attribute API (MathML, unknown
 * namespaces); those, and any other failure, give no style: such an element is passed through.
 */
function computedStyle(window: StyleWindow, element: Element): CSSStyleDeclaration | null {
  if ((element as Partial<ElementCSSInlineStyle>).style === undefined) return null;
  try {
    return window.getComputedStyle(element);
  } catch {
    return null;
  }
}

function hiddenByMarkup(element: Element): boolean {
  return element.hasAttribute('hidden') || element.getAttribute('aria-hidden')?.trim().toLowerCase() === 'true';
}

/** visibility is inherited but a child may override it, so it hides this element's text only, not its subtree. */
function invisible(style: CSSStyleDeclaration): boolean {
  return style.visibility === 'hidden' || style.visibility === 'collapse';
}

function hasOwnText(element: Element): boolean {
  for (let node = element.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === 3 && /\S/.test(node.nodeValue ?? '')) return true;
  }
  return false;
}

function recordText(style: CSSStyleDeclaration, bg: Rgb, pairs: Map<string, ColourPairStat>, fonts: Map<string, FontStat>): void {
  const sizePx = fontSizePx(resolveVars(style.fontSize, style));
  const bold = isBold(resolveVars(style.fontWeight, style));
  const family = firstFamily(resolveVars(style.fontFamily, style));
  const fontKey = `${family}|${sizePx}|${bold ? 'b' : ''}`;
  const font = fonts.get(fontKey);
  if (font) font.count++;
  else fonts.set(fontKey, { family, sizePx, bold, count: 1 });

  const colour = parseColour(resolveVars(style.color, style));
  if (colour === null) return; // color-mix(), unresolvable var(): no pair rather than a wrong one
  const fg = toHex(colour.a < 1 ? composite(colour, bg) : colour);
  const bgHex = toHex(bg);
  const large = isLargeText(sizePx, bold);
  const pairKey = `${fg}${bgHex}${large ? 'L' : ''}`;
  const pair = pairs.get(pairKey);
  if (pair) pair.count++;
  else pairs.set(pairKey, { fg, bg: bgHex, large, count: 1 });
}

/**
 * The opaque colour behind an element: its own background-color when opaque; a translucent one is
 * blended over the parent's, as a browser paints it; a transparent (alpha 0) or unparseable one
 * shows the parent's. The page itself is white. Background images, gradients and `opacity` are ignored.
 */
function paintedBackground(style: CSSStyleDeclaration, behind: Rgb): Rgb {
  const own = parseColour(resolveVars(style.backgroundColor, style));
  if (own === null || own.a === 0) return behind;
  return own.a < 1 ? composite(own, behind) : own;
}

/** WCAG 2 "large scale" text: 18pt (24px), or 14pt (18.66px) and bold. */
export function isLargeText(sizePx: number, bold: boolean): boolean {
  return sizePx >= 24 || (sizePx >= 18.66 && bold);
}

export function isBold(weight: string): boolean {
  const w = weight.trim().toLowerCase();
  if (w === 'bold' || w === 'bolder') return true; // bolder: jsdom's <b>/<strong> default, bold over normal text
  const n = Number(w);
  return Number.isFinite(n) && n >= 700;
}

const MEDIUM_PX = 16;

/** CSS Fonts 4 absolute-size keywords: scaling factors 3/5 ... 3/1 of medium (16px). */
const KEYWORD_PX = lookupTable({
  'xx-small': (MEDIUM_PX * 3) / 5,
  'x-small': (MEDIUM_PX * 3) / 4,
  small: (MEDIUM_PX * 8) / 9,
  medium: MEDIUM_PX,
  large: (MEDIUM_PX * 6) / 5,
  'x-large': (MEDIUM_PX * 3) / 2,
  'xx-large': MEDIUM_PX * 2,
  'xxx-large': MEDIUM_PX * 3,
  // Relative keywords, taken against medium like em (one step of 1.2).
  smaller: MEDIUM_PX / 1.2,
  larger: MEDIUM_PX * 1.2,
});

const UNIT_PX = lookupTable({
  px: 1,
  pt: 96 / 72,
  pc: 16,
  in: 96,
  cm: 96 / 2.54,
  mm: 96 / 25.4,
  q: 96 / 101.6,
  // jsdom passes relative sizes through unresolved (and children inherit them as written), so
  // em, rem and % are taken against 16px, the default root size; ex and ch as half an em.
  em: MEDIUM_PX,
  rem: MEDIUM_PX,
  '%': MEDIUM_PX / 100,
  ex: MEDIUM_PX / 2,
  ch: MEDIUM_PX / 2,
});

/** A computed font-size in px, two decimals; anything unresolvable (calc(), vw...) counts as medium. */
export function fontSizePx(value: string): number {
  const v = value.trim().toLowerCase();
  const keyword = KEYWORD_PX[v];
  if (keyword !== undefined) return round2(keyword);
  const m = /^(\d*\.?\d+(?:e[+-]?\d+)?)(px|pt|pc|in|cm|mm|q|em|rem|%|ex|ch)$/.exec(v);
  if (m === null) return MEDIUM_PX;
  return round2(Number(m[1]) * UNIT_PX[m[2]!]!);
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

/**
 * The first family of a font-family list, unquoted, lower-case. jsdom reports "depends on user
 * agent" when nothing sets a family; browsers then use their default, a serif face.
 */
export function firstFamily(value: string): string {
  const v = value.trim();
  if (v === '' || v === 'depends on user agent') return 'serif';
  const m = /^\s*(?:"([^"]*)"|'([^']*)'|([^,]*))/.exec(v)!;
  return (m[1] ?? m[2] ?? m[3] ?? '').trim().replace(/\s+/g, ' ').toLowerCase() || 'serif';
}

/** jsdom leaves var() unresolved in computed values; custom properties themselves are inherited, so look them up. */
export function resolveVars(value: string, style: Pick<CSSStyleDeclaration, 'getPropertyValue'>, depth = 0): string {
  const start = value.indexOf('var(');
  if (start < 0) return value;
  if (depth > 8) return ''; // a reference cycle, or absurd nesting
  let level = 0;
  let comma = -1;
  let end = -1;
  for (let i = start + 4; i < value.length && end < 0; i++) {
    const c = value[i];
    if (c === '(') level++;
    else if (c === ')') {
      if (level === 0) end = i;
      else level--;
    } else if (c === ',' && level === 0 && comma < 0) comma = i;
  }
  if (end < 0) return '';
  const name = value.slice(start + 4, comma < 0 ? end : comma).trim();
  const own = name.startsWith('--') ? style.getPropertyValue(name).trim() : '';
  const replacement = own !== '' ? own : comma < 0 ? '' : value.slice(comma + 1, end).trim();
  return resolveVars(value.slice(0, start) + resolveVars(replacement, style, depth + 1) + value.slice(end + 1), style, depth + 1);
}

/** Every --name: declaration in the page's <style> sheets (nested @media/@supports too) and style attributes. */
function customPropertyDeclarations(document: Document): Map<string, number> {
  const counts = new Map<string, number>();
  const countIn = (style: CSSStyleDeclaration) => {
    for (let i = 0; i < style.length; i++) {
      const name = style.item(i);
      if (name.startsWith('--')) counts.set(name, (counts.get(name) ?? 0) + 1);
    }
  };
  const walk = (rules: CSSRuleList) => {
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i] as CSSRule & { style?: CSSStyleDeclaration; cssRules?: CSSRuleList };
      if (rule.style) countIn(rule.style);
      if (rule.cssRules) walk(rule.cssRules);
    }
  };
  for (let i = 0; i < document.styleSheets.length; i++) {
    try {
      walk(document.styleSheets[i]!.cssRules);
    } catch {
      // An unreadable sheet contributes nothing; the rest still count.
    }
  }
  for (const element of Array.from(document.querySelectorAll('[style]'))) {
    const style = (element as HTMLElement).style as CSSStyleDeclaration | undefined;
    if (style) countIn(style);
  }
  return counts;
}

/**
 * Elements with at least one issue, found by the issue's selector (axe computed it on this very
 * document), and their classes. An element with three issues is still one element, so each class
 * counts at most once per element and never exceeds its count in `classes`.
 */
function classesWithIssues(document: Document, issues: readonly IssueRef[], maxLookups: number): Map<string, number> {
  const elements = new Set<Element>();
  // The context starts with the element's own tag: one without a class attribute needs no lookup.
  const selectors = new Set(issues.filter((issue) => issue.context === undefined || mayHaveClass(issue.context)).map((issue) => issue.selector));
  for (const selector of [...selectors].slice(0, maxLookups)) {
    try {
      // querySelectorAll(...)[0] is querySelector's answer, but jsdom's selector engine finds it
      // over ten times faster (1 ms instead of 15 ms a selector on a 10,000-element page).
      const element = document.querySelectorAll(selector).item(0);
      if (element) elements.add(element);
    } catch {
      // Selectors through shadow roots or frames (a >>> b) are not CSS; such an issue matches no element.
    }
  }
  const counts = new Map<string, number>();
  for (const element of elements) countClasses(element, counts);
  return counts;
}

/** Whether markup's first tag may carry a class attribute; a tag cut short (contexts are truncated) may. */
export function mayHaveClass(markup: string): boolean {
  let quote = '';
  for (let i = 0; i < markup.length; i++) {
    const c = markup[i]!;
    if (quote !== '') {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') return /\sclass\s*=/i.test(markup.slice(0, i).replace(/"[^"]*"|'[^']*'/g, '""'));
  }
  return true;
}

/** The capped records; classesWithIssues keeps only classes still listed, so the two stay comparable. */
function nameCounts(classes: Map<string, number>, customProperties: Map<string, number>, withIssues: Map<string, number>, max: number) {
  const keptClasses = topCounts(classes, max);
  const keptWithIssues = new Map([...withIssues].filter(([name]) => Object.hasOwn(keptClasses, name)));
  return {
    classes: keptClasses,
    customProperties: topCounts(customProperties, max),
    classesWithIssues: topCounts(keptWithIssues, max),
  };
}

/** Most frequent first, ties by name, so the result is deterministic. fromEntries makes own keys, "__proto__" included. */
function topCounts(counts: Map<string, number>, max: number): Record<string, number> {
  const entries = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return Object.fromEntries(entries.slice(0, max));
}

/** The most frequent entries of a keyed tally, ties by key, so the result is deterministic. */
function mostFrequent<T extends { count: number }>(tally: Map<string, T>, max: number): T[] {
  const entries = [...tally].sort((a, b) => b[1].count - a[1].count || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return entries.slice(0, max).map(([, item]) => item);
}
