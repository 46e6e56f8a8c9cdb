/** The findings of the checks that read the DOM only, the same on both engines. */
import { checkFailed, type RawFinding } from './catalogue.js';
import { languageFindings } from './language.js';
import type { Survey } from './page-functions.js';
import type { NotEvaluated } from '../types.js';

export const SURVEY_LIMITS = { maxBlocks: 200, maxLinks: 5000 } as const;

/** The survey's own findings and the language check's; a check that throws is not evaluated, not passed. */
export function domFindings(survey: Survey): { findings: RawFinding[]; failures: NotEvaluated[] } {
  const failures: NotEvaluated[] = [];
  let language: RawFinding[] = [];
  try {
    language = languageFindings(survey);
  } catch (err) {
    failures.push(checkFailed('pactum-language', err), checkFailed('pactum-language-of-parts', err));
  }
  return { findings: [...survey.findings, ...language], failures };
}
