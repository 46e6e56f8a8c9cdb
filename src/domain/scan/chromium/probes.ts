/**
 * In-page halves of the browser-only checks (keyboard, focus, playback, layout). Self-contained
 * functions evaluated with pageCall(): see ../checks/page-functions.ts for why.
 */

export interface FocusState {
  /** Position in the tabbable list taken before the first Tab, or -1 (body, or something not listed). */
  index: number;
  selector: string;
  html: string;
  /** Whether anything painted about the element (or its parent, or its ::before/::after) differs from before it had focus. */
  changed: boolean;
  /** The focused element's outline and box-shadow, for the evidence. */
  look: string;
}

/** What the recorder keeps of the focus at one moment; described for the report later (focusStates). */
interface FocusMoment {
  el: Element | null;
  index: number;
  changed: boolean;
  look: string;
}

interface FocusMemo {
  list: Element[];
  before: string[];
  look: (el: Element) => string;
  moment: () => FocusMoment;
  recorded: FocusMoment[];
}

/**
 * Lists the tabbable elements and remembers how each looks without focus; returns how many. It
 * also starts a recorder: at each trusted Tab keydown it notes where focus is, which is where the
 * previous press left it, so presses need no evaluate of their own between them.
 */
export function focusSnapshot(doc: Document, max: number): number {
  const win = doc.defaultView! as Window & { __pactumFocus?: FocusMemo };
  const candidates = Array.from(doc.querySelectorAll('a[href], area[href], button, input, select, textarea, iframe, summary, [tabindex], [contenteditable="true"]'));
  const list = candidates.filter((el) => {
    const tabindex = el.getAttribute('tabindex');
    if (tabindex !== null && Number(tabindex) < 0) return false;
    if ((el as HTMLButtonElement).disabled) return false;
    if (el.localName === 'input' && (el as HTMLInputElement).type === 'hidden') return false;
    if (el.closest('[inert], [hidden]')) return false;
    const style = win.getComputedStyle(el);
    return el.getClientRects().length > 0 && style.visibility === 'visible';
  }).slice(0, max);
  const PROPS = ['outline-style', 'outline-width', 'outline-color', 'box-shadow', 'border-top-color', 'border-bottom-color', 'border-left-color', 'border-right-color', 'border-bottom-width', 'background-color', 'background-image', 'color', 'text-decoration-line', 'transform', 'opacity'];
  const look = (el: Element) => {
    const parts: string[] = [];
    for (const pseudo of [null, '::before', '::after']) {
      const style = win.getComputedStyle(el, pseudo);
      parts.push(PROPS.map((p) => style.getPropertyValue(p)).join('|'));
    }
    if (el.parentElement) {
      const style = win.getComputedStyle(el.parentElement);
      parts.push(PROPS.map((p) => style.getPropertyValue(p)).join('|'));
    }
    // An indicator drawn by an element beside it (a marker the page shows on focus) counts too.
    for (const sibling of [el.previousElementSibling, el.nextElementSibling]) {
      if (!sibling) continue;
      const style = win.getComputedStyle(sibling);
      parts.push(`${PROPS.map((p) => style.getPropertyValue(p)).join('|')}|${style.display}|${style.visibility}`);
    }
    return parts.join('#');
  };
  const before = list.map(look);
  const moment = (): FocusMoment => {
    let active: Element | null = doc.activeElement;
    while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
    if (!active || active === doc.body || active === doc.documentElement) return { el: null, index: -1, changed: true, look: '' };
    let index = list.indexOf(active);
    if (index < 0) index = list.findIndex((el) => el.contains(active));
    const style = win.getComputedStyle(active);
    return { el: active, index, changed: index < 0 ? true : look(list[index]!) !== before[index], look: `outline: ${style.outlineStyle} ${style.outlineWidth}; box-shadow: ${style.boxShadow}` };
  };
  const first = !win.__pactumFocus;
  win.__pactumFocus = { list, before, look, moment, recorded: [] };
  // Capture on window: it runs before the page's own handlers on the page's elements.
  if (first) win.addEventListener('keydown', (e) => { if (e.isTrusted && e.key === 'Tab') win.__pactumFocus!.recorded.push(win.__pactumFocus!.moment()); }, true);
  const active = doc.activeElement as HTMLElement | null;
  if (active && active !== doc.body) active.blur();
  // Tab goes on from where focus last was even after a blur; an element focused at the top of the
  // body and then removed moves that starting point back to the top.
  if (doc.body) {
    const start = doc.createElement('span');
    start.tabIndex = -1;
    doc.body.prepend(start);
    start.focus({ preventScroll: true });
    start.remove();
  }
  return list.length;
}

/**
 * Where focus is now (`recorded` false: one state), or where each recorded Tab press left it
 * (`recorded` true: one state a press, the last being now), with selectors for the report.
 */
export function focusStates(doc: Document, recorded: boolean): FocusState[] {
  const win = doc.defaultView! as Window & { __pactumFocus?: FocusMemo };
  const memo = win.__pactumFocus!;
  const moments = recorded ? [...memo.recorded.slice(1), memo.moment()] : [memo.moment()];
  const esc = (s: string) => { const css = (win as unknown as { CSS?: { escape?(v: string): string } }).CSS; return css?.escape ? css.escape(s) : s; };
  const selectorOf = (el: Element): string => {
    const parts: string[] = [];
    let node: Element | null = el;
    while (node && node.nodeType === 1) {
      if (node.id && doc.querySelectorAll(`#${esc(node.id)}`).length === 1) { parts.unshift(`#${esc(node.id)}`); break; }
      const parent: Element | null = node.parentElement;
      let part = node.localName;
      if (parent) {
        const same = Array.from(parent.children).filter((c) => c.localName === node!.localName);
        if (same.length > 1) part += `:nth-of-type(${same.indexOf(node) + 1})`;
      }
      parts.unshift(part);
      if (doc.querySelectorAll(parts.join(' > ')).length === 1) break;
      node = parent;
    }
    return parts.join(' > ');
  };
  return moments.map((m) => {
    if (!m.el) return { index: -1, selector: 'body', html: '<body>', changed: true, look: '' };
    const outer = m.el.outerHTML;
    return { index: m.index, selector: selectorOf(m.el), html: outer.length <= 200 ? outer : outer.slice(0, outer.indexOf('>') + 1), changed: m.changed, look: m.look };
  });
}

/** How many Tab presses the recorder saw since the snapshot (a page may stop the event before it). */
export function recordedPresses(doc: Document): number {
  return (doc.defaultView! as Window & { __pactumFocus?: FocusMemo }).__pactumFocus!.recorded.length;
}

/**
 * Blurs whatever has focus and silences the page's media: the page waits, reused, for the next
 * check. Then a full garbage collection (`gc`, exposed by the engine's --js-flags), so the heaps
 * of the documents this page showed before do not pile up in its renderer.
 */
export function quiet(doc: Document): void {
  const active = doc.activeElement as HTMLElement | null;
  if (active && active !== doc.body) active.blur();
  for (const media of Array.from(doc.querySelectorAll<HTMLMediaElement>('audio, video'))) media.pause();
  (doc.defaultView as (Window & { gc?: () => void }) | null)?.gc?.();
}

export interface MediaState {
  selector: string;
  html: string;
  playing: boolean;
  audible: boolean;
  duration: number;
  controls: boolean;
  autoplayAttribute: boolean;
}

export interface PlaybackProbe {
  media: MediaState[];
  /** A button or link on the page whose name speaks of pausing, stopping or muting. */
  pageControl: string | null;
  /** Media that will start by itself but has not yet. */
  pending: number;
}

export function playbackProbe(doc: Document): PlaybackProbe {
  const win = doc.defaultView!;
  // How long it plays by itself, in seconds (-1: without end, a stream or a loop): a media
  // fragment (#t=8,10) plays only its range.
  const playedFor = (m: HTMLMediaElement): number => {
    if (m.duration === Infinity || m.loop) return -1;
    const full = Number.isFinite(m.duration) ? m.duration : 0;
    const range = /#t=(?:npt:)?([\d.]*)(?:,([\d.]+))?/.exec(m.currentSrc || '');
    const start = range?.[1] ? Number(range[1]) : 0;
    const end = range?.[2] ? Math.min(Number(range[2]), full) : full;
    return Math.max(0, end - start);
  };
  const esc = (s: string) => { const css = (win as unknown as { CSS?: { escape?(v: string): string } }).CSS; return css?.escape ? css.escape(s) : s; };
  const selectorOf = (el: Element): string => {
    if (el.id) return `#${esc(el.id)}`;
    const same = Array.from(doc.querySelectorAll(el.localName));
    return same.length === 1 ? el.localName : `${el.localName}:nth-of-type(${same.indexOf(el) + 1})`;
  };
  const media = Array.from(doc.querySelectorAll<HTMLMediaElement>('audio, video'));
  const CONTROL = /\b(pause|stop|mute|unmute|sound|audio|volume|pausieren|stumm|arr[eê]ter|silence)\b/i;
  const named = Array.from(doc.querySelectorAll('button, [role="button"], a, input[type="button"], input[type="checkbox"]'))
    .find((el) => CONTROL.test(`${el.textContent ?? ''} ${el.getAttribute('aria-label') ?? ''} ${el.getAttribute('title') ?? ''} ${el.getAttribute('value') ?? ''}`));
  return {
    media: media.map((m) => ({
      selector: selectorOf(m),
      html: m.outerHTML.slice(0, m.outerHTML.indexOf('>') + 1),
      playing: !m.paused && !m.ended && m.readyState >= 2,
      audible: !m.muted && m.volume > 0,
      duration: playedFor(m),
      controls: m.controls,
      autoplayAttribute: m.autoplay,
    })),
    pageControl: named ? (named.textContent ?? named.getAttribute('aria-label') ?? '').replace(/\s+/g, ' ').trim().slice(0, 60) : null,
    pending: media.filter((m) => m.autoplay && m.paused && !m.muted && m.readyState < 2 && m.networkState !== 3).length,
  };
}

export interface LayoutOffender {
  selector: string;
  html: string;
  /** Reflow: the element's width; clipping: the size its content needs against the box it has. */
  detail: string;
}

export interface LayoutProbe {
  viewport: number;
  documentWidth: number;
  /** Elements wider than the viewport (reflow), outermost first. */
  wide: LayoutOffender[];
  /** Text cut off by overflow: hidden or clip. */
  clipped: LayoutOffender[];
}

/** What does not fit at the current viewport: sideways scrolling and clipped text. */
export function layoutProbe(doc: Document, max: number): LayoutProbe {
  const win = doc.defaultView!;
  const vw = win.innerWidth;
  const root = doc.scrollingElement ?? doc.documentElement;
  const documentWidth = Math.max(root.scrollWidth, doc.body?.scrollWidth ?? 0);
  const esc = (s: string) => { const css = (win as unknown as { CSS?: { escape?(v: string): string } }).CSS; return css?.escape ? css.escape(s) : s; };
  const selectorOf = (el: Element): string => {
    const parts: string[] = [];
    let node: Element | null = el;
    while (node && node.nodeType === 1) {
      if (node.id && doc.querySelectorAll(`#${esc(node.id)}`).length === 1) { parts.unshift(`#${esc(node.id)}`); break; }
      const parent: Element | null = node.parentElement;
      let part = node.localName;
      if (parent) {
        const same = Array.from(parent.children).filter((c) => c.localName === node!.localName);
        if (same.length > 1) part += `:nth-of-type(${same.indexOf(node) + 1})`;
      }
      parts.unshift(part);
      if (doc.querySelectorAll(parts.join(' > ')).length === 1) break;
      node = parent;
    }
    return parts.join(' > ');
  };
  const open = (el: Element) => el.outerHTML.slice(0, el.outerHTML.indexOf('>') + 1);
  // Content that WCAG lets scroll in two dimensions (1.4.10's exceptions): tables, code, media, maps.
  const EXEMPT = 'table, pre, code, img, video, canvas, svg, iframe, object, embed, math, [role="img"], [role="application"]';
  const all = Array.from(doc.body?.querySelectorAll('*') ?? []);
  const wide: LayoutOffender[] = [];
  if (documentWidth > vw + 2) {
    for (const el of all) {
      if (wide.length >= max) break;
      if (el.closest(EXEMPT)) continue;
      const rect = el.getBoundingClientRect();
      if (rect.width <= vw + 2) continue;
      const parent = el.parentElement;
      if (parent && parent !== doc.body && parent.getBoundingClientRect().width > vw + 2 && !parent.closest(EXEMPT)) continue; // report the outermost
      wide.push({ selector: selectorOf(el), html: open(el), detail: `${Math.round(rect.width)} px wide` });
    }
  }
  const clipped: LayoutOffender[] = [];
  for (const el of all) {
    if (clipped.length >= max) break;
    const style = win.getComputedStyle(el);
    const hides = (v: string) => v === 'hidden' || v === 'clip';
    if (!hides(style.overflowX) && !hides(style.overflowY)) continue;
    if (el.clientWidth <= 2 || el.clientHeight <= 2) continue; // visually hidden text (sr-only) is meant to be cut
    if (!(el.textContent ?? '').trim()) continue;
    // Truncation a reader can see for what it is is not clipping: one line ended by an ellipsis
    // (nowrap with a text-overflow other than clip), and a box exactly one line high, which shows
    // one whole line (a shorter box cuts the line itself), as the ACT rule for clipped text (59br37) excepts them.
    const ellipsis = style.whiteSpace === 'nowrap' && style.textOverflow !== 'clip';
    const lineHeight = style.lineHeight === 'normal' ? 1.2 * parseFloat(style.fontSize) : parseFloat(style.lineHeight);
    const oneLine = Math.abs(lineHeight - el.getBoundingClientRect().height) <= 1;
    const overY = hides(style.overflowY) && el.scrollHeight > el.clientHeight + 2 && !oneLine;
    const overX = hides(style.overflowX) && el.scrollWidth > el.clientWidth + 2 && !ellipsis;
    if (!overY && !overX) continue;
    const need = overY ? `needs ${el.scrollHeight} px of height and has ${el.clientHeight}` : `needs ${el.scrollWidth} px of width and has ${el.clientWidth}`;
    clipped.push({ selector: selectorOf(el), html: open(el), detail: `${need} (overflow: ${overY ? style.overflowY : style.overflowX})` });
  }
  return { viewport: vw, documentWidth, wide, clipped };
}

/** One audio or video element as played: whether a person can see or start it, and whether it makes sound. */
export interface MediaFacts {
  selector: string;
  html: string;
  kind: 'audio' | 'video';
  visible: boolean;
  controls: boolean;
  autoplay: boolean;
  /** Its metadata loaded (a source that does not load is nothing to review). */
  loaded: boolean;
  /** Seconds; -1 for a stream (no end). */
  duration: number;
  /** Whether its audio is more than silence: decoded from the file; unknown when it could not be fetched or decoded in time. */
  sound: 'yes' | 'no' | 'unknown';
  /** The loudest sample of the audio decoded (0..1), for the evidence. */
  peak: number;
  tracks: string[];
  /** A link, button or text next to it naming a transcript, captions or an audio description. */
  alternative: string | null;
  /** Words of the longest shown block of text beside it (a transcript on the page may be one). */
  textWords: number;
}

/**
 * Waits (at most `waitMs` in all) for each audio and video element's metadata, then decodes its
 * audio (the file as the page loads it, up to `maxBytes`) to tell sound from silence, which no
 * media property says.
 */
export async function mediaProbe(doc: Document, opts: { waitMs: number; maxBytes: number; firstBytes: number }): Promise<MediaFacts[]> {
  const win = doc.defaultView! as Window & { OfflineAudioContext?: typeof OfflineAudioContext };
  const media = Array.from(doc.querySelectorAll<HTMLMediaElement>('audio, video')).slice(0, 10);
  if (media.length === 0) return [];
  const esc = (s: string) => { const css = (win as unknown as { CSS?: { escape?(v: string): string } }).CSS; return css?.escape ? css.escape(s) : s; };
  const selectorOf = (el: Element): string => {
    if (el.id && doc.querySelectorAll(`#${esc(el.id)}`).length === 1) return `#${esc(el.id)}`;
    const same = Array.from(doc.querySelectorAll(el.localName));
    return same.length === 1 ? el.localName : `${el.localName}:nth-of-type(${same.indexOf(el) + 1})`;
  };
  const deadline = Date.now() + opts.waitMs;
  // Only media still loading is waited for: one idle without metadata (preload="none") loads nothing until played.
  await Promise.all(media.filter((m) => m.readyState < 1 && m.networkState === m.NETWORK_LOADING).map((m) => new Promise<void>((ok) => {
    const done = () => ok();
    m.addEventListener('loadedmetadata', done, { once: true });
    m.addEventListener('error', done, { once: true });
    for (const source of Array.from(m.querySelectorAll('source'))) source.addEventListener('error', done, { once: true });
    setTimeout(done, Math.max(0, deadline - Date.now()));
  })));
  const ALTERNATIVE = /transcript|caption|subtitle|text version|audio description|described|alternative/i;
  const nameOf = (el: Element) => `${el.textContent ?? ''} ${el.getAttribute('aria-label') ?? ''} ${el.getAttribute('href') ?? ''}`.replace(/\s+/g, ' ').trim();
  const soundOf = async (m: HTMLMediaElement): Promise<{ sound: MediaFacts['sound']; peak: number }> => {
    const src = m.currentSrc;
    if (!src || !win.OfflineAudioContext || !/^https?:/.test(src)) return { sound: 'unknown', peak: 0 };
    try {
      const response = await win.fetch(src);
      if (!response.ok || Number(response.headers.get('content-length') ?? 0) > opts.maxBytes) return { sound: 'unknown', peak: 0 };
      const bytes = await response.arrayBuffer();
      if (bytes.byteLength > opts.maxBytes) return { sound: 'unknown', peak: 0 };
      const peakOf = async (data: ArrayBuffer): Promise<number> => {
        const audio = await new win.OfflineAudioContext!(1, 1, 8000).decodeAudioData(data);
        let loudest = 0;
        for (let c = 0; c < audio.numberOfChannels; c++) {
          const samples = audio.getChannelData(c);
          for (let i = 0; i < samples.length; i += 5) loudest = Math.max(loudest, Math.abs(samples[i]!));
        }
        return loudest;
      };
      // Sound in its first bytes decides it: the rest is decoded only when those are silent or do not decode alone.
      if (bytes.byteLength > opts.firstBytes) {
        const early = await peakOf(bytes.slice(0, opts.firstBytes)).catch(() => 0);
        if (early > 0.01) return { sound: 'yes', peak: early };
      }
      let peak: number;
      try {
        peak = await peakOf(bytes);
      } catch {
        return { sound: 'no', peak: 0 }; // the file loads as media but holds no audio stream
      }
      return { sound: peak > 0.01 ? 'yes' : 'no', peak };
    } catch {
      return { sound: 'unknown', peak: 0 };
    }
  };
  const facts: MediaFacts[] = [];
  for (const m of media) {
    const style = win.getComputedStyle(m);
    const visible = m.getClientRects().length > 0 && style.visibility === 'visible' && Number(style.opacity) > 0;
    const loaded = m.readyState >= 1;
    const around = m.closest('figure, section, article, li, div, main, body') ?? m.parentElement;
    const near = around ? Array.from(around.querySelectorAll('a, button, summary, p, figcaption, [id]')).find((el) => el !== m && ALTERNATIVE.test(nameOf(el))) : undefined;
    let textWords = 0;
    for (const block of Array.from(around?.querySelectorAll('p, blockquote, figcaption, dd, li, td, pre, details') ?? [])) {
      if (block.getClientRects().length === 0 || win.getComputedStyle(block).visibility !== 'visible') continue;
      textWords = Math.max(textWords, (block.textContent ?? '').split(/\s+/).filter(Boolean).length);
    }
    const { sound, peak } = loaded ? await soundOf(m) : { sound: 'unknown' as const, peak: 0 };
    const outer = m.outerHTML;
    facts.push({
      selector: selectorOf(m),
      html: outer.slice(0, outer.indexOf('>') + 1),
      kind: m.localName === 'video' ? 'video' : 'audio',
      visible,
      controls: m.controls,
      autoplay: m.autoplay,
      loaded,
      duration: Number.isFinite(m.duration) ? m.duration : m.duration === Infinity ? -1 : 0,
      sound,
      peak,
      tracks: Array.from(m.querySelectorAll('track')).map((t) => `${(t.getAttribute('kind') ?? 'subtitles').toLowerCase()}${t.getAttribute('src') ? ` (${t.getAttribute('src')})` : ''}`),
      alternative: near ? nameOf(near).slice(0, 80) : null,
      textWords,
    });
  }
  return facts;
}

/** How long after load a page that may update text is watched: two changes of a one-second ticker. */
export const TEXT_WATCH_MS = 2600;

/**
 * Installed in every document before its scripts run (the engine's init script): notes each text
 * change after the page loaded (the element, when, and its text then) and the page's intervals
 * still running that can tick twice within TEXT_WATCH_MS (a slower one changes text at most once
 * while the page is watched, and a cleared one, such as a poll that found what it waited for, not
 * at all), so that text that updates by itself can be told later without watching every page for seconds.
 */
export const TEXT_CHANGE_RECORDER = `(() => {
  if (window.top !== window || window.__pactumText) return;
  const rec = { loadedAt: -1, intervals: new Set(), changes: [] };
  Object.defineProperty(window, '__pactumText', { value: rec });
  const setInterval_ = window.setInterval;
  const clearInterval_ = window.clearInterval;
  window.setInterval = function (fn, ms, ...rest) {
    const id = setInterval_.call(this, fn, ms, ...rest);
    if (!(Number(ms) > ${TEXT_WATCH_MS})) rec.intervals.add(id);
    return id;
  };
  window.clearInterval = function (id) {
    rec.intervals.delete(id);
    return clearInterval_.call(this, id);
  };
  window.addEventListener('load', () => {
    rec.loadedAt = performance.now();
    new MutationObserver((list) => {
      for (const m of list) {
        const el = m.type === 'characterData' ? m.target.parentElement : m.target;
        if (el && el.nodeType === 1 && rec.changes.length < 2000) rec.changes.push([el, performance.now(), (el.textContent || '').slice(0, 200)]);
      }
    }).observe(document.documentElement, { subtree: true, childList: true, characterData: true });
  });
})();`;

export interface TextUpdates {
  /** Milliseconds since the page's load event (-1: not loaded, or the recorder is missing). */
  sinceLoad: number;
  /** Whether the page may update text by itself: it has short intervals running, or text already changed. */
  likely: boolean;
  /** Visible elements whose text changed at least twice after load, innermost only. */
  changed: { selector: string; html: string; changes: number; seconds: number; text: string }[];
  /** Buttons or links whose name speaks of pausing, stopping or hiding. */
  control: string | null;
}

export function textUpdates(doc: Document): TextUpdates {
  type Rec = { loadedAt: number; intervals: Set<number>; changes: [Element, number, string][] };
  const win = doc.defaultView! as Window & { __pactumText?: Rec };
  const rec = win.__pactumText;
  const CONTROL = /\b(pause|stop|hide|freeze|resume|frequency|control)\b/i;
  const controlEl = Array.from(doc.querySelectorAll('button, [role="button"], a, input[type="button"], input[type="checkbox"], input[type="submit"]'))
    .find((el) => CONTROL.test(`${el.textContent ?? ''} ${el.getAttribute('aria-label') ?? ''} ${el.getAttribute('value') ?? ''}`));
  const control = controlEl ? `${controlEl.textContent ?? ''} ${controlEl.getAttribute('aria-label') ?? ''} ${controlEl.getAttribute('value') ?? ''}`.replace(/\s+/g, ' ').trim().slice(0, 60) : null;
  if (!rec || rec.loadedAt < 0) return { sinceLoad: -1, likely: false, changed: [], control };
  const byElement = new Map<Element, { texts: Set<string>; first: number; last: number }>();
  for (const [el, at, text] of rec.changes) {
    const entry = byElement.get(el) ?? { texts: new Set<string>(), first: at, last: at };
    entry.texts.add(text);
    entry.last = at;
    byElement.set(el, entry);
  }
  const esc = (s: string) => { const css = (win as unknown as { CSS?: { escape?(v: string): string } }).CSS; return css?.escape ? css.escape(s) : s; };
  const selectorOf = (el: Element): string => {
    const parts: string[] = [];
    for (let node: Element | null = el; node && node.nodeType === 1; node = node.parentElement) {
      if (node.id && doc.querySelectorAll(`#${esc(node.id)}`).length === 1) { parts.unshift(`#${esc(node.id)}`); break; }
      const parent: Element | null = node.parentElement;
      let part = node.localName;
      if (parent) {
        const same = Array.from(parent.children).filter((c) => c.localName === node.localName);
        if (same.length > 1) part += `:nth-of-type(${same.indexOf(node) + 1})`;
      }
      parts.unshift(part);
      if (doc.querySelectorAll(parts.join(' > ')).length === 1) break;
    }
    return parts.join(' > ');
  };
  // Changed at least twice (two texts seen after load, each one a change), still in the page and visible.
  const candidates = [...byElement].filter(([el, e]) => e.texts.size >= 2 && el.isConnected && el !== doc.body && el !== doc.documentElement
    && el.getClientRects().length > 0 && win.getComputedStyle(el).visibility === 'visible' && ((el as HTMLElement).innerText ?? '').trim() !== '');
  const innermost = candidates.filter(([el]) => !candidates.some(([other]) => other !== el && el.contains(other)));
  // "Not alone": the changing text is part of something larger (a lone clock page is the content itself).
  const changed = innermost.filter(([el]) => {
    for (let node = el.parentElement; node; node = node.parentElement) {
      const text = node.innerText?.trim() ?? '';
      if (text && text !== (el as HTMLElement).innerText.trim()) return true;
    }
    return false;
  }).slice(0, 5).map(([el, e]) => {
    const outer = el.outerHTML;
    return { selector: selectorOf(el), html: outer.length <= 200 ? outer : outer.slice(0, outer.indexOf('>') + 1), changes: e.texts.size, seconds: (e.last - e.first) / 1000, text: ((el as HTMLElement).innerText ?? '').trim().slice(0, 60) };
  });
  return { sinceLoad: performance.now() - rec.loadedAt, likely: rec.intervals.size > 0 || byElement.size > 0, changed, control };
}

/**
 * Installed in every document before its scripts run (the engine's init script): counts the
 * listeners the window registers for device motion and orientation, which no DOM property shows.
 */
export const MOTION_RECORDER = `(() => {
  if (window.__pactumMotion) return;
  const rec = { listeners: 0 };
  Object.defineProperty(window, '__pactumMotion', { value: rec });
  const MOTION = /^device(motion|orientation|orientationabsolute)$/;
  const add = window.addEventListener;
  const remove = window.removeEventListener;
  window.addEventListener = function (type, listener, options) {
    if (this === window && MOTION.test(String(type)) && listener) rec.listeners++;
    return add.call(this, type, listener, options);
  };
  window.removeEventListener = function (type, listener, options) {
    if (this === window && MOTION.test(String(type)) && listener && rec.listeners > 0) rec.listeners--;
    return remove.call(this, type, listener, options);
  };
})();`;

export interface MotionProbe {
  /** Listeners for device motion or orientation the window has (registered, or an on* property). */
  listeners: number;
  /** What fired motion changed: the elements (innermost) whose text, attributes or value changed. */
  changed: { selector: string; html: string }[];
  /** A control that makes the same change (a button, or the changed control itself, enabled). */
  alternative: string | null;
  /** A control after whose activation motion no longer changes anything. */
  disabler: string | null;
  /** Controls tried. */
  tried: number;
}

/**
 * 2.5.4: fires device orientation and motion events at the window (tilted and rotated both ways)
 * and notes what they change. When they change something, tries the page's controls (buttons,
 * checkboxes, switches, sliders; never links or submit buttons, and a scan's requests are GET
 * only): one that changes the same elements is a way to do it from the interface, one after which
 * motion changes nothing is a way to turn motion off.
 */
export async function motionProbe(doc: Document, maxControls: number): Promise<MotionProbe> {
  const win = doc.defaultView! as Window & typeof globalThis & { __pactumMotion?: { listeners: number } };
  const listeners = (win.__pactumMotion?.listeners ?? 0) + (typeof win.ondevicemotion === 'function' ? 1 : 0) + (typeof win.ondeviceorientation === 'function' ? 1 : 0);
  const none: MotionProbe = { listeners, changed: [], alternative: null, disabler: null, tried: 0 };
  if (listeners === 0) return none;
  const settle = () => new Promise<void>((ok) => setTimeout(ok, 60));
  const FIELDS = 'input, select, textarea';
  const valuesOf = () => new Map(Array.from(doc.querySelectorAll<HTMLInputElement>(FIELDS)).map((el) => [el as Element, `${el.value}|${el.checked}`]));
  /** Runs `act` and answers the elements it changed: mutation targets and fields whose value changed at any step. */
  const watch = async (act: (step: () => void) => void | Promise<void>): Promise<Set<Element>> => {
    const changed = new Set<Element>();
    const observer = new win.MutationObserver((list) => {
      for (const m of list) {
        const el = m.target.nodeType === 1 ? (m.target as Element) : m.target.parentElement;
        if (el) changed.add(el);
      }
    });
    observer.observe(doc.documentElement, { subtree: true, childList: true, characterData: true, attributes: true });
    let values = valuesOf();
    const step = () => {
      const now = valuesOf();
      for (const [el, value] of now) if (values.has(el) && values.get(el) !== value) changed.add(el);
      values = now;
    };
    await act(step);
    await settle();
    step();
    for (const m of observer.takeRecords()) {
      const el = m.target.nodeType === 1 ? (m.target as Element) : m.target.parentElement;
      if (el) changed.add(el);
    }
    observer.disconnect();
    return changed;
  };
  const fire = (step: () => void) => {
    for (const sign of [1, -1, 1]) {
      const orientation = { alpha: sign > 0 ? 90 : 270, beta: 45 * sign, gamma: 45 * sign, absolute: false };
      win.dispatchEvent(new win.DeviceOrientationEvent('deviceorientation', orientation));
      win.dispatchEvent(new win.DeviceOrientationEvent('deviceorientationabsolute', { ...orientation, absolute: true }));
      step();
      const v = 30 * sign;
      win.dispatchEvent(new win.DeviceMotionEvent('devicemotion', {
        acceleration: { x: v / 3, y: v / 3, z: v / 3 }, accelerationIncludingGravity: { x: v / 3, y: v / 3, z: 9.8 + v / 3 },
        rotationRate: { alpha: v, beta: v, gamma: v }, interval: 16,
      }));
      step();
    }
  };
  // What changes by itself meanwhile (a ticker, an animation's attributes) is not motion's doing.
  const background = await watch(() => undefined);
  const touched = new Set([...(await watch(fire))].filter((el) => ![...background].some((b) => b === el || b.contains(el) || el.contains(b))));
  if (touched.size === 0) return none;
  const related = (changed: Set<Element>) => [...changed].some((el) => [...touched].some((t) => t === el || t.contains(el) || el.contains(t)));
  const nameOf = (el: Element) => {
    const label = (el as HTMLInputElement).labels?.[0]?.textContent ?? '';
    return `${el.getAttribute('aria-label') ?? ''} ${el.textContent ?? ''} ${label} ${(el as HTMLInputElement).value && el.localName === 'input' && /button/.test((el as HTMLInputElement).type) ? (el as HTMLInputElement).value : ''}`.replace(/\s+/g, ' ').trim().slice(0, 60) || el.localName;
  };
  const operable = (el: Element) => !(el as HTMLButtonElement).disabled && !el.closest('[inert], [aria-disabled="true"]');
  const controls = Array.from(doc.querySelectorAll('button, input[type="button"], input[type="checkbox"], input[type="range"], input[type="number"], [role="button"], [role="switch"], [role="checkbox"], [role="slider"]'))
    .filter((el) => operable(el) && !(el.localName === 'button' && (el as HTMLButtonElement).type !== 'button' && (el as HTMLButtonElement).form))
    .slice(0, maxControls);
  const activate = (el: Element) => {
    if (el.localName === 'input' && /^(range|number)$/.test((el as HTMLInputElement).type)) {
      const input = el as HTMLInputElement;
      input.value = input.value === input.max ? input.min : input.max;
      input.dispatchEvent(new win.Event('input', { bubbles: true }));
      input.dispatchEvent(new win.Event('change', { bubbles: true }));
    } else {
      (el as HTMLElement).click();
    }
  };
  // The element motion changes may itself be a control a person can operate (a slider they can drag).
  const field = [...touched].find((el) => el.matches(FIELDS) && operable(el) && !(el as HTMLInputElement).readOnly && (el as HTMLInputElement).type !== 'hidden');
  let alternative: string | null = field ? nameOf(field) : null;
  let disabler: string | null = null;
  let tried = 0;
  for (const control of controls) {
    if (alternative && disabler) break;
    tried++;
    const byControl = await watch(() => activate(control));
    if (!alternative && related(byControl)) alternative = nameOf(control);
    if (!disabler) {
      const afterwards = await watch(fire);
      if (!related(afterwards)) disabler = nameOf(control);
      if (control.matches('input[type="checkbox"], [role="switch"], [role="checkbox"]')) activate(control); // back as it was
    }
  }
  const esc = (s: string) => { const css = (win as unknown as { CSS?: { escape?(v: string): string } }).CSS; return css?.escape ? css.escape(s) : s; };
  const selectorOf = (el: Element): string => {
    const parts: string[] = [];
    for (let node: Element | null = el; node && node.nodeType === 1; node = node.parentElement) {
      if (node.id && doc.querySelectorAll(`#${esc(node.id)}`).length === 1) { parts.unshift(`#${esc(node.id)}`); break; }
      const parent: Element | null = node.parentElement;
      let part = node.localName;
      if (parent) {
        const same = Array.from(parent.children).filter((c) => c.localName === node.localName);
        if (same.length > 1) part += `:nth-of-type(${same.indexOf(node) + 1})`;
      }
      parts.unshift(part);
      if (doc.querySelectorAll(parts.join(' > ')).length === 1) break;
    }
    return parts.join(' > ');
  };
  const innermost = [...touched].filter((el) => el !== doc.documentElement && el !== doc.body && ![...touched].some((o) => o !== el && el.contains(o))).slice(0, 5);
  return {
    listeners,
    changed: innermost.map((el) => { const outer = el.outerHTML; return { selector: selectorOf(el), html: outer.length <= 200 ? outer : outer.slice(0, outer.indexOf('>') + 1) }; }),
    alternative,
    disabler,
    tried,
  };
}

export interface PauseProbe {
  /** The control whose activation stopped the page's short intervals or hid the changing text. */
  control: string | null;
  /** The names of the controls tried. */
  tried: string[];
}

/**
 * 2.2.2: tries the page's controls whose name speaks of pausing, stopping, hiding or the frequency
 * of changes (buttons, checkboxes, switches; never links or submit buttons, and a scan's requests
 * are GET only), visible ones first. One works when, after it is activated, an interval the page
 * was running is cleared or the changing text is no longer shown.
 */
export async function pauseProbe(doc: Document, opts: { selectors: string[]; max: number }): Promise<PauseProbe> {
  const win = doc.defaultView! as Window & { __pactumText?: { intervals: Set<number> } };
  const rec = win.__pactumText;
  const CONTROL = /\b(pause|stop|hide|freeze|resume|frequency|control|controls|speed|interval|settings)\b/i;
  const nameOf = (el: Element) => `${el.textContent ?? ''} ${el.getAttribute('aria-label') ?? ''} ${el.localName === 'input' ? (el as HTMLInputElement).value : ''} ${(el as HTMLInputElement).labels?.[0]?.textContent ?? ''}`.replace(/\s+/g, ' ').trim().slice(0, 60);
  const shown = (el: Element) => el.getClientRects().length > 0 && win.getComputedStyle(el).visibility === 'visible';
  const candidates = Array.from(doc.querySelectorAll('button, [role="button"], [role="switch"], input[type="button"], input[type="checkbox"]'))
    .filter((el) => !(el as HTMLButtonElement).disabled && !(el.localName === 'button' && (el as HTMLButtonElement).type !== 'button' && (el as HTMLButtonElement).form) && CONTROL.test(nameOf(el)));
  const ordered = [...candidates.filter(shown), ...candidates.filter((el) => !shown(el))].slice(0, opts.max);
  const targets = () => opts.selectors.map((s) => doc.querySelector(s));
  const tried: string[] = [];
  for (const control of ordered) {
    tried.push(nameOf(control));
    const running = new Set(rec?.intervals ?? []);
    (control as HTMLElement).click();
    await new Promise((ok) => setTimeout(ok, 50));
    const cleared = [...running].some((id) => !rec?.intervals.has(id));
    const hidden = targets().some((t) => !t || !t.isConnected || !shown(t));
    if (cleared || hidden) return { control: nameOf(control), tried };
  }
  return { control: null, tried };
}

export interface Rotation {
  selector: string;
  html: string;
  /** Its rotation about the screen's axis from its transform and rotate properties, degrees in [0, 360). */
  degrees: number;
}

/**
 * 1.3.4: how far the root, the body and the elements that fill most of the viewport are turned
 * by CSS (transform and rotate), at the current viewport. Compared between a portrait and a
 * landscape viewport, a quarter turn in one of them locks the content to the other.
 */
export function rotationProbe(doc: Document): Rotation[] {
  const win = doc.defaultView!;
  const TO_DEG: Record<string, number> = { deg: 1, rad: 180 / Math.PI, turn: 360, grad: 0.9 };
  const degreesOf = (el: Element): number => {
    const style = win.getComputedStyle(el);
    let deg = 0;
    const matrix = /matrix(?:3d)?\(([^)]+)\)/.exec(style.transform ?? '');
    if (matrix) {
      const [a, b] = matrix[1]!.split(',').map(Number) as [number, number];
      deg += (Math.atan2(b, a) * 180) / Math.PI;
    }
    const rotate = (style as CSSStyleDeclaration & { rotate?: string }).rotate ?? 'none';
    if (rotate && rotate !== 'none') {
      const parts = rotate.trim().split(/\s+/);
      const angle = /^(-?[\d.e+-]+)(deg|rad|turn|grad)$/.exec(parts[parts.length - 1]!);
      // An axis other than the screen's (x, y, or a 3D vector not along z) does not turn the content in the screen's plane.
      const axis = parts.slice(0, -1);
      const aboutZ = axis.length === 0 || axis[0] === 'z' || (axis.length === 3 && Number(axis[0]) === 0 && Number(axis[1]) === 0);
      if (angle && aboutZ) deg += Number(angle[1]) * TO_DEG[angle[2]!]!;
    }
    return ((deg % 360) + 360) % 360;
  };
  const esc = (s: string) => { const css = (win as unknown as { CSS?: { escape?(v: string): string } }).CSS; return css?.escape ? css.escape(s) : s; };
  const selectorOf = (el: Element): string => {
    if (el === doc.documentElement) return 'html';
    if (el === doc.body) return 'body';
    if (el.id && doc.querySelectorAll(`#${esc(el.id)}`).length === 1) return `#${esc(el.id)}`;
    const same = Array.from(el.parentElement?.children ?? []).filter((c) => c.localName === el.localName);
    return `body > ${el.localName}${same.length > 1 ? `:nth-of-type(${same.indexOf(el) + 1})` : ''}`;
  };
  const area = win.innerWidth * win.innerHeight;
  const large = Array.from(doc.body?.children ?? []).filter((el) => {
    const rect = el.getBoundingClientRect();
    return rect.width * rect.height >= area / 2;
  }).slice(0, 10);
  return [doc.documentElement, ...(doc.body ? [doc.body] : []), ...large].map((el) => {
    const outer = el.outerHTML;
    return { selector: selectorOf(el), html: outer.slice(0, outer.indexOf('>') + 1), degrees: degreesOf(el) };
  });
}

/**
 * 2.1.2: the key combinations the page's text tells a person to press ("Press Ctrl+M to exit",
 * "press Escape"), as modifiers and a key, at most `max`.
 */
export function advertisedKeys(doc: Document, max: number): { modifiers: ('Alt' | 'Control' | 'Meta' | 'Shift')[]; key: string; text: string }[] {
  const text = (doc.body as HTMLElement | null)?.innerText ?? '';
  const NAMES: Record<string, 'Alt' | 'Control' | 'Meta' | 'Shift'> = { ctrl: 'Control', control: 'Control', strg: 'Control', alt: 'Alt', option: 'Alt', shift: 'Shift', cmd: 'Meta', command: 'Meta', meta: 'Meta' };
  const found: { modifiers: ('Alt' | 'Control' | 'Meta' | 'Shift')[]; key: string; text: string }[] = [];
  for (const m of text.matchAll(/\b(?:press|use|hit|type|drücken|appuyez sur)\s+((?:(?:ctrl|control|strg|alt|option|shift|cmd|command|meta)\s*[+-]\s*)*)([a-z0-9]|f\d{1,2}|esc(?:ape)?)\b/gi)) {
    if (found.length >= max) break;
    const modifiers = [...new Set((m[1] ?? '').split(/[+-]/).map((part) => NAMES[part.trim().toLowerCase()]).filter((x): x is 'Alt' | 'Control' | 'Meta' | 'Shift' => x !== undefined))];
    const key = /^esc/i.test(m[2]!) ? 'Escape' : m[2]!;
    // A bare letter or digit is a word of the sentence more often than a key ("press a button").
    if (modifiers.length === 0 && /^[a-z0-9]$/i.test(key)) continue;
    found.push({ modifiers, key, text: m[0] });
  }
  return found;
}
