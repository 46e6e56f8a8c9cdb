/**
 * Just enough CSS reading for contrast fixes: declarations with their positions, so a fix can
 * replace one colour value and leave every other byte of the stylesheet alone.
 */
import { parseColour, type Rgb } from './colour.js';
import { lookupTable } from '../../ground/lookup-table.js';

export interface Declaration {
  readonly property: string;
  /** The value without `!important`, trimmed. */
  readonly value: string;
  /** Where `value` sits in the text that was parsed. */
  readonly valueStart: number;
  readonly selector: string | null;
  /** Declared under :hover, :focus and the like, which is not the resting state the scanner measured. */
  readonly stateful: boolean;
}

const STATE = /:(hover|focus|focus-within|focus-visible|active|visited|disabled|checked)\b/i;

function blankComments(css: string): string {
  return css.replace(/\/\*[\s\S]*?\*\//g, (c) => ' '.repeat(c.length));
}

function declarationsIn(body: string, offset: number, selector: string | null, out: Declaration[]): void {
  let start = 0;
  for (const part of body.split(';')) {
    const m = /^(\s*)([-a-zA-Z]+)(\s*:\s*)/.exec(part);
    if (m !== null) {
      const rawValue = part.slice(m[0].length);
      const important = /\s*!\s*important\s*$/i.exec(rawValue);
      const withoutImportant = important === null ? rawValue : rawValue.slice(0, important.index);
      const value = withoutImportant.trim();
      out.push({
        property: m[2]!.toLowerCase(),
        value,
        valueStart: offset + start + m[0].length + (withoutImportant.length - withoutImportant.trimStart().length),
        selector,
        stateful: selector !== null && STATE.test(selector),
      });
    }
    start += part.length + 1;
  }
}

/** Declarations of a stylesheet ("a { color: red }") or of a bare declaration list ("color: red"), in order. */
export function parseDeclarations(css: string): Declaration[] {
  const text = blankComments(css);
  const out: Declaration[] = [];
  if (!text.includes('{')) {
    declarationsIn(text, 0, null, out);
    return out;
  }
  // Innermost blocks only, so rules inside @media are read too.
  for (const m of text.matchAll(/([^{}]*)\{([^{}]*)\}/g)) {
    const bodyStart = m.index + m[1]!.length + 1;
    declarationsIn(m[2]!, bodyStart, m[1]!.trim(), out);
  }
  return out;
}

/** The last declaration of a property, preferring the resting state over :hover and friends. */
export function winningDeclaration(decls: readonly Declaration[], properties: readonly string[]): Declaration | null {
  const matching = decls.filter((d) => properties.includes(d.property) && colourTokenIn(d.value) !== null);
  const resting = matching.filter((d) => !d.stateful);
  return (resting.length > 0 ? resting : matching).at(-1) ?? null;
}

export interface ColourToken {
  readonly colour: Rgb;
  readonly start: number;
  readonly end: number;
}

/** The first colour in a value such as "1px solid #ccc" or "url(x.png) no-repeat rgb(0 0 0 / 50%)". */
export function colourTokenIn(value: string): ColourToken | null {
  const token = /#[0-9a-fA-F]{3,8}\b|(?:rgba?|hsla?)\([^)]*\)|\b[a-zA-Z]+\b/g;
  let depth = 0;
  let last = 0;
  for (const m of value.matchAll(token)) {
    // Skip words inside url(...) or var(...): they are not colours.
    for (const ch of value.slice(last, m.index)) depth += ch === '(' ? 1 : ch === ')' ? -1 : 0;
    last = m.index;
    if (depth > 0) continue;
    const colour = parseColour(m[0]);
    if (colour !== null && m[0].toLowerCase() !== 'transparent') return { colour, start: m.index, end: m.index + m[0].length };
  }
  return null;
}

/** Replaces the colour in one declaration of `text`, leaving everything else as it was. */
export function replaceColour(text: string, decl: Declaration, hex: string): string {
  const token = colourTokenIn(decl.value);
  if (token === null) return text;
  const start = decl.valueStart + token.start;
  return text.slice(0, start) + hex + text.slice(decl.valueStart + token.end);
}

const FONT_SIZE_KEYWORDS = lookupTable({ 'xx-small': 9, 'x-small': 10, small: 13, medium: 16, large: 18, 'x-large': 24, 'xx-large': 32, 'xxx-large': 48 });

/** A font size in CSS pixels, or null for what cannot be resolved without layout. */
export function fontSizeInPx(value: string): number | null {
  const v = value.trim().toLowerCase();
  const keyword = FONT_SIZE_KEYWORDS[v];
  if (keyword !== undefined) return keyword;
  const m = /^([\d.]+)(px|pt|em|rem|%)$/.exec(v);
  if (m === null) return null;
  const n = Number(m[1]);
  // em and % assume the 16px browser default: the snippet does not show the parent's size.
  switch (m[2]) {
    case 'px': return n;
    case 'pt': return (n * 4) / 3;
    case '%': return (n * 16) / 100;
    default: return n * 16;
  }
}

export function isBoldWeight(value: string): boolean {
  const v = value.trim().toLowerCase();
  return v === 'bold' || v === 'bolder' || (/^\d+$/.test(v) && Number(v) >= 700);
}

/** Size and weight out of the `font` shorthand ("bold 24px/1.2 Georgia"). */
export function readFontShorthand(value: string): { size: number | null; bold: boolean } {
  const tokens = value.split(/\s+/);
  const sizeToken = tokens.map((t) => t.split('/')[0]!).find((t) => fontSizeInPx(t) !== null && !/^\d+$/.test(t));
  return { size: sizeToken === undefined ? null : fontSizeInPx(sizeToken), bold: tokens.some(isBoldWeight) };
}
