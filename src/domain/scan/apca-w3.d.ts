// apca-w3 ships JavaScript only; the two functions pactum calls.
declare module 'apca-w3' {
  /** Screen luminance Y of an sRGB colour given as [r, g, b] in 0-255. */
  export function sRGBtoY(rgb: readonly number[]): number;
  /** Lc of text luminance txtY on background luminance bgY; polarity matters (negative: light text on dark). */
  export function APCAcontrast(txtY: number, bgY: number, places?: number): number | string;
}
