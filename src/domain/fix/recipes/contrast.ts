/**
 * 1.4.3 Contrast (Minimum), 1.4.6 Contrast (Enhanced) and 1.4.11 Non-text Contrast.
 * Reads the colours from the CSS and inline styles, and moves the lightness of one of them
 * (text or control colour, or the background when that is the smaller change) until the ratio is met.
 */
import {
  composite,
  contrastRatio,
  findAccessibleColour,
  formatRatio,
  toHex,
  WHITE,
  type AccessibleColour,
  type Rgb,
} from '../colour.js';
import {
  colourTokenIn,
  fontSizeInPx,
  isBoldWeight,
  parseDeclarations,
  readFontShorthand,
  replaceColour,
  winningDeclaration,
  type Declaration,
} from '../css.js';
import { elementsOf, tagOf } from '../dom.js';
import { Markup } from '../markup.js';
import type { FixInput, FixResult, Recipe } from '../model.js';
import { lookupTable } from '../../../ground/lookup-table.js';

type Criterion = '1.4.3' | '1.4.6' | '1.4.11';

const TEXT_PROPS = ['color'];
const BACKGROUND_PROPS = ['background-color', 'background'];
// For 1.4.11 the visible edge of a control: border first, then outline, SVG paint, then its text/icon colour.
const BOUNDARY_PROPS = [
  ['border-color', 'border', 'border-top-color', 'border-bottom-color', 'border-left-color', 'border-right-color', 'border-top', 'border-bottom'],
  ['outline-color', 'outline'],
  ['stroke'],
  ['fill'],
];

/** Where a colour was declared, so the fix can be written back to the same place. */
interface ColourSource {
  readonly decl: Declaration;
  readonly colour: Rgb;
  /** The element whose style attribute holds it; null when it came from cssContext. */
  readonly element: Element | null;
}

interface StyleLayer {
  readonly decls: readonly Declaration[];
  readonly element: Element | null;
}

/** Inline style of the element first, then cssContext, then inline styles of ancestors (inherited). */
function styleLayers(target: Element | null, css: string): StyleLayer[] {
  const layers: StyleLayer[] = [];
  if (target !== null) layers.push({ decls: parseDeclarations(target.getAttribute('style') ?? ''), element: target });
  layers.push({ decls: parseDeclarations(css), element: null });
  for (let el = target?.parentElement ?? null; el !== null; el = el.parentElement) {
    if (el.hasAttribute('style')) layers.push({ decls: parseDeclarations(el.getAttribute('style')!), element: el });
  }
  return layers;
}

function lookup(layers: readonly StyleLayer[], props: readonly string[]): ColourSource | null {
  for (const layer of layers) {
    const decl = winningDeclaration(layer.decls, props);
    if (decl !== null) return { decl, colour: colourTokenIn(decl.value)!.colour, element: layer.element };
  }
  return null;
}

function firstValue(layers: readonly StyleLayer[], prop: string): string | null {
  for (const layer of layers) {
    const decl = layer.decls.filter((d) => d.property === prop && !d.stateful).at(-1);
    if (decl !== undefined) return decl.value;
  }
  return null;
}

const DEFAULT_SIZE = lookupTable({ h1: 32, h2: 24, h3: 18.72, h4: 16, h5: 13.28, h6: 10.72, small: 13.33 });
const BOLD_TAGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'b', 'strong', 'th']);

/** WCAG "large scale": at least 24px, or at least 18.66px (14pt) and bold. */
function textScale(layers: readonly StyleLayer[], target: Element | null): { large: boolean; size: number; bold: boolean } {
  const tag = target === null ? '' : tagOf(target);
  const shorthand = firstValue(layers, 'font');
  const font = shorthand === null ? { size: null, bold: false } : readFontShorthand(shorthand);
  const sizeValue = firstValue(layers, 'font-size');
  const size = (sizeValue === null ? null : fontSizeInPx(sizeValue)) ?? font.size ?? DEFAULT_SIZE[tag] ?? 16;
  const weight = firstValue(layers, 'font-weight');
  const bold = weight !== null ? isBoldWeight(weight) : font.bold || BOLD_TAGS.has(tag);
  return { large: size >= 24 || (size >= 18.66 && bold), size, bold };
}

function requiredRatio(criterion: Criterion, large: boolean): number {
  if (criterion === '1.4.11') return 3;
  if (criterion === '1.4.6') return large ? 4.5 : 7;
  return large ? 3 : 4.5;
}

const SETS_TEXT_COLOUR = /(^|;|\s)color\s*:/i;
const SETS_BOUNDARY_COLOUR = /(^|;|\s)(border(-[a-z]+)?|outline(-color)?|fill|stroke)\s*:/i;
const SETS_ANY_COLOUR = /(^|;|\s)(color|background(-color)?|border(-[a-z]+)?|outline(-color)?|fill|stroke)\s*:/i;

/**
 * The element the inline colours belong to: the first whose style sets the colour being checked
 * (text colour, or a border for 1.4.11), else the first with any colour, else the first element.
 */
function targetElement(markup: Markup, criterion: Criterion): Element | null {
  const all = elementsOf(markup.body, '*');
  const styleOf = (el: Element): string => el.getAttribute('style') ?? '';
  const preferred = criterion === '1.4.11' ? [SETS_BOUNDARY_COLOUR, SETS_TEXT_COLOUR] : [SETS_TEXT_COLOUR];
  for (const pattern of [...preferred, SETS_ANY_COLOUR]) {
    const found = all.find((el) => pattern.test(styleOf(el)));
    if (found !== undefined) return found;
  }
  return all[0] ?? null;
}

interface Reading {
  readonly foreground: ColourSource;
  /** What the foreground colour is: "text colour", "border colour"... */
  readonly foregroundRole: string;
  readonly background: ColourSource | null;
  readonly backgroundColour: Rgb;
  readonly scale: ReturnType<typeof textScale>;
}

function read(criterion: Criterion, layers: readonly StyleLayer[], target: Element | null): Reading | null {
  const scale = textScale(layers, target);
  const background = lookup(layers, BACKGROUND_PROPS);
  if (criterion === '1.4.11') {
    for (const props of BOUNDARY_PROPS) {
      const found = lookup(layers, props);
      if (found !== null) return withBackground(found, `${found.decl.property.replace(/-color$|-top$|-bottom$/, '')} colour`, background, scale);
    }
    const text = lookup(layers, TEXT_PROPS);
    if (text !== null) return withBackground(text, 'icon or text colour', background, scale);
    // Only a fill: the control's own background is what must stand out from the page.
    if (background !== null) return { foreground: background, foregroundRole: 'control background', background: null, backgroundColour: WHITE, scale };
    return null;
  }
  const text = lookup(layers, TEXT_PROPS);
  return text === null ? null : withBackground(text, 'text colour', background, scale);
}

function withBackground(fg: ColourSource, role: string, bg: ColourSource | null, scale: Reading['scale']): Reading {
  const backgroundColour = bg === null ? WHITE : bg.colour.a < 1 ? composite(bg.colour, WHITE) : bg.colour;
  return { foreground: fg, foregroundRole: role, background: bg, backgroundColour, scale };
}

interface Change {
  readonly source: ColourSource;
  readonly result: AccessibleColour;
  readonly movedBackground: boolean;
}

/** Change the foreground, unless darkening/lightening the (declared) background is the smaller step. */
function chooseChange(reading: Reading, fg: Rgb, required: number): Change {
  const viaForeground = findAccessibleColour(fg, reading.backgroundColour, required);
  if (reading.background === null) return { source: reading.foreground, result: viaForeground, movedBackground: false };
  const viaBackground = findAccessibleColour(reading.backgroundColour, fg, required);
  const backgroundWins =
    viaBackground.reached && (!viaForeground.reached || viaBackground.lightnessShift < viaForeground.lightnessShift);
  return backgroundWins
    ? { source: reading.background, result: viaBackground, movedBackground: true }
    : { source: reading.foreground, result: viaForeground, movedBackground: false };
}

function describeRequirement(criterion: Criterion, required: number, large: boolean): string {
  if (criterion === '1.4.11') return `the 3:1 that 1.4.11 requires for user-interface components and graphics`;
  return `the ${required}:1 that ${criterion} requires for ${large ? 'large text (at least 24px, or 18.66px bold)' : 'normal-size text'}`;
}

function draftContrast(criterion: Criterion, input: FixInput): FixResult {
  return Markup.with(input.htmlContext, (markup) => draftContrastIn(markup, criterion, input));
}

function draftContrastIn(markup: Markup, criterion: Criterion, input: FixInput): FixResult {
  const css = input.cssContext ?? '';
  const target = targetElement(markup, criterion);
  const layers = styleLayers(target, css);
  const reading = read(criterion, layers, target);
  const unchanged = (explanation: string): FixResult => ({
    fixedHtml: input.htmlContext,
    ...(input.cssContext === undefined ? {} : { fixedCss: input.cssContext }),
    explanation,
    effort: 'low',
    placeholders: [],
  });
  if (reading === null) {
    return unchanged(
      `No ${criterion === '1.4.11' ? 'border, outline or control colour' : 'text colour (color)'} was found in the CSS context or the inline styles, so the contrast could not be computed. Pass the CSS that sets the colours (for example "color: #777; background-color: #fff") to get a corrected value.`,
    );
  }
  const required = requiredRatio(criterion, reading.scale.large);
  const fg = composite(reading.foreground.colour, reading.backgroundColour);
  const before = contrastRatio(fg, reading.backgroundColour);
  const assumed = reading.background === null
    ? ` No background colour was given, so white (#ffffff) was assumed: check against the real background.`
    : '';
  const pair = `The ${reading.foregroundRole} ${toHex(fg)} on ${toHex(reading.backgroundColour)}`;
  if (before >= required) {
    return unchanged(
      `${pair} already has a contrast ratio of ${formatRatio(before)}:1, which meets ${describeRequirement(criterion, required, reading.scale.large)}.${assumed} The scanner may have measured another state, a background image or inherited colours: check the element in the browser.`,
    );
  }

  const change = chooseChange(reading, fg, required);
  const newHex = change.result.hex;
  const { decl, element } = change.source;
  let fixedHtml = input.htmlContext;
  let fixedCss: string;
  if (element === null) {
    fixedCss = replaceColour(css, decl, newHex);
  } else {
    const style = element.getAttribute('style') ?? '';
    element.setAttribute('style', replaceColour(style, decl, newHex));
    fixedHtml = markup.serialize();
    const token = colourTokenIn(decl.value)!;
    fixedCss = `${decl.property}: ${decl.value.slice(0, token.start)}${newHex}${decl.value.slice(token.end)};`;
  }
  const where = element === null ? 'in the CSS' : 'in the inline style';
  const oldHex = toHex(change.movedBackground ? reading.backgroundColour : fg);
  const property = decl.property.endsWith('color') ? decl.property : `the colour in ${decl.property}`;
  const moved = change.movedBackground
    ? `Changed ${property} ${where} from ${oldHex} to ${newHex}, giving ${formatRatio(change.result.ratio)}:1: darkening or lightening the background was a smaller change than adjusting the ${reading.foregroundRole}, and keeps its hue.`
    : `Changed ${property} ${where} from ${oldHex} to ${newHex}, giving ${formatRatio(change.result.ratio)}:1, with the same hue and the smallest change in lightness.`;
  const unreachable = change.result.reached
    ? ''
    : ` No lightness of that hue reaches ${required}:1 here, so the nearest extreme was used; the other colour must change too.`;
  return {
    fixedHtml,
    fixedCss,
    explanation:
      `${pair} has a contrast ratio of ${formatRatio(before, required)}:1, below ${describeRequirement(criterion, required, reading.scale.large)}. ` +
      moved +
      unreachable +
      (assumed !== '' ? assumed : ' Check hover, focus and visited states, which may use other colours.'),
    effort: 'low',
    placeholders: [],
  };
}

export const contrastMinimum: Recipe = { criteria: ['1.4.3'], draft: (input) => draftContrast('1.4.3', input) };
export const contrastEnhanced: Recipe = { criteria: ['1.4.6'], draft: (input) => draftContrast('1.4.6', input) };
export const nonTextContrast: Recipe = { criteria: ['1.4.11'], draft: (input) => draftContrast('1.4.11', input) };
