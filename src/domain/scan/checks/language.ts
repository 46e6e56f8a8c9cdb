/**
 * 3.1.1 and 3.1.2: the language a page and its blocks declare (lang), against the language their
 * text is in, as told by tinyld (a small n-gram identifier, its light model). Only confident disagreements on
 * enough text are reported, as needs review with the identifier's verdict as evidence.
 */
import { createRequire } from 'node:module';
import type * as Tinyld from 'tinyld/light';
import type { RawFinding } from './catalogue.js';
import type { Survey } from './page-functions.js';

// The light model (14 MB in memory instead of 48, per process and per worker), loaded by the
// first language check: a server that never scans does not carry it. Required, not imported,
// because the check is synchronous.
const require = createRequire(import.meta.url);
let tinyld: typeof Tinyld | null = null;
const detectAll = (text: string) => (tinyld ??= require('tinyld/light') as typeof Tinyld).detectAll(text);

/** Shorter text is too little for the identifier to be trusted. */
const PAGE_MIN_CHARS = 150;
const BLOCK_MIN_CHARS = 60;
const MIN_ACCURACY = 0.5;
/** A phrase this short is judged only on the identifier's near certainty. */
const SHORT_MIN_CHARS = 12;
const SHORT_MIN_ACCURACY = 0.9;

/** "en-GB" → "en"; "zh-Hant" → "zh". */
function primary(lang: string): string {
  return lang.trim().toLowerCase().split(/[-_]/)[0]!;
}

/**
 * The most frequent short words of a few languages: on a sentence or two, where the n-gram
 * identifier is unsure, they still tell English from Dutch or French.
 */
const FUNCTION_WORDS: Readonly<Record<string, ReadonlySet<string>>> = Object.fromEntries(Object.entries({
  en: 'the and of to is that it for with was are be this by but not have has from they which you we he she their there what into its our',
  nl: 'de het een en van ik met op niet dat die zijn voor hij ging naar ook maar om er te bij wordt worden wij jullie hun deze',
  fr: 'le la les et des est une un pour que qui dans du pas sur avec ce il elle au aux sont mais nous vous cette ces',
  de: 'der die das und ist nicht mit ein eine zu den von auf für sich dem auch es im wir sie werden wird',
  es: 'el los las y que un una es por con para del se su al como pero más este esta',
  it: 'il lo gli e di che è un una per non con del della sono nel alla questo',
  pt: 'os as e que em um uma é não com para do da por mais como este esta',
  da: 'og at det er til på som med af for ikke der var jeg har den',
  sv: 'och att det som på är av för med till den inte har jag',
}).map(([lang, words]) => [lang, new Set(words.split(' '))]));

function functionWordCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const word of text.toLowerCase().match(/\p{L}+/gu) ?? []) {
    for (const [lang, words] of Object.entries(FUNCTION_WORDS)) if (words.has(word)) counts.set(lang, (counts.get(lang) ?? 0) + 1);
  }
  return counts;
}

interface Verdict { found: string; how: string }

/** Whether the text is clearly in another language than the declared one (null: it is not, or it cannot be told). */
function disagreement(text: string, declared: string, minChars: number): Verdict | null {
  const counts = functionWordCounts(text);
  const [best, hits] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? ['', 0];
  const declaredHits = counts.get(declared) ?? 0;
  if (best && best !== declared && hits >= 2 && hits >= 2 * declaredHits + 1) {
    return { found: best, how: `${hits} of its words are common ${nameOf(best)} words, ${declaredHits} common ${nameOf(declared)} ones` };
  }
  const candidates = detectAll(text);
  const top = candidates[0];
  if (!top || top.lang === declared || candidates.slice(0, 3).some((c) => c.lang === declared)) return null;
  // Long text on a fair verdict, or a short phrase on an unequivocal one.
  if ((text.length >= minChars && top.accuracy >= MIN_ACCURACY) || (text.length >= SHORT_MIN_CHARS && top.accuracy >= SHORT_MIN_ACCURACY)) {
    return { found: top.lang, how: `language identifier (tinyld): ${top.lang} (accuracy ${top.accuracy.toFixed(2)}), ${declared} not among its top candidates` };
  }
  return null;
}

/** A language the check can speak of: a two-letter primary subtag the platform knows. */
function known(lang: string): boolean {
  const code = primary(lang);
  return /^[a-z]{2}$/.test(code) && nameOf(code) !== code;
}

// Made on first use: constructing it reads every locale's ICU data (~4.5 MB resident), which a
// server that never checks a page's language should not carry.
let names: Intl.DisplayNames | null | undefined;
const nameOf = (code: string) => {
  names ??= typeof Intl.DisplayNames === 'function' ? new Intl.DisplayNames(['en'], { type: 'language' }) : null;
  try {
    return names?.of(code) ?? code;
  } catch {
    return code;
  }
};

export function languageFindings(survey: Pick<Survey, 'title' | 'pageLang' | 'pageText' | 'pageNames' | 'langElements' | 'blocks'>): RawFinding[] {
  const findings: RawFinding[] = [];
  const pageLang = survey.pageLang && known(survey.pageLang) ? primary(survey.pageLang) : null;
  // No lang at all is axe's html-has-lang; this is about a lang that says the wrong thing. The
  // page's text is what inherits its language: the title, the body's text outside elements with
  // a lang of their own, and the names of the images that inherit it.
  const pageText = [survey.title ?? '', survey.pageText, survey.pageNames].join(' ').replace(/\s+/g, ' ').trim();
  if (pageLang && pageText) {
    const off = disagreement(pageText, pageLang, PAGE_MIN_CHARS);
    if (off) {
      findings.push({
        check: 'pactum-language', criterion: '3.1.1', selector: 'html', html: `<html lang="${survey.pageLang}">`,
        what: `the page declares ${nameOf(pageLang)} (lang="${survey.pageLang}") but its text reads as ${nameOf(off.found)}: a person must check which language most of its text is in`,
        evidence: `on ${pageText.length} characters of the page's text (title, text and image names outside elements with their own lang): ${off.how}`,
      });
      return findings; // every block would repeat the page's mismatch
    }
  }
  for (const el of survey.langElements) {
    if (!known(el.lang)) continue;
    const declared = primary(el.lang);
    const off = disagreement(el.text, declared, BLOCK_MIN_CHARS);
    if (!off) continue;
    findings.push({
      check: 'pactum-language-of-parts', criterion: '3.1.2', selector: el.selector, html: el.html,
      what: `this element declares ${nameOf(declared)} (lang="${el.lang}") but its text reads as ${nameOf(off.found)}: a person must check its language and correct the lang attribute`,
      evidence: `on ${el.text.length} characters of the text that inherits its lang: ${off.how}`,
    });
  }
  for (const block of survey.blocks) {
    if (!block.lang || block.text.length < BLOCK_MIN_CHARS || !known(block.lang)) continue;
    const declared = primary(block.lang);
    const off = disagreement(block.text, declared, BLOCK_MIN_CHARS);
    if (!off || findings.some((f) => f.selector === block.selector)) continue;
    findings.push({
      check: 'pactum-language-of-parts', criterion: '3.1.2', selector: block.selector, html: block.html,
      what: `this passage reads as ${nameOf(off.found)} but inherits lang="${block.lang}"; mark it with lang="${off.found}"`,
      evidence: `on ${block.text.length} characters: ${off.how}, while the passage inherits ${block.lang}`,
    });
  }
  return findings;
}
