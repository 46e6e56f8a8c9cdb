/**
 * The MCP prompts: the common workflows, each written out as the tool calls that do it with the
 * arguments the person gave filled in, so that a model runs them as they are.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { OPEN_FINDINGS_URI } from './resources.js';

const call = (tool: string, args: Record<string, unknown>) => `${tool} ${JSON.stringify(args)}`;
const user = (text: string) => ({ messages: [{ role: 'user' as const, content: { type: 'text' as const, text } }] });

const SCAN_ID = z.string().regex(/^scn_[0-9a-z]{26}$/, 'a scan id, scn_ followed by 26 characters').describe('The scan id (scn_…), from dashboard_scan_site or dashboard_list_reports');

// Built once: a server is made per request.
const AUDIT_ARGS = z.object({
  siteUrl: z.string().url().describe('The site to audit, http or https'),
  maxPages: z.string().regex(/^[1-9][0-9]{0,3}$/).optional().describe('Pages to crawl at most (default 25)'),
  standard: z.enum(['WCAG2A', 'WCAG2AA', 'WCAG2AAA']).optional().describe('The conformance level to test (default WCAG2AA)'),
});
const VERIFY_ARGS = z.object({
  scanId: SCAN_ID,
  pageUrl: z.string().url().optional().describe('Check this one page at once instead of the whole site'),
});
const ACR_ARGS = z.object({
  scanId: SCAN_ID,
  productName: z.string().min(1).max(200).describe('The product the report is about'),
});

export function registerPrompts(server: McpServer): void {
  server.registerPrompt('audit_site', {
    title: 'Audit a site',
    description: 'Scan a website for WCAG failures and summarise what to fix first.',
    argsSchema: AUDIT_ARGS,
  }, ({ siteUrl, maxPages, standard }) => user([
    `Audit the accessibility of ${siteUrl}.`,
    `1. Call ${call('dashboard_scan_site', { siteUrl, scanMode: 'site', maxPages: maxPages ? Number(maxPages) : 25, standard: standard ?? 'WCAG2AA' })}.`,
    '2. Call dashboard_get_scan_progress {"scanId": <the scanId it returned>} until finished is true.',
    '3. Call dashboard_get_report {"scanId": <the scanId>, "view": "digest", "top": 10}.',
    'Then summarise for a person: the pages that could not be checked, the rules with the most issues and the pages they are on, each with its WCAG criterion and EN 301 549 clause, and for contrast failures the WCAG 2 ratio and the APCA Lc (advisory). Say which findings need a person to review them (warnings), and that an automated scan covers only part of WCAG.',
  ].join('\n')));

  server.registerPrompt('verify_fixes', {
    title: 'Verify my fixes',
    description: 'Rescan the pages of an earlier scan after fixes and compare finding by finding: what was fixed, what remains, what is new.',
    argsSchema: VERIFY_ARGS,
  }, ({ scanId, pageUrl }) => user([
    `Verify the fixes made since scan ${scanId}.`,
    `1. Call ${call('dashboard_verify_fixes', pageUrl ? { scanId, pages: [pageUrl] } : { scanId })}: it rescans ${pageUrl ? 'that page' : 'the pages that had open findings'} and answers with the rescan's scanId.`,
    '2. Call dashboard_get_scan_progress {"scanId": <that scanId>} until finished is true.',
    `3. Call ${call('dashboard_verify_fixes', { scanId, againstScanId: '<that scanId>' })}: each finding of the earlier scan is fixed, still_present or new, matched by its fingerprint.`,
    'Then list for a person the findings fixed, those still present and any new ones, with their WCAG criterion and page. A finding on a page the rescan could not check (pagesFailed) is neither fixed nor still present: say so.',
  ].join('\n')));

  server.registerPrompt('prepare_acr', {
    title: 'Prepare an ACR',
    description: 'Draft an Accessibility Conformance Report (VPAT 2.5 INT: WCAG 2.2 A and AA, EN 301 549, Section 508) from a scan, deriving each criterion\'s level honestly.',
    argsSchema: ACR_ARGS,
  }, ({ scanId, productName }) => user([
    `Prepare an Accessibility Conformance Report for ${productName}, on the structure of the VPAT 2.5 INT template, from scan ${scanId}.`,
    `1. Call ${call('dashboard_get_report', { scanId, view: 'digest', top: 100 })}: the engine, the pages covered, the rules that failed and the rules not evaluated.`,
    `2. Call ${call('dashboard_list_wcag_criteria', { version: '2.2' })} for every criterion, its level and its EN 301 549 clause (also at wcag://criterion/{id}); open findings of the organization are at ${OPEN_FINDINGS_URI}.`,
    `3. For each criterion with failures, call ${call('dashboard_query_issues', { scanId, criterion: '<the criterion>' })} to see how widespread they are.`,
    'Then write one table for WCAG 2.2 level A and one for level AA (criterion, conformance level, remarks), with the EN 301 549 chapter 9 clause beside each criterion, and state the engine, the pages covered and the date. Derive each level from the evidence only:',
    '- Does Not Support where confirmed failures (errors) of the criterion are on most pages checked; Partially Supports where they are on some.',
    '- Supports only where an automated check of the criterion ran on the pages and found nothing, or a person said so; never by default.',
    '- Not Evaluated for every criterion no check covers and nobody assessed, and for checks reported as not evaluated.',
    'Warnings need a person\'s review: list them in the remarks, not as failures or passes.',
  ].join('\n')));
}
