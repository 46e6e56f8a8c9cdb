/**
 * 2.4.4 Link Purpose (In Context): links with no name get one, and vague links ("Read more", "hier",
 * "cliquez ici") get an aria-label that starts with their visible text (so 2.5.3 Label in Name still holds)
 * and adds where they go.
 */
import { accessibleName, collapse, contentText, elementsOf, isHiddenFromAssistiveTech, plural, quote } from '../dom.js';
import { draftWithFixers, type Finding } from '../drafting.js';
import { iconHint } from '../icon-hints.js';
import { headingHint, hrefHint, nearestHeadings } from '../link-hints.js';
import type { Markup } from '../markup.js';
import { Placeholder, type FixInput, type FixResult, type Recipe } from '../model.js';
import { Tally } from '../tally.js';

// Link texts that say nothing about the target, by language (compared lower-case, without punctuation).
const VAGUE_LINK_TEXTS = new Set([
  // en
  'click here', 'click', 'here', 'read more', 'more', 'link', 'this link', 'learn more', 'more info', 'more information',
  'details', 'continue', 'continue reading', 'go', 'see more', 'view more', 'info', 'this', 'click this', 'find out more', 'view', 'open',
  // de
  'hier', 'hier klicken', 'klicken sie hier', 'klick hier', 'mehr', 'weiter', 'weiterlesen', 'mehr erfahren', 'mehr lesen',
  'mehr infos', 'mehr informationen', 'zum artikel', 'link', 'details ansehen', 'mehr dazu', 'lesen',
  // fr
  'ici', 'cliquez ici', 'cliquer ici', 'en savoir plus', 'lire la suite', 'plus', 'suite', 'lien', 'voir plus', 'la suite', 'lire plus', 'en lire plus',
  // es
  'aquí', 'aqui', 'haga clic aquí', 'haz clic aquí', 'leer más', 'más', 'mas', 'más información', 'ver más', 'enlace', 'seguir leyendo',
  // nl
  'klik hier', 'lees meer', 'meer', 'meer info', 'meer informatie', 'verder lezen',
  // it
  'qui', 'clicca qui', 'leggi di più', 'altro', 'scopri di più', 'continua', 'leggi tutto',
]);

/** Visible link text without decoration: "Read more »" → "Read more". */
export function visibleCore(text: string): string {
  return collapse(text).replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
}

export function isVagueLinkText(text: string): boolean {
  return VAGUE_LINK_TEXTS.has(visibleCore(text).toLowerCase().replace(/[.,:;!?…]+/g, '').replace(/\s+/g, ' '));
}

function links(doc: Document): Element[] {
  return elementsOf(doc, 'a[href], [role="link"]').filter((a) => !isHiddenFromAssistiveTech(a));
}

/** A link with no name: an image gets alt text, an icon an aria-label, an empty link visible text. */
function nameEmptyLink(link: Element, placeholders: string[], tally: Tally): void {
  const img = elementsOf(link, 'img').find((i) => (i.getAttribute('alt') ?? '').trim() === '');
  const hint = iconHint(link) ?? hrefHint(link.getAttribute('href'));
  if (img !== undefined) {
    img.setAttribute('alt', hint ?? Placeholder.linkTarget);
    if (hint === null) placeholders.push(Placeholder.linkTarget);
    tally.add('alt text on the only image of', 'link');
  } else if (link.firstElementChild !== null) {
    link.setAttribute('aria-label', hint ?? Placeholder.linkTarget);
    if (hint === null) placeholders.push(Placeholder.linkTarget);
    tally.add('an aria-label on', 'icon-only link');
  } else {
    // Nothing inside at all: visible text helps everyone, not only screen-reader users.
    link.textContent = hint ?? Placeholder.linkTarget;
    if (hint === null) placeholders.push(Placeholder.linkTarget);
    tally.add('visible text in', 'empty link');
  }
}

function fixLinkPurpose(markup: Markup): Finding | null {
  const tally = new Tally();
  const placeholders: string[] = [];
  const labels: string[] = [];
  const all = links(markup.document);
  // The headings are read before any link changes (the changes never add or move one).
  const headings = nearestHeadings(markup.document, all);
  for (const link of all) {
    const name = accessibleName(link);
    if (name === '') {
      nameEmptyLink(link, placeholders, tally);
      continue;
    }
    const visible = collapse(contentText(link));
    if (!isVagueLinkText(name) || visible === '') continue;
    const titleHint = (link.getAttribute('title') ?? '').trim();
    const hint = (titleHint !== '' && !isVagueLinkText(titleHint) ? titleHint : null) ?? headingHint(headings.get(link)) ?? hrefHint(link.getAttribute('href'));
    const label = `${visibleCore(visible)}: ${hint ?? Placeholder.linkTarget}`;
    link.setAttribute('aria-label', label);
    labels.push(label);
    if (hint === null) placeholders.push(Placeholder.linkTarget);
    tally.add('an aria-label starting with the visible text on', 'vague link');
  }
  if (tally.total === 0) return null;
  const example = labels.length === 1 ? ` (${quote(labels[0]!, 80)})` : '';
  return {
    count: tally.total,
    headline: `names for ${plural(tally.total, 'link')}`,
    restructured: false,
    summary: `Links had no text or only vague text, so their purpose was unclear out of context: added ${tally.describe()}${example}`,
    check:
      placeholders.length > 0
        ? `Replace "${Placeholder.linkTarget}" with the link's destination; keep the visible words at the start of any aria-label.`
        : 'Check that each added name really describes where the link goes; better still, make the visible text itself descriptive.',
    placeholders,
  };
}

export const linkPurpose: Recipe = {
  criteria: ['2.4.4'],
  draft(input: FixInput): FixResult {
    return draftWithFixers(input, [fixLinkPurpose], 'No link without a name or with vague text ("click here", "read more") was found in the snippet; check the reported link in its context.');
  },
};
