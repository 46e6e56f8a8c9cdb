/**
 * The browser-only checks beyond axe, driven from Node over CDP (browser.ts): Tab through the page
 * (keyboard trap 2.1.2, focus visible 2.4.7), look at what plays (1.4.2), and lay the page out at
 * 320 CSS px and at 200% zoom (1.4.10, 1.4.4).
 */
import type { CheckId, RawFinding } from '../checks/catalogue.js';
import { pageCall } from '../checks/page-functions.js';
import type { Page } from './browser.js';
import { settle, type PhaseClock } from '../phases.js';
import { advertisedKeys, focusSnapshot, focusStates, layoutProbe, mediaProbe, motionProbe, type MotionProbe, pauseProbe, type PauseProbe, rotationProbe, type Rotation, TEXT_WATCH_MS, textUpdates, type TextUpdates, recordedPresses, playbackProbe, quiet, type FocusState, type LayoutProbe, type MediaFacts, type PlaybackProbe } from './probes.js';

/** Tabbable elements followed; a page with more is checked on its first ones. */
const MAX_TABBABLES = 40;
/** Elements whose focus indicator is compared. */
const MAX_FOCUS_LOOKS = 25;

export const DESKTOP = { width: 1280, height: 800 } as const;

export type CheckRun = (page: Page) => Promise<RawFinding[]>;

const evaluate = <T>(page: Page, fn: (doc: Document, arg: never) => T, arg?: unknown): Promise<T> => page.evaluate<T>(pageCall(fn, arg));

/** One pass of Tab presses serves both keyboard checks. */
export async function keyboardChecks(page: Page, wanted: ReadonlySet<CheckId>): Promise<RawFinding[]> {
  const count = await evaluate(page, focusSnapshot, MAX_TABBABLES);
  if (count === 0) return [];
  const presses = Math.min(count + 3, MAX_TABBABLES + 3);
  const seen = await tabThrough(page, presses);
  const findings: RawFinding[] = [];
  if (wanted.has('pactum-focus-visible')) findings.push(...unseenFocus(seen));
  if (wanted.has('pactum-keyboard-trap')) {
    const trap = await trapOf(page, seen, count);
    if (trap) findings.push(trap);
  }
  return findings;
}

/**
 * Presses Tab `presses` times and answers where each press left focus. The page's recorder
 * (focusSnapshot) notes the focus at each keydown, so the presses go without an evaluate between
 * them, and the presses go together: one round trip for them all instead of three a press.
 * A page that stops keydown before the recorder sees it gets the slow way: an evaluate a press.
 */
async function tabThrough(page: Page, presses: number): Promise<FocusState[]> {
  // Sent back to back: the browser hands a target's input events to its page in the order they
  // came, and the recorder notes each; awaiting each press first only added a round trip a press.
  await Promise.all(Array.from({ length: presses }, () => page.press('Tab')));
  if ((await evaluate(page, recordedPresses)) === presses) return evaluate(page, focusStates, true);
  await evaluate(page, focusSnapshot, MAX_TABBABLES);
  const seen: FocusState[] = [];
  for (let i = 0; i < presses; i++) {
    await page.press('Tab');
    seen.push(await focusNow(page));
  }
  return seen;
}

/** Where focus is now. */
async function focusNow(page: Page): Promise<FocusState> {
  const [state] = await evaluate(page, focusStates, false);
  return state!;
}

function unseenFocus(seen: readonly FocusState[]): RawFinding[] {
  const looked = new Set<number>();
  const findings: RawFinding[] = [];
  for (const state of seen) {
    if (state.index < 0 || looked.has(state.index) || looked.size >= MAX_FOCUS_LOOKS) continue;
    looked.add(state.index);
    if (state.changed) continue;
    findings.push({
      check: 'pactum-focus-visible', criterion: '2.4.7', selector: state.selector, html: state.html,
      what: 'nothing about the element changes when it gets keyboard focus',
      evidence: `focused with Tab, its computed outline, border, box-shadow, background, colour and text decoration (and its parent's and ::before/::after's) equal those without focus (${state.look})`,
    });
  }
  return findings;
}

/**
 * A natural tab order visits each tabbable element once before it wraps, so within count + 3 presses
 * none is focused three times. One that is, while others were never reached, is in a loop; the
 * loop is a trap when Shift+Tab and Escape do not get out of it either.
 */
async function trapOf(page: Page, seen: readonly FocusState[], count: number): Promise<RawFinding | null> {
  const visits = new Map<number, number>();
  for (const s of seen) if (s.index >= 0) visits.set(s.index, (visits.get(s.index) ?? 0) + 1);
  const reached = visits.size;
  const looping = [...visits.entries()].filter(([, n]) => n >= 3).map(([index]) => index);
  if (looping.length === 0 || reached >= count) return null;
  const loop = new Set(seen.filter((s) => s.index >= 0 && looping.includes(s.index)).map((s) => s.index));
  const escapes: string[] = [];
  for (const keys of [['Shift+Tab', 'Shift+Tab', 'Shift+Tab'], ['Escape', 'Tab']] as const) {
    let left = false;
    for (const key of keys) {
      await page.press(key);
      if (!loop.has((await focusNow(page)).index)) left = true;
    }
    escapes.push(`${keys[0]} ${left ? 'left it' : 'did not leave it'}`);
    if (left) return null;
  }
  // The way out the page's own text advertises ("Press Ctrl+M to exit"), then a Tab.
  for (const advertised of await evaluate(page, advertisedKeys, 3)) {
    await page.pressChord(advertised.modifiers, advertised.key);
    let left = !loop.has((await focusNow(page)).index);
    if (!left) {
      await page.press('Tab');
      left = !loop.has((await focusNow(page)).index);
    }
    escapes.push(`"${advertised.text}" (advertised on the page) ${left ? 'left it' : 'did not leave it'}`);
    if (left) return null;
  }
  const first = seen.find((s) => loop.has(s.index))!;
  const members = [...new Set(seen.filter((s) => loop.has(s.index)).map((s) => s.selector))];
  return {
    check: 'pactum-keyboard-trap', criterion: '2.1.2', selector: first.selector, html: first.html,
    what: `keyboard focus cannot leave ${members.length === 1 ? 'this element' : `a loop of ${members.length} elements`}`,
    evidence: `after ${seen.length} Tab presses focus kept cycling through ${members.slice(0, 4).join(', ')}; ${count - reached} of ${count} focusable elements were never reached; ${escapes.join('; ')}`,
  };
}

/**
 * 1.4.2: sound that plays by itself (autoplay or a script) for more than 3 s with no control.
 * `clock`: where its waits are counted (the `settle` phase).
 */
export async function playbackCheck(page: Page, clock?: PhaseClock): Promise<RawFinding[]> {
  let probe: PlaybackProbe = await evaluate(page, playbackProbe);
  if (probe.media.length === 0) return [];
  // Autoplay starts once enough has loaded; give media that is about to start a moment.
  for (let waited = 0; probe.pending > 0 && waited < 1500; waited += 250) {
    await settle(250, clock);
    probe = await evaluate(page, playbackProbe);
  }
  return probe.media
    .filter((m) => m.playing && m.audible && (m.duration > 3 || m.duration === -1) && !m.controls && !probe.pageControl)
    .map((m) => ({
      check: 'pactum-autoplay-audio', criterion: '1.4.2', selector: m.selector, html: m.html,
      what: `sound plays by itself for ${m.duration === -1 ? 'an unbounded time (a stream)' : `${m.duration.toFixed(1)} s`} with no way to pause or mute it`,
      evidence: `playing and not muted right after the page loaded (${m.autoplayAttribute ? 'autoplay attribute' : 'started by a script'}), duration ${m.duration === -1 ? 'infinite' : `${m.duration.toFixed(1)} s`}; no controls attribute and no pause, stop or mute button on the page`,
    }));
}

/** Media files larger than this are not decoded: whether they make sound stays unknown. */
export const MEDIA_DECODE_MAX_BYTES = 16 * 1024 * 1024;
/** Decoded first, alone: seconds of compressed audio and video, sound in which settles the question. */
const MEDIA_FIRST_BYTES = 512 * 1024;

/** Words of shown text beside a medium that may be its transcript. */
const TRANSCRIPT_WORDS = 20;

/**
 * 1.2.1, 1.2.2, 1.2.3, 1.2.5: whether captions, a transcript or an audio description match what
 * plays is for a person to judge. What a browser can tell is which media needs that look: audio a
 * person can play (autoplay, or controls they can see), and video they can see, told apart by
 * whether it makes sound (its audio decoded). Media that does not load, is hidden or streams is
 * left out, as the ACT rules leave it out. Audio is reported only without any text alternative
 * beside it: whether a transcript that is there is right cannot be told from the page, and a
 * check that flagged every audio element with one would mostly flag audio that passes.
 */
export async function mediaChecks(page: Page): Promise<RawFinding[]> {
  const facts: MediaFacts[] = await evaluate(page, mediaProbe, { waitMs: 3000, maxBytes: MEDIA_DECODE_MAX_BYTES, firstBytes: MEDIA_FIRST_BYTES });
  const findings: RawFinding[] = [];
  for (const m of facts) {
    if (!m.loaded || m.duration === -1) continue;
    const seconds = `${m.duration.toFixed(1)} s`;
    const found = [
      m.tracks.length ? `track elements: ${m.tracks.join(', ')}` : 'no track element',
      m.alternative ? `text near it that may be an alternative: "${m.alternative}"` : 'no transcript, captions or alternative named near it',
    ].join('; ');
    const sound = m.sound === 'yes' ? `sound (loudest sample ${m.peak.toFixed(2)})` : m.sound === 'no' ? 'no sound (its audio is silent or absent)' : 'sound not determined (the file could not be decoded)';
    if (m.kind === 'audio') {
      if (!m.autoplay && !(m.controls && m.visible)) continue;
      // A transcript named beside it, or shown text of transcript length, is what a person then checks against the audio; audio with neither has no alternative.
      if (m.alternative || m.textWords >= TRANSCRIPT_WORDS) continue;
      findings.push({
        check: 'pactum-audio-alternative', criterion: '1.2.1', selector: m.selector, html: m.html,
        what: 'this audio has no text alternative on the page: neither a transcript named beside it nor shown text that could convey it',
        evidence: `audio of ${seconds} that ${m.autoplay ? 'plays by itself' : 'has a visible play button'}; ${found}; the longest shown block of text beside it has ${m.textWords} words`,
      });
    } else if (m.visible && m.sound === 'no') {
      findings.push({
        check: 'pactum-video-only-alternative', criterion: '1.2.1', selector: m.selector, html: m.html,
        what: 'a person must watch this video without sound and check that a transcript, an audio track or the text it illustrates conveys what it shows',
        evidence: `video of ${seconds} with ${sound}; ${found}`,
      });
    } else if (m.visible) {
      findings.push({
        check: 'pactum-video-alternative', criterion: '1.2.3', selector: m.selector, html: m.html,
        what: 'a person must watch this video and check that an audio description or a transcript conveys what it shows, and that captions carry its speech and sounds',
        evidence: `video of ${seconds} with ${sound}; ${found}`,
      });
    }
  }
  return findings;
}

/** How often a watched page's text changes are looked at. */
const TEXT_POLL_MS = 250;

/**
 * 2.2.2: text that changes by itself (a ticker, a counter, a feed) needs a way to pause, stop or
 * hide it. Only a page with short intervals running, or whose text already changed, is watched,
 * until TEXT_WATCH_MS after its load or until text has changed twice; whether a control does the
 * job is tried: the page's controls named for pausing, stopping, hiding or frequency are activated
 * (pauseProbe), and text that one of them stops or hides is not reported.
 * `clock`: where its waits are counted (the `settle` phase).
 */
export async function autoUpdateCheck(page: Page, clock?: PhaseClock): Promise<RawFinding[]> {
  let seen: TextUpdates = await evaluate(page, textUpdates);
  if (seen.sinceLoad < 0 || !seen.likely) return [];
  // Watched until TEXT_WATCH_MS after load, or until some text has changed twice: the page's finding is then certain.
  while (seen.changed.length === 0 && seen.sinceLoad < TEXT_WATCH_MS) {
    await settle(Math.min(TEXT_POLL_MS, TEXT_WATCH_MS - seen.sinceLoad), clock);
    seen = await evaluate(page, textUpdates);
  }
  if (seen.changed.length === 0) return [];
  // A control that visibly does the job (stops the page's intervals, or hides the text) settles it.
  const pause: PauseProbe = await evaluate(page, pauseProbe, { selectors: seen.changed.map((c) => c.selector), max: MAX_PAUSE_CONTROLS });
  if (pause.control) return [];
  return seen.changed.map((c) => ({
    check: 'pactum-auto-update', criterion: '2.2.2', selector: c.selector, html: c.html,
    what: 'this text changes by itself, and no control on the page was seen to pause, stop or hide it',
    evidence: `its text changed ${c.changes} times in ${c.seconds.toFixed(1)} s after the page loaded, with no input (now "${c.text}"); ${pause.tried.length > 0 ? `controls tried: ${pause.tried.map((t) => `"${t}"`).join(', ')}; none stopped the page's intervals or hid the text` : 'no button on the page speaks of pausing, stopping, hiding or how often it changes'}`,
  }));
}

/** Controls tried as a way to pause, stop or hide text that changes by itself. */
const MAX_PAUSE_CONTROLS = 6;

/**
 * 1.4.10 at 320 CSS px, 1.4.4 at 200% zoom (a 1280 px window at 200% lays out 640 CSS px); 1.3.4
 * from the same two layouts, one portrait (320 × 640) and one landscape (640 × 400): content
 * turned a quarter turn in one and not the other is locked to one orientation.
 */
export async function layoutChecks(page: Page, wanted: ReadonlySet<CheckId>): Promise<RawFinding[]> {
  const findings: RawFinding[] = [];
  try {
    await page.setViewport({ width: 320, height: 640 });
    const portrait: Rotation[] = wanted.has('pactum-orientation') ? await evaluate(page, rotationProbe) : [];
    const narrow: LayoutProbe = await evaluate(page, layoutProbe, 3);
    for (const wide of narrow.wide) {
      findings.push({
        check: 'pactum-reflow', criterion: '1.4.10', selector: wide.selector, html: wide.html,
        what: `at 320 CSS px wide the page scrolls sideways: this element is ${wide.detail}`,
        evidence: `viewport 320 CSS px: the document is ${narrow.documentWidth} px wide; ${wide.selector} is ${wide.detail}`,
      });
    }
    await page.setViewport({ width: DESKTOP.width / 2, height: DESKTOP.height / 2 });
    const zoomed: LayoutProbe = await evaluate(page, layoutProbe, 3);
    const landscape: Rotation[] = wanted.has('pactum-orientation') ? await evaluate(page, rotationProbe) : [];
    findings.push(...orientationLocks(portrait, landscape));
    for (const cut of zoomed.clipped) {
      findings.push({
        check: 'pactum-reflow', criterion: '1.4.4', selector: cut.selector, html: cut.html,
        what: 'text is cut off at 200% zoom',
        evidence: `at 200% zoom (${DESKTOP.width / 2} CSS px wide) the element ${cut.detail}`,
      });
    }
  } finally {
    await page.setViewport(DESKTOP);
  }
  return findings;
}

/** Controls tried as a way to do what motion does, or to turn motion off. */
const MAX_MOTION_CONTROLS = 12;

/**
 * 2.5.4: a page that responds to device motion must let a person do the same with a control and
 * turn the response to motion off. Motion events are fired at the page; only when they change
 * something are its controls tried (motionProbe). Run last: trying controls changes the page.
 */
export async function motionCheck(page: Page, wanted: ReadonlySet<CheckId>): Promise<RawFinding[]> {
  const probe: MotionProbe = await evaluate(page, motionProbe, MAX_MOTION_CONTROLS);
  if (probe.changed.length === 0) return [];
  const first = probe.changed[0]!;
  const what = `device motion changes ${probe.changed.map((c) => c.selector).join(', ')}`;
  const findings: RawFinding[] = [];
  if (!probe.alternative && wanted.has('pactum-device-motion')) {
    findings.push({
      check: 'pactum-device-motion', criterion: '2.5.4', selector: first.selector, html: first.html,
      what: `${what}, and none of the page's controls does the same`,
      evidence: `orientation and motion events fired at the page (${probe.listeners} listener${probe.listeners === 1 ? '' : 's'}) changed ${probe.changed.map((c) => c.selector).join(', ')}; ${probe.tried} control${probe.tried === 1 ? '' : 's'} tried, none changed it, and it is not a control a person can operate`,
    });
  }
  if (!probe.disabler && wanted.has('pactum-motion-disable')) {
    findings.push({
      check: 'pactum-motion-disable', criterion: '2.5.4', selector: first.selector, html: first.html,
      what: `${what}, and no control on the page turns that off`,
      evidence: `orientation and motion events fired at the page changed ${probe.changed.map((c) => c.selector).join(', ')}; after each of the ${probe.tried} control${probe.tried === 1 ? '' : 's'} tried, motion still changed it${probe.alternative ? ` (a control that does the same: "${probe.alternative}")` : ''}`,
    });
  }
  return findings;
}

/** Elements turned a quarter turn (within 3 degrees) more in one orientation than in the other. */
export function orientationLocks(portrait: readonly Rotation[], landscape: readonly Rotation[]): RawFinding[] {
  const findings: RawFinding[] = [];
  for (const p of portrait) {
    const l = landscape.find((r) => r.selector === p.selector);
    if (!l) continue;
    const turn = (((p.degrees - l.degrees) % 360) + 360) % 360;
    if (Math.abs(turn - 90) > 3 && Math.abs(turn - 270) > 3) continue;
    const locked = p.degrees % 180 > 45 && p.degrees % 180 < 135 ? 'landscape' : 'portrait';
    findings.push({
      check: 'pactum-orientation', criterion: '1.3.4', selector: p.selector, html: p.html,
      what: `CSS turns this element a quarter turn in one orientation only, which keeps its content in ${locked} whichever way the device is held`,
      evidence: `turned ${Math.round(p.degrees)}° at a portrait viewport (320 × 640) and ${Math.round(l.degrees)}° at a landscape one (640 × 400)`,
    });
    break; // the outermost element turned says it; what it contains turns with it
  }
  return findings;
}

export async function quietPage(page: Page): Promise<void> {
  await evaluate(page, quiet);
}
