/**
 * Guesses what an icon-only control does from the icon's class names, sprite id or file name
 * ("fa-search", "icon-close", "#icon-menu", "cart.svg"). The guess is a hint for a human to confirm.
 */
import { classTokens, elementsOf, tagOf } from './dom.js';

// Token → label. Tokens are whole words of class names, split on "-" and "_".
const HINTS: ReadonlyArray<readonly [readonly string[], string]> = [
  [['search', 'magnifier', 'magnifying', 'loupe'], 'Search'],
  [['close', 'times', 'xmark', 'dismiss', 'cross'], 'Close'],
  [['menu', 'hamburger', 'bars', 'burger', 'navicon'], 'Menu'],
  [['cart', 'basket', 'bag', 'shopping'], 'Shopping cart'],
  [['user', 'account', 'profile', 'person', 'avatar'], 'Account'],
  [['home', 'house'], 'Home'],
  [['play'], 'Play'],
  [['pause'], 'Pause'],
  [['stop'], 'Stop'],
  [['mute', 'volume'], 'Mute'],
  [['next', 'forward'], 'Next'],
  [['prev', 'previous', 'back'], 'Previous'],
  [['share'], 'Share'],
  [['print', 'printer'], 'Print'],
  [['edit', 'pencil', 'pen'], 'Edit'],
  [['delete', 'trash', 'bin', 'remove'], 'Delete'],
  [['download'], 'Download'],
  [['upload'], 'Upload'],
  [['settings', 'cog', 'gear', 'preferences'], 'Settings'],
  [['help', 'question'], 'Help'],
  [['info', 'information'], 'More information'],
  [['mail', 'envelope', 'email'], 'Email'],
  [['phone', 'call', 'telephone'], 'Phone'],
  [['facebook'], 'Facebook'],
  [['twitter'], 'Twitter'],
  [['instagram'], 'Instagram'],
  [['linkedin'], 'LinkedIn'],
  [['youtube'], 'YouTube'],
  [['github'], 'GitHub'],
  [['mastodon'], 'Mastodon'],
  [['whatsapp'], 'WhatsApp'],
  [['rss', 'feed'], 'RSS feed'],
  [['filter'], 'Filter'],
  [['sort'], 'Sort'],
  [['plus', 'add'], 'Add'],
  [['minus'], 'Remove'],
  [['expand'], 'Expand'],
  [['collapse'], 'Collapse'],
  [['heart', 'favorite', 'favourite', 'star'], 'Add to favourites'],
  [['bell', 'notification', 'notifications'], 'Notifications'],
  [['calendar'], 'Calendar'],
  [['globe', 'language', 'translate'], 'Language'],
  [['login', 'signin'], 'Sign in'],
  [['logout', 'signout'], 'Sign out'],
  [['copy', 'clipboard'], 'Copy'],
  [['refresh', 'reload', 'sync'], 'Refresh'],
  [['lock'], 'Lock'],
  [['map', 'location', 'marker', 'pin'], 'Location'],
];

// Arrows and chevrons are directional words that only mean something as a pair.
const DIRECTIONAL: ReadonlyArray<readonly [string, string]> = [
  ['right', 'Next'],
  ['left', 'Previous'],
  ['up', 'Back to top'],
  ['down', 'Expand'],
];

function tokensOf(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((t) => t !== '');
}

function hintFromTokens(tokens: readonly string[]): string | null {
  if (tokens.includes('totop') || tokens.includes('backtotop') || (tokens.includes('back') && tokens.includes('top'))) return 'Back to top';
  for (const [words, label] of HINTS) if (words.some((w) => tokens.includes(w))) return label;
  if (tokens.some((t) => t === 'arrow' || t === 'chevron' || t === 'caret' || t === 'angle')) {
    for (const [dir, label] of DIRECTIONAL) if (tokens.includes(dir)) return label;
  }
  return null;
}

/** A label suggested by the icon inside (or on) a control, or null when nothing recognisable is there. */
export function iconHint(control: Element): string | null {
  const sources: string[] = [];
  for (const el of [control, ...elementsOf(control, '*')]) {
    sources.push(...classTokens(el));
    for (const name of ['data-icon', 'data-feather', 'data-lucide', 'icon', 'name']) {
      const v = el.getAttribute(name);
      if (v !== null && tagOf(el) !== 'input') sources.push(v);
    }
    const ref = el.getAttribute('href') ?? el.getAttribute('xlink:href');
    if (tagOf(el) === 'use' && ref !== null) sources.push(ref.replace(/^.*#/, ''));
    const src = el.getAttribute('src');
    if (src !== null) sources.push((src.split(/[?#]/)[0] ?? '').replace(/^.*\//, '').replace(/\.[a-z0-9]+$/i, ''));
  }
  return hintFromTokens(sources.flatMap(tokensOf));
}
