/**
 * What an element's screenshot shows: the element and its surroundings, at a scale a person
 * reads. A wide, low element (a navigation bar, a banner) was once downscaled to a strip a few
 * pixels high; now it keeps a legible scale and what is above and below it.
 */
import { expect, it } from 'vitest';
import { MIN_SCALE, shotClip } from '../../../src/domain/scan/chromium/screenshots.js';

const view = { x: 0, y: 1000, width: 1280, height: 800 };

it('a wide, low element keeps a legible scale and gets its surroundings: no strip', () => {
  const clip = shotClip({ x: 20, y: 1300, width: 1240, height: 40 }, view, 480);
  expect(clip.scale).toBeGreaterThanOrEqual(MIN_SCALE);
  expect(clip.width * clip.scale).toBeLessThanOrEqual(480);
  const [w, h] = [clip.width * clip.scale, clip.height * clip.scale];
  expect(w / h).toBeLessThanOrEqual(3);
  expect(h).toBeGreaterThanOrEqual(150);
  // It starts where the element does (with its margin), and holds it vertically with room on both sides.
  expect(clip.x).toBe(8);
  expect(clip.y).toBeLessThan(1300 - 12);
  expect(clip.y + clip.height).toBeGreaterThan(1340 + 12);
});

it('a small element is shown at its size with its margin, within the viewport', () => {
  const clip = shotClip({ x: 100, y: 1100, width: 200, height: 100 }, view, 480);
  expect(clip).toEqual({ x: 88, y: 1088, width: 224, height: 124, scale: 1 });
  const edge = shotClip({ x: 1200, y: 1790, width: 80, height: 10 }, view, 480);
  expect(edge.x + edge.width).toBeLessThanOrEqual(1280);
  expect(edge.y + edge.height).toBeLessThanOrEqual(1800);
});

it('a tall element is shown from its top, at most 1.5 times the image width high', () => {
  const clip = shotClip({ x: 100, y: 1010, width: 300, height: 2000 }, { ...view, height: 2400 }, 480);
  expect(clip.y).toBe(1000 + 0);
  expect(clip.height * clip.scale).toBeLessThanOrEqual(720);
});
