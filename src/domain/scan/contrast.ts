/**
 * A colour-contrast finding's measurement: the colours and the WCAG 2 ratio axe-core reported,
 * and beside them the APCA lightness contrast (Lc), computed by colorjs.io (its APCA is the
 * 0.0.98G-4g constants apca-w3 uses, to the same values), with the WCAG 3 working draft's
 * threshold for the text's size and weight.
 * The APCA part is advisory: WCAG 2's ratio decides conformance.
 */
import Color from 'colorjs.io';
import type { components } from '../../../generated/types/dashboard.js';
import { composite, parseColour, WHITE } from '../fix/colour.js';

export type Contrast = components['schemas']['contrast'];
export type Apca = NonNullable<Contrast['apca']>;

/**
 * axe-core's colour-contrast message carries the measurement: "contrast of 1.91 (foreground
 * color: #bbbbbb, background color: #ffffff, font size: 12.0pt (16px), font weight: normal);
 * expected contrast ratio of 4.5:1".
 */
const MEASURED = /contrast of ([\d.]+) \(foreground color: (#[0-9a-f]{3,8}), background color: (#[0-9a-f]{3,8})([^;]*); expected contrast ratio of ([\d.]+):1/i;
const FONT_PX = /font size: [\d.]+pt \(([\d.]+)px\)/i;
const FONT_WEIGHT = /font weight: (\w+)/i;

/**
 * The WCAG 3 working draft's minimum |Lc| for text (APCA Bronze simple mode, as APCA's
 * documentation gives it): 45 for text of 36px, or 24px bold; 60 for text of 24px, or 16px bold;
 * 75 for smaller text, the minimum for body text.
 */
export function apcaThreshold(fontPx: number | null, bold: boolean): number {
  if (fontPx === null) return 75;
  if (fontPx >= 36 || (bold && fontPx >= 24)) return 45;
  if (fontPx >= 24 || (bold && fontPx >= 16)) return 60;
  return 75;
}

/** Lc of text `foreground` on `background` (CSS colours; a translucent text colour is laid over the background first); null when either cannot be read. */
export function apcaLc(foreground: string, background: string): number | null {
  const bgRaw = parseColour(background);
  const fgRaw = parseColour(foreground);
  if (!bgRaw || !fgRaw) return null;
  const bg = composite(bgRaw, WHITE);
  const fg = composite(fgRaw, bg);
  const srgb = (c: { r: number; g: number; b: number }) => new Color('srgb', [c.r / 255, c.g / 255, c.b / 255]);
  // The background's contrast with the text, as APCA orders them: positive for dark text on light.
  return srgb(bg).contrast(srgb(fg), 'APCA');
}

export function apcaOf(foreground: string, background: string, fontPx: number | null, bold: boolean): Apca | null {
  const lc = apcaLc(foreground, background);
  if (lc === null || !Number.isFinite(lc)) return null;
  const threshold = apcaThreshold(fontPx, bold);
  return { lc: Math.round(lc * 10) / 10, threshold, meets: Math.abs(lc) >= threshold, advisory: 'WCAG 3 working draft' };
}

/** The measurement of a color-contrast (or -enhanced) finding, read from its message; null for any other finding. */
export function contrastOf(issue: { code: string; message: string }): Contrast | null {
  if (!issue.code.startsWith('color-contrast')) return null;
  const m = MEASURED.exec(issue.message);
  if (!m) return null;
  const px = FONT_PX.exec(m[4]!);
  const weight = FONT_WEIGHT.exec(m[4]!)?.[1]?.toLowerCase();
  const bold = weight === 'bold' || weight === 'bolder' || (weight !== undefined && Number(weight) >= 700);
  return {
    foreground: m[2]!.toLowerCase(), background: m[3]!.toLowerCase(), ratio: Number(m[1]), required: Number(m[5]),
    apca: apcaOf(m[2]!, m[3]!, px ? Number(px[1]) : null, bold),
  };
}
