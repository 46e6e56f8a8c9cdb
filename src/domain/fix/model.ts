/** The engine's public vocabulary, shared by the recipes and the entry point. */

export type Platform = 'html' | 'cms-block-editor';
export type Effort = 'low' | 'medium' | 'high';

export interface FixInput {
  /** Already resolved by the caller, e.g. "1.1.1", "1.4.3". */
  criterionId: string;
  /** The scanner's text, e.g. "Images must have alternative text". */
  issueMessage: string;
  /** HTML of the element, possibly with surroundings; a whole document for page-level criteria. */
  htmlContext: string;
  /** CSS that applies, e.g. ".btn { color: #777; background-color: #fff }" or "color: #999; background: #eee". */
  cssContext?: string;
  platform: Platform;
}

export interface FixResult {
  /** The fixed snippet; block-editor markup for the cms-block-editor platform. */
  fixedHtml: string;
  /** For contrast fixes: the corrected CSS. */
  fixedCss?: string;
  /** What was wrong, what changed and what a human must still check: 1-4 plain sentences. */
  explanation: string;
  effort: Effort;
  /** Texts the engine could not know, inserted as "TODO: ..." strings a human must replace. */
  placeholders: string[];
}

export class UnsupportedCriterionError extends Error {
  constructor(readonly criterionId: string) {
    super(`No deterministic fix recipe for WCAG criterion "${criterionId}"`);
    this.name = 'UnsupportedCriterionError';
  }
}

/** A remediation recipe for one success criterion (or a family sharing one). */
export interface Recipe {
  readonly criteria: readonly string[];
  /** Page-level recipes (title, language) fix the document, which block-editor content cannot hold. */
  readonly pageLevel?: boolean;
  draft(input: FixInput): FixResult;
}

/** Placeholder texts, kept in one place so callers can search for them. */
export const Placeholder = {
  image: 'TODO: describe the image',
  imageButton: 'TODO: describe what the button does',
  graphic: 'TODO: describe the graphic',
  linkTarget: 'TODO: describe the link target',
  buttonAction: 'TODO: describe the button action',
  label: 'TODO: label',
  pageTitle: 'TODO: page title',
  frame: 'TODO: describe the frame content',
  object: 'TODO: describe the embedded object',
  language: 'TODO: confirm the page language',
} as const;
