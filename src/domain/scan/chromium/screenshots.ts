/**
 * Screenshots of failing elements, taken after a page's checks: each element scrolled into view,
 * outlined, and captured with its surroundings, at most SCREENSHOT_MAX_WIDTH pixels wide and at a
 * scale a person still reads (shotClip). A step of its own (the checks never depend on it); a shot
 * that cannot be taken (the element is gone, hidden or has no size) is left out, and never fails
 * the page.
 */
import type { ElementShot, Issue, ShotOptions } from '../types.js';
import { pageCall } from '../checks/page-functions.js';
import type { Page } from './browser.js';

export type { ElementShot, ShotOptions } from '../types.js';

const MARGIN = 12;
const OUTLINE_ATTR = 'data-pactum-shot';

/** A rectangle in document coordinates, CSS pixels. */
export interface Rect { x: number; y: number; width: number; height: number }

/** Text downscaled further than this is hard to read (16 px type becomes 12 px). */
export const MIN_SCALE = 0.75;
/** The flattest a shot may be (width to height): a wide element is shown with what is above and below it. */
const MAX_ASPECT = 3;

/**
 * The clip of an element's shot and its scale, given the element, the visible viewport and the
 * document (all in document coordinates): the element with a margin; no wider than the image may
 * be at a legible scale (a wider element shows its start, where the outline begins); no flatter
 * than 3:1 (a wide, low element gets its surroundings above and below); no taller than 1.5 times
 * the image's width; all within what is painted, the viewport.
 */
export function shotClip(el: Rect, view: Rect, maxWidth: number): Rect & { scale: number } {
  const within = (start: number, size: number, lo: number, span: number) => {
    const s = Math.min(size, span);
    return { start: Math.min(Math.max(start, lo), lo + span - s), size: s };
  };
  const wanted = { x: el.x - MARGIN, y: el.y - MARGIN, width: el.width + 2 * MARGIN, height: el.height + 2 * MARGIN };
  const widest = maxWidth / MIN_SCALE;
  const width = Math.min(wanted.width, widest, view.width);
  const scale = Math.min(1, maxWidth / width);
  const tallest = (maxWidth * 1.5) / scale;
  const height = Math.min(Math.max(wanted.height, width / MAX_ASPECT), tallest, view.height);
  // From the element's start horizontally; vertically centred on it when its surroundings are
  // added (some above, some below), from its top when it is taller than the shot.
  const x = within(wanted.x, width, view.x, view.width);
  const y = within(height >= wanted.height ? wanted.y - (height - wanted.height) / 2 : wanted.y, height, view.y, view.height);
  return { x: x.start, y: y.start, width: x.size, height: y.size, scale };
}

/**
 * In the page: marks the element, scrolls it to the middle of the viewport and answers its box
 * and the viewport, in document coordinates (null: nothing to photograph).
 */
function markElement(document: Document, { selector, attr }: { selector: string; attr: string }) {
  const win = document.defaultView!;
  let el: Element | null;
  try {
    el = document.querySelector(selector);
  } catch {
    return null;
  }
  if (!el) return null;
  if (!document.getElementById('__pactum_shot_style')) {
    const style = document.createElement('style');
    style.id = '__pactum_shot_style';
    style.textContent = `[${attr}]{outline:3px solid #d0021b !important;outline-offset:2px !important;box-shadow:0 0 0 6px rgba(255,255,255,.85) !important}`;
    document.documentElement.appendChild(style);
  }
  (document.activeElement as HTMLElement | null)?.blur?.();
  el.scrollIntoView({ block: 'center', inline: 'center' });
  const r = el.getBoundingClientRect();
  if (r.width < 1 || r.height < 1) return null;
  el.setAttribute(attr, '');
  // The viewport is what was scrolled into view, so what the surface has painted.
  const root = document.documentElement;
  return {
    el: { x: r.left + win.scrollX, y: r.top + win.scrollY, width: r.width, height: r.height },
    view: { x: win.scrollX, y: win.scrollY, width: Math.min(win.innerWidth, root.scrollWidth || win.innerWidth), height: Math.min(win.innerHeight, root.scrollHeight || win.innerHeight) },
  };
}

function unmarkElements(document: Document, attr: string) {
  for (const el of document.querySelectorAll(`[${attr}]`)) el.removeAttribute(attr);
}

/** Screenshots of the page's first failing elements (errors before warnings) the scan still wants (options.claim), one per element. */
export async function captureElementShots(page: Page, issues: readonly Issue[], options: ShotOptions): Promise<ElementShot[]> {
  if (options.max <= 0) return [];
  const bySelector = new Map<string, number[]>();
  const order = issues.map((issue, i) => ({ issue, i })).sort((a, b) => Number(a.issue.type !== 'error') - Number(b.issue.type !== 'error') || a.i - b.i);
  for (const { issue, i } of order) {
    if (!issue.selector || issue.selector === 'html') continue;
    bySelector.set(issue.selector, [...(bySelector.get(issue.selector) ?? []), i]);
  }
  const shots: ElementShot[] = [];
  const mime = options.format === 'webp' ? 'image/webp' : 'image/png';
  for (const [selector, indexes] of bySelector) {
    if (shots.length >= options.max) break;
    if (options.claim && !options.claim([...new Set(indexes.map((i) => issues[i]!.code))])) continue;
    try {
      const marked = await page.evaluate<{ el: Rect; view: Rect } | null>(pageCall(markElement, { selector, attr: OUTLINE_ATTR }));
      if (!marked) continue;
      const clip = shotClip(marked.el, marked.view, options.maxWidth);
      if (clip.width < 1 || clip.height < 1) continue;
      const bytes = await page.screenshot(clip, options.format, options.quality);
      shots.push({ issues: indexes, mime, width: Math.max(1, Math.round(clip.width * clip.scale)), height: Math.max(1, Math.round(clip.height * clip.scale)), bytes });
    } catch {
      // The element went away or the page changed under us: no shot for it.
    } finally {
      await page.evaluate(pageCall(unmarkElements, OUTLINE_ATTR)).catch(() => undefined);
    }
  }
  return shots;
}
