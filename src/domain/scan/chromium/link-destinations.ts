/**
 * 2.4.4, links named alike (ACT fd3a94): links with the same name in the same context must lead
 * to the same resource or to equivalent ones, redirects that happen at once included. The DOM
 * survey reports each group of such links whose targets differ; in a browser the targets can be
 * followed as a person follows them, so a group is reported only when they may really differ:
 *
 * - each target on the page's own site is opened: an HTTP redirect and a meta refresh of 0 seconds
 *   are followed (a later refresh is not instant and is not), and its scripts run (a page that
 *   shows one section or another by its query string shows what a person would see);
 * - targets that end at the same URL are the same resource;
 * - targets whose main content (the main landmark, or the body without one) shows the same text are
 *   equivalent: a copy of a page, the same page under another path, one section reached from two
 *   menus whose navigation differs around it.
 *
 * A group is cleared only when every target is settled that way. A target on another site (not
 * fetched for a link comparison), one that does not load or is not HTML, one that shows no text,
 * or a group with more targets than are opened keeps the group for a person to review.
 */
import { refreshOf } from '../axe-results.js';

/** A target as followed: where it ended up and the text of its main content. */
export interface Destination {
  url: string;
  text: string;
}

/** Opens one target (an absolute URL without fragment) as a person following the link would see it; null when it could not be. */
export type OpenDestination = (url: string) => Promise<Destination | null>;

/** A group with more targets than this is left for review without opening any. */
export const MAX_GROUP_TARGETS = 4;
/** Targets opened for one page, at most. */
export const MAX_DESTINATIONS = 8;
/** Redirects followed from one target. */
export const MAX_REDIRECTS = 3;

/**
 * Whether followed targets are one resource or equivalent ones: each settled, and all at one URL
 * or all showing the same non-empty main text.
 */
export function equivalentDestinations(destinations: readonly (Destination | null)[]): boolean {
  if (destinations.length < 2 || destinations.some((d) => d === null)) return false;
  const settled = destinations as Destination[];
  if (settled.every((d) => d.url === settled[0]!.url)) return true;
  const text = settled[0]!.text;
  return text !== '' && settled.every((d) => d.text === text);
}

/** Targets opened at once. */
export const OPEN_AT_ONCE = 2;

/**
 * The selectors of the links whose group turned out to lead to one resource or equivalent ones.
 * Only targets on the page's own origin are opened, at most MAX_DESTINATIONS for the page,
 * OPEN_AT_ONCE at a time; a target not settled within `budgetMs` (from the call) counts as not
 * followed, and the groups settled by then are still cleared.
 */
export async function equivalentLinks(groups: readonly { selectors: string[]; targets: string[] }[], pageUrl: string, open: OpenDestination, budgetMs = Infinity): Promise<Set<string>> {
  const origin = new URL(pageUrl).origin;
  const chosen: { selectors: string[]; targets: string[] }[] = [];
  const wanted = new Set<string>();
  for (const group of groups) {
    if (group.targets.length < 2 || group.targets.length > MAX_GROUP_TARGETS) continue;
    if (group.targets.some((t) => originOf(t) !== origin)) continue;
    const fresh = group.targets.filter((t) => !wanted.has(t));
    if (wanted.size + fresh.length > MAX_DESTINATIONS) continue;
    for (const target of fresh) wanted.add(target);
    chosen.push(group);
  }
  if (chosen.length === 0) return new Set();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<null>((resolve) => { if (Number.isFinite(budgetMs)) timer = setTimeout(resolve, budgetMs, null); });
  // OPEN_AT_ONCE workers take the targets in order.
  const queue = [...wanted];
  const settled = new Map<string, Destination | null>();
  const worker = async () => {
    for (let target = queue.shift(); target !== undefined; target = queue.shift()) {
      settled.set(target, await open(target).catch(() => null));
    }
  };
  await Promise.race([Promise.all(Array.from({ length: OPEN_AT_ONCE }, worker)), expired]);
  clearTimeout(timer);
  const cleared = new Set<string>();
  for (const group of chosen) {
    const destinations = group.targets.map((t) => settled.get(t) ?? null);
    if (equivalentDestinations(destinations)) for (const selector of group.selectors) cleared.add(selector);
  }
  return cleared;
}

function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/**
 * The URL an instant meta refresh goes to: the first `<meta http-equiv="refresh">` whose content
 * parses (the one a browser acts on), when its delay is 0 and it names a URL, resolved against
 * `base` and without fragment; otherwise null. The content is read as the HTML standard's shared
 * declarative refresh steps read it: the delay, then `;` or `,`, then `URL=` (optional, any case),
 * then the URL, in quotes or not.
 */
export function instantRefresh(contents: readonly string[], base: string): string | null {
  const content = contents.find((c) => refreshOf(c) !== null);
  if (content === undefined || refreshOf(content) !== 0) return null;
  let rest = content.replace(/^[\t\n\f\r ]*[0-9]*[0-9.]*/, '').replace(/^[\t\n\f\r ]*[;,]?[\t\n\f\r ]*/, '');
  const named = /^url[\t\n\f\r ]*=[\t\n\f\r ]*/i.exec(rest);
  if (named) rest = rest.slice(named[0].length);
  const quote = rest[0] === '"' || rest[0] === "'" ? rest[0] : null;
  if (quote) {
    const end = rest.indexOf(quote, 1);
    rest = end === -1 ? rest.slice(1) : rest.slice(1, end);
  }
  rest = rest.trim();
  if (rest === '') return null;
  try {
    const url = new URL(rest, base);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    url.hash = '';
    return url.href;
  } catch {
    return null;
  }
}

/** Runs in the opened target: its meta refresh contents and the shown text of its main content. */
export function destinationFacts(doc: Document): { refresh: string[]; text: string } {
  const refresh = Array.from(doc.querySelectorAll('meta'))
    .filter((m) => (m.getAttribute('http-equiv') ?? '').trim().toLowerCase() === 'refresh')
    .map((m) => m.getAttribute('content') ?? '');
  const main = doc.querySelector<HTMLElement>('main, [role="main"]') ?? doc.body;
  const text = main ? main.innerText : '';
  return { refresh, text: text.replace(/\s+/g, ' ').trim().slice(0, 20_000) };
}
