/**
 * Screenshots of failing elements, taken after a page's checks: each element scrolled into view,
 * outlined, and captured with a margin around it, downscaled to a bounded width. A step of its own
 * (the checks never depend on it); a shot that cannot be taken (the element is gone, hidden or
 * has no size) is left out, and never fails the page.
 */
import type { ElementShot, Issue, ShotOptions } from '../types.js';
import { pageCall } from '../checks/page-functions.js';
import type { Page } from './browser.js';

export type { ElementShot, ShotOptions } from '../types.js';

const MARGIN = 12;
const OUTLINE_ATTR = 'data-pactum-shot';

/**
 * In the page: marks the element, scrolls it to the middle of the viewport and answers its box
 * in document coordinates with a margin, clamped to the document (null: nothing to photograph).
 */
function markElement(document: Document, { selector, attr, margin }: { selector: string; attr: string; margin: number }) {
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
  const docW = Math.max(document.documentElement.scrollWidth, win.innerWidth);
  const docH = Math.max(document.documentElement.scrollHeight, win.innerHeight);
  const x = Math.max(0, r.left + win.scrollX - margin);
  const y = Math.max(0, r.top + win.scrollY - margin);
  // Within the viewport: what was scrolled into view is what the surface has painted.
  const width = Math.min(r.width + 2 * margin, docW - x, win.innerWidth);
  const height = Math.min(r.height + 2 * margin, docH - y, win.innerHeight);
  return width >= 1 && height >= 1 ? { x, y, width, height } : null;
}

function unmarkElements(document: Document, attr: string) {
  for (const el of document.querySelectorAll(`[${attr}]`)) el.removeAttribute(attr);
}

/** Screenshots of the page's first failing elements (errors before warnings), one per element. */
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
    try {
      const box = await page.evaluate<{ x: number; y: number; width: number; height: number } | null>(pageCall(markElement, { selector, attr: OUTLINE_ATTR, margin: MARGIN }));
      if (!box) continue;
      // Taller than wide gets the same cap as the width: a shot shows the element and its surroundings, not a page.
      const height = Math.min(box.height, options.maxWidth * 1.5);
      const scale = Math.min(1, options.maxWidth / box.width);
      const bytes = await page.screenshot({ x: box.x, y: box.y, width: box.width, height, scale }, options.format, options.quality);
      shots.push({ issues: indexes, mime, width: Math.max(1, Math.round(box.width * scale)), height: Math.max(1, Math.round(height * scale)), bytes });
    } catch {
      // The element went away or the page changed under us: no shot for it.
    } finally {
      await page.evaluate(pageCall(unmarkElements, OUTLINE_ATTR)).catch(() => undefined);
    }
  }
  return shots;
}
