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

/** "en-GB" → "en"; "zh-Hant" → "zh". */
function primary(lang: string): string {
  return lang.trim().toLowerCase().split(/[-_]/)[0]!;
}

/** The language the text is confidently in, unless the declared one is among the candidates at all. */
function disagreement(text: string, declared: string): { found: string; accuracy: number } | null {
  const candidates = detectAll(text);
  const top = candidates[0];
  if (!top || top.accuracy < MIN_ACCURACY) return null;
  if (candidates.slice(0, 3).some((c) => c.lang === declared)) return null;
  return { found: top.lang, accuracy: top.accuracy };
}

const names = typeof Intl.DisplayNames === 'function' ? new Intl.DisplayNames(['en'], { type: 'language' }) : null;
const nameOf = (code: string) => {
  try {
    return names?.of(code) ?? code;
  } catch {
    return code;
  }
};

export function languageFindings(survey: Pick<Survey, 'pageLang' | 'pageText' | 'blocks'>): RawFinding[] {
  const findings: RawFinding[] = [];
  const pageLang = survey.pageLang ? primary(survey.pageLang) : null;
  // No lang at all is axe's html-has-lang; this is about a lang that says the wrong thing.
  if (pageLang && survey.pageText.length >= PAGE_MIN_CHARS) {
    const off = disagreement(survey.pageText, pageLang);
    if (off) {
      findings.push({
        check: 'pactum-language', criterion: '3.1.1', selector: 'html', html: `<html lang="${survey.pageLang}">`,
        what: `the page declares ${nameOf(pageLang)} (lang="${survey.pageLang}") but its text reads as ${nameOf(off.found)}`,
        evidence: `language identifier (tinyld) on ${survey.pageText.length} characters of the page's text: ${off.found} (accuracy ${off.accuracy.toFixed(2)}); ${pageLang} not among its top candidates`,
      });
      return findings; // every block would repeat the page's mismatch
    }
  }
  for (const block of survey.blocks) {
    if (!block.lang || block.text.length < BLOCK_MIN_CHARS) continue;
    const declared = primary(block.lang);
    const off = disagreement(block.text, declared);
    if (!off) continue;
    findings.push({
      check: 'pactum-language', criterion: '3.1.2', selector: block.selector, html: block.html,
      what: `this passage reads as ${nameOf(off.found)} but inherits lang="${block.lang}"; mark it with lang="${off.found}"`,
      evidence: `language identifier (tinyld) on ${block.text.length} characters: ${off.found} (accuracy ${off.accuracy.toFixed(2)}), while the passage inherits ${block.lang}`,
    });
  }
  return findings;
}
