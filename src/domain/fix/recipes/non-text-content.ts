/**
 * 1.1.1 Non-text Content: images, image buttons, image-map areas, SVGs and other graphics
 * get a text alternative, or are marked decorative when the markup says they are.
 */
import { accessibleName, childElementsOf, classTokens, closestWhere, collapse, contentText, elementsOf, hasNonEmpty, plural, roleOf, tagOf } from '../dom.js';
import { draftWithFixers, type Finding, type Fixer } from '../drafting.js';
import { iconHint } from '../icon-hints.js';
import type { Markup } from '../markup.js';
import { Placeholder, type FixInput, type FixResult, type Recipe } from '../model.js';
import { Tally } from '../tally.js';

// File names and classes that authors give to spacers and ornaments.
const DECORATIVE_WORD = /(^|[^a-z])(spacer|spc|decor|decoration|decorative|divider|separator|ornament|flourish|shim|blank|transparent|pixel|1x1|clear|swirl|border)([^a-z]|$)/i;

function fileNameOf(src: string | null): string {
  return (src ?? '').split(/[?#]/)[0]!.replace(/^.*\//, '');
}

/** The markup itself says the image carries no information. */
export function isMarkedDecorative(el: Element): boolean {
  const role = roleOf(el);
  if (role === 'presentation' || role === 'none') return true;
  if (el.getAttribute('aria-hidden') === 'true') return true;
  if (DECORATIVE_WORD.test(fileNameOf(el.getAttribute('src')))) return true;
  if (classTokens(el).some((c) => DECORATIVE_WORD.test(c))) return true;
  const tiny = (name: string): boolean => /^\s*[0-2](px)?\s*$/.test(el.getAttribute(name) ?? '');
  return tiny('width') && tiny('height');
}

/** a[href], button, [role="button"], [role="link"] */
function isControl(el: Element): boolean {
  const tag = tagOf(el);
  const role = el.getAttribute('role');
  return (tag === 'a' && el.hasAttribute('href')) || tag === 'button' || role === 'button' || role === 'link';
}

function missingAlt(el: Element): boolean {
  const alt = el.getAttribute('alt');
  // alt=" " is neither a description nor the empty alt of a decorative image.
  return alt === null || (alt !== '' && alt.trim() === '');
}

/** The link or button whose name an image supplies, when the image is its only content. */
function soleContentOf(el: Element): Element | null {
  const control = closestWhere(el, isControl);
  if (control === null) return null;
  const otherText = collapse(contentText(control).replace(el.getAttribute('alt') ?? '', ''));
  return otherText === '' ? control : null;
}

function fixImages(markup: Markup): Finding | null {
  const tally = new Tally();
  const placeholders: string[] = [];
  for (const img of elementsOf(markup.document, 'img')) {
    if (!missingAlt(img)) continue;
    const existing = img.getAttribute('aria-label') ?? img.getAttribute('title');
    if (isMarkedDecorative(img) && soleContentOf(img) === null) {
      img.setAttribute('alt', '');
      tally.add('alt="" on', 'decorative image');
    } else if (existing !== null && existing.trim() !== '') {
      img.setAttribute('alt', collapse(existing));
      tally.add('alt taken from its title or aria-label on', 'image');
    } else {
      const text = soleContentOf(img) === null ? Placeholder.image : Placeholder.linkTarget;
      img.setAttribute('alt', text);
      placeholders.push(text);
      tally.add('an alt placeholder on', 'image');
    }
  }
  if (tally.total === 0) return null;
  return {
    count: tally.total,
    headline: `alt text for ${plural(tally.total, 'image')}`,
    restructured: false,
    summary: `Images had no alt attribute, so screen readers fell back to the file name: added ${tally.describe()}`,
    check: 'Write alt text that says what each image conveys in its context, and confirm that images given alt="" really are decorative.',
    placeholders,
  };
}

function fixImageButtons(markup: Markup): Finding | null {
  const tally = new Tally();
  const placeholders: string[] = [];
  // (Not the selector input[type="image" i]: jsdom's engine keeps every document it tested that on.)
  for (const input of elementsOf(markup.document, 'input').filter((el) => (el.getAttribute('type') ?? '').toLowerCase() === 'image')) {
    if (!missingAlt(input) || accessibleName(input) !== '') continue;
    const hint = iconHint(input);
    const text = hint ?? Placeholder.imageButton;
    input.setAttribute('alt', text);
    if (hint === null) placeholders.push(text);
    tally.add(hint === null ? 'an alt placeholder on' : `alt="${hint}" (guessed from the image file) on`, 'image button');
  }
  if (tally.total === 0) return null;
  return {
    count: tally.total,
    headline: `alt text for ${plural(tally.total, 'image button')}`,
    restructured: false,
    summary: `An image button had no alt text, so its action was not announced: added ${tally.describe()}`,
    check: "An image button's alt text must name the action (for example \"Search\"), not describe the picture.",
    placeholders,
  };
}

function fixAreas(markup: Markup): Finding | null {
  const tally = new Tally();
  const placeholders: string[] = [];
  for (const area of elementsOf(markup.document, 'area')) {
    const needsName = area.hasAttribute('href') ? !hasNonEmpty(area, 'alt') : area.getAttribute('alt') === null;
    if (!needsName || hasNonEmpty(area, 'aria-label')) continue;
    const title = area.getAttribute('title');
    const text = title !== null && title.trim() !== '' ? collapse(title) : Placeholder.linkTarget;
    area.setAttribute('alt', text);
    if (text === Placeholder.linkTarget) placeholders.push(text);
    tally.add('alt text on', 'image-map area');
  }
  if (tally.total === 0) return null;
  return {
    count: tally.total,
    headline: `alt text for ${plural(tally.total, 'image-map area')}`,
    restructured: false,
    summary: `Image-map areas had no alt text, so their links had no name: added ${tally.describe()}`,
    check: 'Each area\'s alt text must say where its link goes.',
    placeholders,
  };
}

function svgTitle(svg: Element): Element | undefined {
  return childElementsOf(svg).find((c) => tagOf(c) === 'title');
}

function fixGraphics(markup: Markup): Finding | null {
  const tally = new Tally();
  const placeholders: string[] = [];
  const graphics = elementsOf(markup.document, 'svg, [role="img"], object').filter(
    (el) => el.parentElement?.closest('svg') == null && el.getAttribute('aria-hidden') !== 'true',
  );
  for (const el of graphics) {
    const tag = tagOf(el);
    if (accessibleName(el) !== '') continue;
    if (tag === 'object') {
      if (collapse(el.textContent ?? '') !== '') continue; // fallback content is its alternative
      el.setAttribute('aria-label', Placeholder.object);
      placeholders.push(Placeholder.object);
      tally.add('an aria-label placeholder on', 'embedded object');
      continue;
    }
    const role = roleOf(el);
    const control = closestWhere(el, isControl);
    const decorative =
      role === 'presentation' ||
      role === 'none' ||
      (role === '' && control !== null && collapse(contentText(control)) !== '') ||
      (role === '' && classTokens(el).some((c) => DECORATIVE_WORD.test(c)));
    if (decorative) {
      if (role === '') el.setAttribute('aria-hidden', 'true');
      else continue;
      tally.add('aria-hidden="true" on', 'decorative graphic');
      continue;
    }
    if (role === '') el.setAttribute('role', 'img');
    const title = tag === 'svg' ? svgTitle(el) : undefined;
    if (title !== undefined) title.textContent = Placeholder.graphic;
    else el.setAttribute('aria-label', Placeholder.graphic);
    placeholders.push(Placeholder.graphic);
    tally.add(role === '' ? 'role="img" and a name placeholder on' : 'a name placeholder on', tag === 'svg' ? 'SVG' : 'graphic');
  }
  if (tally.total === 0) return null;
  return {
    count: tally.total,
    headline: `names for ${plural(tally.total, 'graphic')}`,
    restructured: false,
    summary: `Graphics had no accessible name: added ${tally.describe()}`,
    check: 'Describe what each graphic conveys; if one is purely decorative, use aria-hidden="true" instead of a name.',
    placeholders,
  };
}

const FIXERS: readonly Fixer[] = [fixImages, fixImageButtons, fixAreas, fixGraphics];

export const nonTextContent: Recipe = {
  criteria: ['1.1.1'],
  draft(input: FixInput): FixResult {
    return draftWithFixers(
      input,
      FIXERS,
      'No image, image button, area or graphic without a text alternative was found in the snippet; check the element the scanner reported in the live page.',
    );
  },
};
