/**
 * 3.1.1 Language of Page: <html> gets a valid lang attribute. A broken value is repaired when its intent
 * is clear ("en_US", "German"); otherwise the language is read from metadata or inferred from common words.
 */
import { collapse, elementsOf } from '../dom.js';
import { draftWithFixers, type Finding } from '../drafting.js';
import type { Markup } from '../markup.js';
import { Placeholder, type FixInput, type FixResult, type Recipe } from '../model.js';
import { lookupTable } from '../../../ground/lookup-table.js';

// ISO 639-1: the two-letter primary subtags a browser and a screen reader recognise.
const ISO_639_1 = new Set(
  ('aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee el en eo es et eu ' +
    'fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko ' +
    'kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi ' +
    'pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ' +
    'ur uz ve vi vo wa wo xh yi yo za zh zu').split(' '),
);

export function isValidLang(value: string): boolean {
  const v = value.trim();
  if (!/^[a-z]{2,3}(-[a-z0-9]{1,8})*$/i.test(v)) return false;
  const primary = v.split('-')[0]!.toLowerCase();
  return primary.length === 3 || ISO_639_1.has(primary);
}

const LANGUAGE_NAMES = lookupTable<string>({
  english: 'en', englisch: 'en', anglais: 'en', german: 'de', deutsch: 'de', allemand: 'de', french: 'fr', francais: 'fr',
  français: 'fr', französisch: 'fr', spanish: 'es', espanol: 'es', español: 'es', dutch: 'nl', nederlands: 'nl', italian: 'it',
  italiano: 'it', portuguese: 'pt', português: 'pt', polish: 'pl', polski: 'pl', swedish: 'sv', svenska: 'sv', danish: 'da',
  dansk: 'da', norwegian: 'no', norsk: 'no', finnish: 'fi', suomi: 'fi', czech: 'cs', čeština: 'cs', greek: 'el', turkish: 'tr',
  türkçe: 'tr', russian: 'ru', japanese: 'ja', chinese: 'zh', arabic: 'ar',
});

/** "en_US" → "en-US", "EN-gb" stays valid, "German" → "de"; null when the value says nothing usable. */
export function repairLang(value: string): string | null {
  const v = value.trim();
  const dashed = v.replace(/_/g, '-');
  if (dashed !== v && isValidLang(dashed)) return dashed;
  return LANGUAGE_NAMES[v.toLowerCase()] ?? null;
}

const COMMON_WORDS: Record<string, readonly string[]> = {
  en: ['the', 'and', 'of', 'to', 'is', 'are', 'with', 'for', 'this', 'that', 'you', 'your', 'our', 'we', 'it', 'on', 'be', 'have', 'from', 'not', 'will', 'can', 'about', 'more', 'what', 'which'],
  de: ['der', 'die', 'das', 'und', 'ist', 'nicht', 'mit', 'ein', 'eine', 'sie', 'wir', 'für', 'auf', 'den', 'dem', 'zu', 'ich', 'von', 'auch', 'sich', 'sind', 'oder', 'wie', 'bei', 'uns', 'unsere', 'ihre', 'mehr', 'werden', 'wird'],
  fr: ['le', 'la', 'les', 'et', 'est', 'une', 'des', 'du', 'pour', 'dans', 'que', 'qui', 'pas', 'sur', 'avec', 'nous', 'vous', 'ce', 'cette', 'sont', 'au', 'aux', 'plus', 'notre', 'votre', 'être'],
  es: ['el', 'los', 'las', 'y', 'es', 'una', 'del', 'para', 'con', 'por', 'que', 'no', 'se', 'su', 'sus', 'al', 'como', 'más', 'este', 'esta', 'nuestro', 'nuestra', 'son', 'también', 'muy'],
  nl: ['het', 'een', 'en', 'van', 'is', 'niet', 'met', 'voor', 'op', 'zijn', 'dat', 'die', 'wij', 'ook', 'naar', 'bij', 'onze', 'uw', 'deze', 'worden', 'wordt', 'meer', 'je', 'jouw'],
  it: ['il', 'di', 'che', 'è', 'per', 'una', 'non', 'con', 'sono', 'gli', 'del', 'della', 'un', 'si', 'le', 'al', 'come', 'anche', 'questo', 'questa', 'nostro', 'nostra', 'più', 'nel'],
};
const MIN_HITS = 3;
const MARGIN = 1.5;

/** The language whose common words clearly dominate the text, or null when the text is too short or mixed. */
export function inferLanguage(text: string): string | null {
  const words = text.toLowerCase().match(/\p{L}+/gu) ?? [];
  const scores = Object.entries(COMMON_WORDS)
    .map(([lang, list]) => {
      const set = new Set(list);
      return { lang, hits: words.filter((w) => set.has(w)).length };
    })
    .sort((a, b) => b.hits - a.hits || a.lang.localeCompare(b.lang));
  const [best, second] = scores;
  if (best === undefined || best.hits < MIN_HITS) return null;
  if (second !== undefined && best.hits < second.hits * MARGIN) return null;
  return best.lang;
}

/** Language declared in metadata: <meta http-equiv="content-language"> or Open Graph's og:locale. */
function declaredInMeta(doc: Document): string | null {
  for (const meta of elementsOf(doc, 'meta')) {
    const key = (meta.getAttribute('http-equiv') ?? meta.getAttribute('property') ?? meta.getAttribute('name') ?? '').toLowerCase();
    if (key !== 'content-language' && key !== 'og:locale' && key !== 'language') continue;
    const value = (meta.getAttribute('content') ?? '').split(',')[0]!.trim();
    const candidate = isValidLang(value) ? value : repairLang(value);
    if (candidate !== null) return candidate;
  }
  return null;
}

function visibleText(doc: Document): string {
  const clone = doc.body.cloneNode(true) as HTMLElement;
  for (const el of elementsOf(clone, 'script, style, template, noscript')) el.remove();
  return collapse(`${doc.title} ${clone.textContent ?? ''}`);
}

interface LanguageChoice {
  readonly lang: string;
  readonly how: string;
  readonly certain: boolean;
}

function chooseLanguage(doc: Document, current: string | null): LanguageChoice {
  const repaired = current === null ? null : repairLang(current);
  if (repaired !== null) return { lang: repaired, how: `repaired from "${current}"`, certain: true };
  const meta = declaredInMeta(doc);
  if (meta !== null) return { lang: meta, how: 'taken from the page\'s language metadata', certain: true };
  const inferred = inferLanguage(visibleText(doc));
  if (inferred !== null) return { lang: inferred, how: 'inferred from common words in the text', certain: true };
  return { lang: 'en', how: 'assumed, because the text did not show the language clearly', certain: false };
}

function fixLang(markup: Markup): Finding | null {
  const doc = markup.document;
  const html = doc.documentElement;
  const current = html.getAttribute('lang');
  const xmlLang = html.getAttribute('xml:lang');
  if (current !== null && isValidLang(current)) {
    // Only a mismatching xml:lang is left to fix.
    if (xmlLang === null || xmlLang.split('-')[0]!.toLowerCase() === current.split('-')[0]!.toLowerCase()) return null;
    html.setAttribute('xml:lang', current.trim());
    return {
      count: 1,
      headline: 'xml:lang aligned with lang',
      restructured: false,
      summary: `xml:lang="${xmlLang}" contradicted lang="${current}" on <html>: xml:lang now matches lang`,
      check: 'Check that the language is the main language of the page.',
      placeholders: [],
    };
  }
  const choice = chooseLanguage(doc, current);
  html.setAttribute('lang', choice.lang);
  if (xmlLang !== null) html.setAttribute('xml:lang', choice.lang);
  if (!choice.certain) {
    html.insertBefore(doc.createComment(` ${Placeholder.language} (lang="${choice.lang}" was assumed) `), html.firstChild);
  }
  const problem =
    current === null ? 'The <html> element had no lang attribute' : current.trim() === '' ? 'The <html> element had an empty lang attribute' : `lang="${current}" on <html> is not a valid language tag`;
  return {
    count: 1,
    headline: `lang="${choice.lang}" set on <html>`,
    restructured: false,
    summary: `${problem}, so screen readers could not pick the right pronunciation: set lang="${choice.lang}" (${choice.how})`,
    check: choice.certain
      ? 'Check that this is the main language of the page, and mark passages in other languages with their own lang attribute.'
      : `Confirm the main language of the page and replace the "${Placeholder.language}" comment; mark passages in other languages with their own lang attribute.`,
    placeholders: choice.certain ? [] : [Placeholder.language],
  };
}

export const languageOfPage: Recipe = {
  criteria: ['3.1.1'],
  pageLevel: true,
  draft(input: FixInput): FixResult {
    return draftWithFixers(input, [fixLang], 'The <html> element already has a valid lang attribute; check that it names the main language of the page.');
  },
};
