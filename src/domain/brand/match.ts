/**
 * How page styles are compared with a brand guideline's entries: colours within a small RGB
 * tolerance, font families by name, component tokens by class or custom-property name.
 */
import { parseColour, type Rgb } from '../fix/colour.js';

/**
 * Sites round and re-encode colours (a design tool's #0b5fff becomes #0a5ffe), so a page colour
 * within this Euclidean distance of a brand colour, on 0-255 channels, counts as that colour.
 */
export const COLOUR_TOLERANCE = 8;

/** Parsed opaque brand colours; entries that are not colours are dropped. */
export function brandColours(values: readonly string[]): Rgb[] {
  return values.map((value) => parseColour(value)).filter((c): c is Rgb => c !== null);
}

export function isNearColour(a: Rgb, b: Rgb, tolerance = COLOUR_TOLERANCE): boolean {
  const dr = a.r - b.r;
  const dg = a.g - b.g;
  const db = a.b - b.b;
  return dr * dr + dg * dg + db * db <= tolerance * tolerance;
}

export function isBrandColour(colour: Rgb, brand: readonly Rgb[]): boolean {
  return brand.some((b) => isNearColour(colour, b));
}

/** CSS generic families: fallbacks, never a brand's own face (unless the brand names nothing else). */
const GENERIC_FAMILIES = new Set([
  'serif', 'sans-serif', 'monospace', 'cursive', 'fantasy', 'system-ui', 'emoji', 'math', 'fangsong',
  'ui-serif', 'ui-sans-serif', 'ui-monospace', 'ui-rounded', '-apple-system', 'blinkmacsystemfont',
]);

/** One family name as compared: unquoted, whitespace collapsed, lower-case. */
export function normaliseFamily(name: string): string {
  return name.trim().replace(/^(["'])(.*)\1$/, '$2').trim().replace(/\s+/g, ' ').toLowerCase();
}

/**
 * The names a brand font entry stands for: "Inter, sans-serif" is Inter. Generic fallbacks are
 * ignored, unless they are all there is (a brand may well say its code font is "monospace").
 */
export function brandFamilyNames(family: string): string[] {
  const names = splitFamilies(family).map(normaliseFamily).filter((n) => n !== '');
  const specific = names.filter((n) => !GENERIC_FAMILIES.has(n));
  return specific.length > 0 ? specific : names;
}

/** Splits a font-family list at commas outside quotes. */
function splitFamilies(list: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quote: string | null = null;
  for (const c of list) {
    if (quote !== null) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === ',') {
      parts.push(current);
      current = '';
      continue;
    }
    current += c;
  }
  parts.push(current);
  return parts;
}

/** A class token as it appears in class attributes: ".btn-primary" is btn-primary. */
export function className(token: string): string {
  return token.trim().replace(/^\./, '');
}

/** A custom-property token as declared: "brand-radius" is --brand-radius. */
export function customPropertyName(token: string): string {
  const name = token.trim();
  return name.startsWith('--') ? name : `--${name}`;
}

/** A count from a stats record; own keys only, so a class named "constructor" is not Object's. */
export function countOf(record: Readonly<Record<string, number>>, key: string): number {
  if (!Object.hasOwn(record, key)) return 0;
  const n = record[key];
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0;
}
