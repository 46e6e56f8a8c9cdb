import { describe, expect, it } from 'vitest';
import {
  contrastRatio,
  findAccessibleColour,
  formatRatio,
  hslToRgb,
  nearestAccessibleColour,
  parseColour,
  relativeLuminance,
  rgbToHsl,
  toHex,
} from '../../../src/domain/fix/colour.js';

describe('parseColour', () => {
  it('reads hex in all four lengths', () => {
    expect(parseColour('#777')).toEqual({ r: 119, g: 119, b: 119, a: 1 });
    expect(parseColour('#767676')).toEqual({ r: 118, g: 118, b: 118, a: 1 });
    expect(parseColour('#FFF8')).toMatchObject({ r: 255, g: 255, b: 255 });
    expect(parseColour('#00000080')!.a).toBeCloseTo(0.5, 2);
  });

  it('reads rgb() and rgba(), with commas or spaces, numbers or percentages', () => {
    expect(parseColour('rgb(255, 0, 0)')).toEqual({ r: 255, g: 0, b: 0, a: 1 });
    expect(parseColour('rgba(0,0,0,.4)')).toEqual({ r: 0, g: 0, b: 0, a: 0.4 });
    expect(parseColour('rgb(0 128 0 / 50%)')).toEqual({ r: 0, g: 128, b: 0, a: 0.5 });
    expect(parseColour('rgb(100%, 50%, 0%)')).toEqual({ r: 255, g: 128, b: 0, a: 1 });
  });

  it('reads hsl() and the CSS named colours', () => {
    expect(parseColour('hsl(0, 100%, 50%)')).toEqual({ r: 255, g: 0, b: 0, a: 1 });
    expect(toHex(parseColour('black')!)).toBe('#000000');
    expect(toHex(parseColour('White')!)).toBe('#ffffff');
    expect(toHex(parseColour('gray')!)).toBe('#808080');
    expect(toHex(parseColour('grey')!)).toBe('#808080');
    expect(toHex(parseColour('red')!)).toBe('#ff0000');
    expect(toHex(parseColour('rebeccapurple')!)).toBe('#663399');
  });

  it('returns null for what it cannot resolve', () => {
    for (const value of ['currentColor', 'var(--brand)', 'inherit', '#12', 'rgb(1,2)', 'linear-gradient(red, blue)', 'notacolour']) {
      expect(parseColour(value), value).toBeNull();
    }
  });
});

describe('luminance and contrast', () => {
  it('matches the WCAG reference values', () => {
    expect(relativeLuminance(parseColour('#000')!)).toBe(0);
    expect(relativeLuminance(parseColour('#fff')!)).toBe(1);
    expect(contrastRatio('black', 'white')).toBe(21);
    expect(contrastRatio('#777', '#fff')).toBeCloseTo(4.48, 2);
    expect(contrastRatio('#767676', '#fff')).toBeCloseTo(4.54, 2);
    expect(contrastRatio('#fff', '#767676')).toBeCloseTo(contrastRatio('#767676', '#fff'), 10);
    expect(contrastRatio('#595959', '#fff')).toBeGreaterThanOrEqual(7);
  });

  it('round-trips through HSL', () => {
    for (const hex of ['#336699', '#5cb85c', '#777777', '#ff8800', '#000000', '#ffffff']) {
      expect(toHex(hslToRgb(rgbToHsl(parseColour(hex)!)))).toBe(hex);
    }
  });

  it('formats ratios with two decimals, never rounding a failing ratio up to a pass', () => {
    expect(formatRatio(4.4784)).toBe('4.48');
    expect(formatRatio(4.4999, 4.5)).toBe('4.49');
    expect(formatRatio(21)).toBe('21.00');
  });
});

describe('nearestAccessibleColour', () => {
  it('moves #777 on white to #767676, the closest grey that passes 4.5:1', () => {
    expect(nearestAccessibleColour('#777', '#fff', 4.5)).toBe('#767676');
  });

  it('keeps the hue while changing lightness', () => {
    const fixed = findAccessibleColour('#5cb85c', '#ffffff', 4.5);
    expect(fixed.reached).toBe(true);
    expect(fixed.ratio).toBeGreaterThanOrEqual(4.5);
    expect(rgbToHsl(fixed.colour).h).toBeCloseTo(rgbToHsl(parseColour('#5cb85c')!).h, 0);
    expect(rgbToHsl(fixed.colour).l).toBeLessThan(rgbToHsl(parseColour('#5cb85c')!).l);
  });

  it('searches both directions and lightens on a dark background', () => {
    const fixed = findAccessibleColour('#555555', '#222222', 4.5);
    expect(fixed.reached).toBe(true);
    expect(rgbToHsl(fixed.colour).l).toBeGreaterThan(rgbToHsl(parseColour('#555')!).l);
    expect(contrastRatio(fixed.hex, '#222')).toBeGreaterThanOrEqual(4.5);
  });

  it('leaves a passing colour alone', () => {
    expect(nearestAccessibleColour('#000', '#fff', 4.5)).toBe('#000000');
  });

  it('falls back to black or white when no lightness reaches the ratio', () => {
    const fixed = findAccessibleColour('#808080', '#777777', 7);
    expect(fixed.reached).toBe(false);
    expect(fixed.hex).toBe('#000000');
  });

  it('composites a translucent foreground over the background first', () => {
    const fixed = findAccessibleColour('rgba(0,0,0,0.4)', '#fff', 4.5);
    expect(fixed.reached).toBe(true);
    expect(fixed.colour.a).toBe(1);
  });
});
