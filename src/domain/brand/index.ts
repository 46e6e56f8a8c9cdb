/** Brand scoring: a scan's pages (their style statistics) against an org's brand guideline. */
export {
  brandBreakdown,
  colourSubScore,
  componentsSubScore,
  cssVariableUsage,
  MIN_CONTRAST_LARGE,
  MIN_CONTRAST_NORMAL,
  scoreBrand,
  SUB_SCORE_WEIGHTS,
  typographySubScore,
} from './score.js';
export type {
  BrandBreakdown,
  BrandGuideline,
  BrandPage,
  BrandScore,
  BrandScoreMeta,
  ScoredBrand,
  SubScore,
  SubScoreName,
  UnscorableBrand,
  UnscorableReason,
} from './score.js';
export { brandFamilyNames, COLOUR_TOLERANCE, isNearColour, normaliseFamily } from './match.js';
export type { ColourPairStat, FontStat, StyleStats } from '../scan/types.js';
