/**
 * The MCP resources: the report App (ui://pactum/report), the WCAG success criteria as
 * `wcag://criterion/{id}`, a scan's report as `pactum://reports/{scanId}` and its Accessibility
 * Conformance Report as an HTML document, `pactum://acr/{scanId}` (templates), and the caller's
 * organization's open findings, `pactum://findings/open`. Reports, ACRs and findings are read
 * through the tools (dashboard_get_report, dashboard_get_acr, dashboard_list_reports, dashboard_query_issues) as the
 * caller, so the same permissions, org scoping, output checks and audit rows hold: another org's
 * report is not found, as its tool says.
 */
import { isInputRequiredResult, ResourceNotFoundError, ResourceTemplate, type CacheHint, type McpServer } from '@modelcontextprotocol/server';
import { RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/server';
import type { McpUiResourceMeta } from '@modelcontextprotocol/ext-apps';
import { viewAssets, viewDocument } from '../report-view/document.js';
import { criteria } from '../domain/regulations/index.js';
import { acrHtml, type AcrDocument } from '../domain/report/acr-document.js';
import type { CallTool } from './dispatch.js';
import type { ToolContext } from './tool-context.js';

/** The MCP Apps resource the report tools point at (their _meta.ui.resourceUri). */
export const REPORT_VIEW_URI = 'ui://pactum/report';
export const WCAG_TEMPLATE = 'wcag://criterion/{id}';
export const REPORT_TEMPLATE = 'pactum://reports/{scanId}';
export const OPEN_FINDINGS_URI = 'pactum://findings/open';
export const ACR_TEMPLATE = 'pactum://acr/{scanId}';

/**
 * What the host is told about the view (MCP Apps' `_meta.ui` of a resource): it fetches nothing
 * and is allowed no domain (an empty csp), and it is drawn with the host's border. Hosts read it
 * from the content of resources/read, and from the resources/list entry when that has none.
 */
const REPORT_VIEW_UI: McpUiResourceMeta = { csp: {}, prefersBorder: true };

/**
 * A report or the findings depend on the caller's org and change as scans finish: private to the
 * caller's credentials, for 30 s. The criteria and the App are the same for everyone (the
 * per-operation hint, public for five minutes).
 */
const PER_CALLER: CacheHint = { ttlMs: 30_000, cacheScope: 'private' };

/**
 * The tools a read of this resource calls as the caller: a token too narrow for one of them is
 * told which scope to ask for, as a tool call is.
 */
export function toolsReadFor(uri: string): string[] {
  if (uri === OPEN_FINDINGS_URI) return ['dashboard_list_reports', 'dashboard_query_issues'];
  if (uri.startsWith('pactum://reports/')) return ['dashboard_get_report'];
  if (uri.startsWith('pactum://acr/')) return ['dashboard_get_acr'];
  return [];
}

/** How a resource reads a tool's structured result; a not_found or forbidden tool error is a resource not found. */
export type ReadTool = (name: string, args: Record<string, unknown>) => Promise<{ result: unknown } | { error: string; message: string }>;

/** Reads a tool's result as the caller, through the dispatch (permission, arguments, output, audit). */
export function toolReader(callTool: CallTool, ctx: Pick<ToolContext, 'caller' | 'log' | 'requestId' | 'signal'>): ReadTool {
  return async (name, args) => {
    const answer = await callTool(name, args, { ...ctx, progress: async () => {} });
    if (isInputRequiredResult(answer)) return { error: 'failed', message: `${name} asks for a confirmation a resource cannot give` };
    if (answer.isError) return JSON.parse((answer.content[0] as { text: string }).text) as { error: string; message: string };
    return { result: answer.structuredContent };
  };
}

const json = (uri: URL, value: unknown) => ({ contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(value) }] });

async function viaTool(read: ReadTool, uri: URL, name: string, args: Record<string, unknown>): Promise<unknown> {
  const answer = await read(name, args);
  if ('result' in answer) return answer.result;
  if (answer.error === 'not_found' || answer.error === 'forbidden' || answer.error === 'invalid_arguments') throw new ResourceNotFoundError(uri.href, `Resource not found: ${uri.href} (${answer.message})`);
  throw new Error(`${uri.href} could not be read: ${answer.message}`);
}

/** Open findings: the issues of the latest completed scan of each of the org's sites, up to these bounds. */
const FINDINGS_SITES = 20;
const FINDINGS_PER_SITE = 100;

async function openFindings(read: ReadTool, uri: URL) {
  const listed = (await viaTool(read, uri, 'dashboard_list_reports', { limit: 100 })) as { reports: { scanId: string; siteUrl: string; status: string; finishedAt: string | null }[] };
  const latest = new Map<string, (typeof listed.reports)[number]>();
  for (const scan of listed.reports) {
    if (scan.status !== 'completed' && scan.status !== 'completed_with_errors') continue;
    const seen = latest.get(scan.siteUrl);
    if (!seen || (scan.finishedAt ?? '') > (seen.finishedAt ?? '')) latest.set(scan.siteUrl, scan);
  }
  const sites = [];
  for (const scan of [...latest.values()].slice(0, FINDINGS_SITES)) {
    const found = (await viaTool(read, uri, 'dashboard_query_issues', { scanId: scan.scanId, limit: FINDINGS_PER_SITE })) as { total: number; issues: unknown[] };
    sites.push({ siteUrl: scan.siteUrl, scanId: scan.scanId, finishedAt: scan.finishedAt, total: found.total, issues: found.issues });
  }
  return { sites };
}

export function registerResources(server: McpServer, read: ReadTool): void {
  server.registerResource('pactum report view', REPORT_VIEW_URI, {
    title: 'Accessibility report',
    description: 'The report of a scan, its progress while it runs, and the sites of the fleet, drawn for a person: summary by WCAG principle and level, the worst pages first, issues by rule with the element, its screenshot and how to fix it.',
    mimeType: RESOURCE_MIME_TYPE,
    _meta: { ui: REPORT_VIEW_UI },
  }, async (uri) => ({ contents: [{ uri: uri.href, mimeType: RESOURCE_MIME_TYPE, text: viewDocument(await viewAssets()), _meta: { ui: REPORT_VIEW_UI } }] }));

  server.registerResource('wcag-criterion', new ResourceTemplate(WCAG_TEMPLATE, {
    list: () => ({
      resources: criteria.map((c) => ({ uri: `wcag://criterion/${c.id}`, name: `WCAG ${c.id} ${c.title}`, title: `${c.id} ${c.title} (level ${c.level})`, mimeType: 'application/json' })),
    }),
  }), {
    title: 'WCAG success criterion',
    description: 'A WCAG 2.0/2.1/2.2 success criterion: its title, level, version, principle, guideline, Understanding page, and the EN 301 549 V3.2.1 clause that requires it.',
    mimeType: 'application/json',
  }, (uri, { id }) => {
    const criterion = criteria.find((c) => c.id === id);
    if (!criterion) throw new ResourceNotFoundError(uri.href, `Resource not found: ${uri.href} (no WCAG success criterion ${String(id)})`);
    return json(uri, criterion);
  });

  server.registerResource('report', new ResourceTemplate(REPORT_TEMPLATE, { list: undefined }), {
    title: 'Scan report',
    description: 'The digest of a scan of your organization (dashboard_get_report, view "digest"): its summary, the issues grouped by rule with examples, and its pages worst first.',
    mimeType: 'application/json',
    cacheHint: PER_CALLER,
  }, async (uri, { scanId }) => json(uri, await viaTool(read, uri, 'dashboard_get_report', { scanId: String(scanId), view: 'digest' })));

  server.registerResource('acr', new ResourceTemplate(ACR_TEMPLATE, { list: undefined }), {
    title: 'Accessibility Conformance Report',
    description: 'The Accessibility Conformance Report of a finished scan of your organization (dashboard_get_acr) as a self-contained HTML document on the structure of the VPAT 2.5 INT template: WCAG 2.2 A and AA, Revised Section 508 and EN 301 549 chapters 9 to 11.',
    mimeType: 'text/html',
    cacheHint: PER_CALLER,
  }, async (uri, { scanId }) => {
    const { acr } = (await viaTool(read, uri, 'dashboard_get_acr', { scanId: String(scanId) })) as { acr: AcrDocument };
    return { contents: [{ uri: uri.href, mimeType: 'text/html', text: acrHtml(acr) }] };
  });

  server.registerResource('open findings', OPEN_FINDINGS_URI, {
    title: 'Open findings',
    description: `Your organization's open findings: the issues of the latest completed scan of each site (up to ${FINDINGS_SITES} sites, ${FINDINGS_PER_SITE} issues each), with their WCAG criterion, EN 301 549 clause and, for contrast, the APCA Lc.`,
    mimeType: 'application/json',
    cacheHint: PER_CALLER,
  }, async (uri) => json(uri, await openFindings(read, uri)));
}
