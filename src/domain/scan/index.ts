/** The accessibility scan engine: safe fetching, axe-core checks in worker threads, site crawling. */
export type { ByLevel, CheckedPage, Impact, Issue, IssueType, PageReport, Report, ReportSummary, StyleStats, WcagStandard } from './types.js';
export { fetchPage, fetchText, ScanFetchError, FETCH_DEFAULTS } from './fetch-page.js';
export type { FetchedPage, FetchedText, FetchOptions, ScanFetchErrorCode } from './fetch-page.js';
export { closeAgents } from './guarded-agent.js';
export { classifyAddress, refusedRange } from './address-policy.js';
export type { AddressPolicy, AddressRange } from './address-policy.js';
export { checkPage } from './check-page.js';
export { CheckPoolError } from './check-pool.js';
export type { CheckPool, CheckPoolErrorCode } from './check-pool.js';
export { scanSite } from './scan-site.js';
export type { ScanDeps, ScanEvents, ScanInput, ScanMode } from './scan-site.js';
export { buildReport, countByLevel, countByCriterion, summarize } from './summary.js';
export { criteriaFromTags, criterionFromTag, tagsForStandard, WCAG_CRITERIA } from './wcag.js';
