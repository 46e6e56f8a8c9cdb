/**
 * The MCP prompts: the common workflows, each written out as the tool calls that do it with the
 * arguments the person gave filled in, so that a model runs them as they are.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ACR_TEMPLATE } from './resources.js';

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
    description: 'Prepare an Accessibility Conformance Report (VPAT 2.5 INT: WCAG 2.2 A and AA, Revised Section 508, EN 301 549) from a scan: pactum derives each criterion\'s level honestly from the findings and the reviewers\' marks, and a person assesses what no check covers.',
    argsSchema: ACR_ARGS,
  }, ({ scanId, productName }) => user([
    `Prepare an Accessibility Conformance Report for ${productName}, on the structure of the VPAT 2.5 INT template, from scan ${scanId}.`,
    `1. Call ${call('dashboard_get_acr', { scanId })}: the report as it stands (the WCAG 2.2 Level A and AA tables with each criterion's conformance level and remarks, the Revised Section 508 and EN 301 549 reports, the pages covered, the engine), and the links to download it as HTML or PDF (also the resource ${ACR_TEMPLATE.replace('{scanId}', scanId)}).`,
    `2. For each criterion that is Partially Supports or Does Not Support, call ${call('dashboard_query_issues', { scanId, criterion: '<the criterion>' })} to see the failures. A finding that is not a failure is marked with dashboard_mark_finding (false_positive, with the reason); a known failure the organization accepts is marked accepted (reason and expiresAt): it still counts as a failure, and the remarks say so.`,
    `3. Findings awaiting a person's review (warnings) leave their criterion Not Evaluated: record the outcome with dashboard_review_finding.`,
    `4. For the criteria that remain Not Evaluated, ask the person what they checked by hand, and record each answer with ${call('dashboard_assess_criterion', { scanId, criterion: '<the criterion>', conformance: '<Supports | Partially Supports | Does Not Support | Not Applicable | Not Evaluated>', remarks: '<what was checked and how>' })}; its level and remarks then stand in the report. Never assess a criterion as Supports without the person's word.`,
    `5. Call ${call('dashboard_get_acr', { scanId })} again and give the person the download links.`,
    'The levels pactum derives: Does Not Support where failures of the criterion are on most pages checked, Partially Supports where they are on some; Supports only where an automated check of the criterion ran on every page and found nothing open, or a person said so, never by default; Not Evaluated for every criterion no check covers and nobody assessed, and for checks reported as not evaluated.',
  ].join('\n')));
}
