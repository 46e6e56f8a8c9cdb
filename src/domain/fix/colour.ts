/**
 * CSS colour parsing and the WCAG 2 contrast arithmetic.
 * Everything here is pure: same colour in, same number or colour out.
 */
import { lookupTable } from '../../ground/lookup-table.js';

/** An sRGB colour: channels 0-255, alpha 0-1. */
export interface Rgb {
  readonly r: number;
  readonly g: number;
  readonly b: number;
  readonly a: number;
}

/** Hue in degrees, saturation and lightness 0-1. */
export interface Hsl {
  readonly h: number;
  readonly s: number;
  readonly l: number;
}

export const BLACK: Rgb = { r: 0, g: 0, b: 0, a: 1 };
export const WHITE: Rgb = { r: 255, g: 255, b: 255, a: 1 };

// The CSS Color 4 named colours; stored compactly as name:hex pairs.
const NAMED = lookupTable(
  Object.fromEntries(
    (
      'aliceblue:f0f8ff antiquewhite:faebd7 aqua:00ffff aquamarine:7fffd4 azure:f0ffff beige:f5f5dc bisque:ffe4c4 ' +
      'black:000000 blanchedalmond:ffebcd blue:0000ff blueviolet:8a2be2 brown:a52a2a burlywood:deb887 cadetblue:5f9ea0 ' +
      'chartreuse:7fff00 chocolate:d2691e coral:ff7f50 cornflowerblue:6495ed cornsilk:fff8dc crimson:dc143c cyan:00ffff ' +
      'darkblue:00008b darkcyan:008b8b darkgoldenrod:b8860b darkgray:a9a9a9 darkgreen:006400 darkgrey:a9a9a9 ' +
      'darkkhaki:bdb76b darkmagenta:8b008b darkolivegreen:556b2f darkorange:ff8c00 darkorchid:9932cc darkred:8b0000 ' +
      'darksalmon:e9967a darkseagreen:8fbc8f darkslateblue:483d8b darkslategray:2f4f4f darkslategrey:2f4f4f ' +
      'darkturquoise:00ced1 darkviolet:9400d3 deeppink:ff1493 deepskyblue:00bfff dimgray:696969 dimgrey:696969 ' +
      'dodgerblue:1e90ff firebrick:b22222 floralwhite:fffaf0 forestgreen:228b22 fuchsia:ff00ff gainsboro:dcdcdc ' +
      'ghostwhite:f8f8ff gold:ffd700 goldenrod:daa520 gray:808080 green:008000 greenyellow:adff2f grey:808080 ' +
      'honeydew:f0fff0 hotpink:ff69b4 indianred:cd5c5c indigo:4b0082 ivory:fffff0 khaki:f0e68c lavender:e6e6fa ' +
      'lavenderblush:fff0f5 lawngreen:7cfc00 lemonchiffon:fffacd lightblue:add8e6 lightcoral:f08080 lightcyan:e0ffff ' +
      'lightgoldenrodyellow:fafad2 lightgray:d3d3d3 lightgreen:90ee90 lightgrey:d3d3d3 lightpink:ffb6c1 ' +
      'lightsalmon:ffa07a lightseagreen:20b2aa lightskyblue:87cefa lightslategray:778899 lightslategrey:778899 ' +
      'lightsteelblue:b0c4de lightyellow:ffffe0 lime:00ff00 limegreen:32cd32 linen:faf0e6 magenta:ff00ff maroon:800000 ' +
      'mediumaquamarine:66cdaa mediumblue:0000cd mediumorchid:ba55d3 mediumpurple:9370db mediumseagreen:3cb371 ' +
      'mediumslateblue:7b68ee mediumspringgreen:00fa9a mediumturquoise:48d1cc mediumvioletred:c71585 ' +
      'midnightblue:191970 mintcream:f5fffa mistyrose:ffe4e1 moccasin:ffe4b5 navajowhite:ffdead navy:000080 ' +
      'oldlace:fdf5e6 olive:808000 olivedrab:6b8e23 orange:ffa500 orangered:ff4500 orchid:da70d6 ' +
      'palegoldenrod:eee8aa palegreen:98fb98 paleturquoise:afeeee palevioletred:db7093 papayawhip:ffefd5 ' +
      'peachpuff:ffdab9 peru:cd853f pink:ffc0cb plum:dda0dd powderblue:b0e0e6 purple:800080 rebeccapurple:663399 ' +
      'red:ff0000 rosybrown:bc8f8f royalblue:4169e1 saddlebrown:8b4513 salmon:fa8072 sandybrown:f4a460 ' +
      'seagreen:2e8b57 seashell:fff5ee sienna:a0522d silver:c0c0c0 skyblue:87ceeb slateblue:6a5acd slategray:708090 ' +
      'slategrey:708090 snow:fffafa springgreen:00ff7f steelblue:4682b4 tan:d2b48c teal:008080 thistle:d8bfd8 ' +
      'tomato:ff6347 turquoise:40e0d0 violet:ee82ee wheat:f5deb3 white:ffffff whitesmoke:f5f5f5 yellow:ffff00 ' +
      'yellowgreen:9acd32'
    )
      .split(' ')
      .map((pair) => pair.split(':') as [string, string]),
  ),
);

const clamp = (n: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, n));

/** Parses a CSS colour value; null for anything it cannot resolve (currentColor, var(), gradients...). */
export function parseColour(value: string): Rgb | null {
  const v = value.trim().toLowerCase();
  if (v === 'transparent') return { r: 0, g: 0, b: 0, a: 0 };
  const named = NAMED[v];
  if (named !== undefined) return parseHex(named);
  if (v.startsWith('#')) return parseHex(v.slice(1));
  const fn = /^(rgba?|hsla?)\(([^)]*)\)$/.exec(v);
  if (fn === null) return null;
  const parts = fn[2]!.split(/[\s,/]+/).filter((p) => p !== '');
  if (parts.length < 3 || parts.length > 4) return null;
  const alpha = parts[3] === undefined ? 1 : parseAlpha(parts[3]);
  if (alpha === null) return null;
  return fn[1]!.startsWith('rgb') ? parseRgbChannels(parts, alpha) : parseHslChannels(parts, alpha);
}

function parseHex(hex: string): Rgb | null {
  if (!/^[0-9a-f]+$/.test(hex)) return null;
  const short = hex.length === 3 || hex.length === 4;
  if (!short && hex.length !== 6 && hex.length !== 8) return null;
  const channel = (i: number): number =>
    short ? parseInt(hex[i]! + hex[i]!, 16) : parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  const hasAlpha = hex.length === 4 || hex.length === 8;
  return { r: channel(0), g: channel(1), b: channel(2), a: hasAlpha ? channel(3) / 255 : 1 };
}

function parseAlpha(token: string): number | null {
  const n = parseFloat(token);
  if (Number.isNaN(n)) return null;
  return clamp(token.endsWith('%') ? n / 100 : n, 0, 1);
}

function parseRgbChannels(parts: string[], a: number): Rgb | null {
  const channels = parts.slice(0, 3).map((p) => {
    const n = parseFloat(p);
    return p.endsWith('%') ? (n * 255) / 100 : n;
  });
  if (channels.some((n) => Number.isNaN(n))) return null;
  const [r, g, b] = channels.map((n) => Math.round(clamp(n, 0, 255))) as [number, number, number];
  return { r, g, b, a };
}

function parseHslChannels(parts: string[], a: number): Rgb | null {
  const h = parseFloat(parts[0]!);
  const s = parseFloat(parts[1]!);
  const l = parseFloat(parts[2]!);
  if ([h, s, l].some((n) => Number.isNaN(n))) return null;
  return { ...hslToRgb({ h, s: clamp(s, 0, 100) / 100, l: clamp(l, 0, 100) / 100 }), a };
}

/** Lower-case #rrggbb; alpha is dropped, so composite first if it matters. */
export function toHex(c: Rgb): string {
  const hex = (n: number): string => Math.round(clamp(n, 0, 255)).toString(16).padStart(2, '0');
  return `#${hex(c.r)}${hex(c.g)}${hex(c.b)}`;
}

/** Paints a translucent colour over an opaque backdrop, as the browser would. */
export function composite(top: Rgb, backdrop: Rgb): Rgb {
  const mix = (t: number, b: number): number => Math.round(t * top.a + b * (1 - top.a));
  return { r: mix(top.r, backdrop.r), g: mix(top.g, backdrop.g), b: mix(top.b, backdrop.b), a: 1 };
}

/** WCAG 2 relative luminance of an opaque sRGB colour. */
export function relativeLuminance(c: Rgb): number {
  const linear = (channel: number): number => {
    const s = channel / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * linear(c.r) + 0.7152 * linear(c.g) + 0.0722 * linear(c.b);
}

/** WCAG 2 contrast ratio, 1 to 21; the order of the arguments does not matter. */
export function contrastRatio(a: Rgb | string, b: Rgb | string): number {
  const la = relativeLuminance(asRgb(a));
  const lb = relativeLuminance(asRgb(b));
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

function asRgb(c: Rgb | string): Rgb {
  if (typeof c !== 'string') return c;
  const parsed = parseColour(c);
  if (parsed === null) throw new TypeError(`Not a CSS colour: ${c}`);
  return parsed;
}

export function rgbToHsl(c: Rgb): Hsl {
  const r = c.r / 255;
  const g = c.g / 255;
  const b = c.b / 255;
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const l = (max + min) / 2;
  const d = max - min;
  if (d === 0) return { h: 0, s: 0, l };
  const s = d / (1 - Math.abs(2 * l - 1));
  let h: number;
  if (max === r) h = ((g - b) / d) % 6;
  else if (max === g) h = (b - r) / d + 2;
  else h = (r - g) / d + 4;
  return { h: (h * 60 + 360) % 360, s, l };
}

export function hslToRgb(c: Hsl): Rgb {
  const h = (((c.h % 360) + 360) % 360) / 60;
  const chroma = (1 - Math.abs(2 * c.l - 1)) * c.s;
  const x = chroma * (1 - Math.abs((h % 2) - 1));
  const m = c.l - chroma / 2;
  const [r, g, b] =
    h < 1 ? [chroma, x, 0] : h < 2 ? [x, chroma, 0] : h < 3 ? [0, chroma, x] : h < 4 ? [0, x, chroma] : h < 5 ? [x, 0, chroma] : [chroma, 0, x];
  const to255 = (n: number): number => Math.round(clamp((n + m) * 255, 0, 255));
  return { r: to255(r), g: to255(g), b: to255(b), a: 1 };
}

/** The outcome of a lightness search: the colour, its ratio, how far lightness moved, and whether it reached the target. */
export interface AccessibleColour {
  readonly colour: Rgb;
  readonly hex: string;
  readonly ratio: number;
  readonly lightnessShift: number;
  readonly reached: boolean;
}

// 1/1000 of the lightness axis is finer than one step of an 8-bit channel.
const LIGHTNESS_STEPS = 1000;

/**
 * Finds the colour closest to `fg` (same hue and saturation, lightness moved as little as possible,
 * trying both darker and lighter) that has at least `minRatio` against `bg`.
 * Falls back to black or white, whichever contrasts more, when no lightness reaches the ratio.
 */
export function findAccessibleColour(fg: Rgb | string, bg: Rgb | string, minRatio: number): AccessibleColour {
  const backdrop = asRgb(bg);
  const opaqueBg = backdrop.a < 1 ? composite(backdrop, WHITE) : backdrop;
  const start = composite(asRgb(fg), opaqueBg);
  const ratioOf = (c: Rgb): number => contrastRatio(c, opaqueBg);
  const result = (colour: Rgb, lightnessShift: number): AccessibleColour => {
    const ratio = ratioOf(colour);
    return { colour, hex: toHex(colour), ratio, lightnessShift, reached: ratio >= minRatio };
  };
  if (ratioOf(start) >= minRatio) return result(start, 0);

  const hsl = rgbToHsl(start);
  const candidates: AccessibleColour[] = [];
  for (const direction of [-1, 1]) {
    for (let step = 1; step <= LIGHTNESS_STEPS; step++) {
      const l = hsl.l + (direction * step) / LIGHTNESS_STEPS;
      if (l < 0 || l > 1) break;
      const colour = hslToRgb({ ...hsl, l });
      if (ratioOf(colour) >= minRatio) {
        candidates.push(result(colour, Math.abs(l - hsl.l)));
        break;
      }
    }
  }
  // Smallest shift wins; on a tie the darker candidate (found first) is kept.
  const best = candidates.reduce<AccessibleColour | null>(
    (acc, c) => (acc === null || c.lightnessShift < acc.lightnessShift ? c : acc),
    null,
  );
  if (best !== null) return best;
  const extreme = ratioOf(BLACK) >= ratioOf(WHITE) ? BLACK : WHITE;
  return result(extreme, Math.abs(rgbToHsl(extreme).l - hsl.l));
}

/** The nearest colour to `fg` (same hue) that reaches `minRatio` on `bg`, as #rrggbb. */
export function nearestAccessibleColour(fg: Rgb | string, bg: Rgb | string, minRatio: number): string {
  return findAccessibleColour(fg, bg, minRatio).hex;
}

/**
 * A ratio as WCAG reports it, with two decimals. A failing ratio is truncated rather than rounded
 * so that, say, 4.499 never reads as a passing "4.50".
 */
export function formatRatio(ratio: number, required?: number): string {
  const rounded = ratio.toFixed(2);
  if (required !== undefined && ratio < required && Number(rounded) >= required) {
    return (Math.floor(ratio * 100) / 100).toFixed(2);
  }
  return rounded;
}
