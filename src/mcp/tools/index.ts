/**
 * Every tool name bound to its handler, by area. TypeScript fails the build when a tool of the
 * catalogue (generated from the spec) has no handler here.
 */
import type { ToolName } from '../../../generated/tools.js';
import { ToolFailure, type ToolHandlers } from '../tool-context.js';
import { connectionTools } from './connections.js';
import { fleetTools } from './fleet.js';
import { orgTools } from './orgs.js';
import { userTools } from './users.js';

const pending = (name: ToolName) => async () => {
  throw new ToolFailure('unavailable', `${name} is not available yet`);
};

export const toolHandlers: ToolHandlers = {
  ...orgTools,
  ...userTools,
  ...connectionTools,
  ...fleetTools,
  dashboard_scan_site: pending('dashboard_scan_site'),
  dashboard_get_scan_progress: pending('dashboard_get_scan_progress'),
  dashboard_get_report: pending('dashboard_get_report'),
  dashboard_list_reports: pending('dashboard_list_reports'),
  dashboard_query_issues: pending('dashboard_query_issues'),
  dashboard_scan_page: pending('dashboard_scan_page'),
  dashboard_set_brand_guideline: pending('dashboard_set_brand_guideline'),
  dashboard_get_brand_guideline: pending('dashboard_get_brand_guideline'),
  dashboard_get_brand_score: pending('dashboard_get_brand_score'),
  dashboard_list_brand_scores: pending('dashboard_list_brand_scores'),
  dashboard_list_jurisdictions: pending('dashboard_list_jurisdictions'),
  dashboard_list_regulations: pending('dashboard_list_regulations'),
  dashboard_get_regulation: pending('dashboard_get_regulation'),
  dashboard_list_wcag_criteria: pending('dashboard_list_wcag_criteria'),
  dashboard_list_proposals: pending('dashboard_list_proposals'),
  dashboard_get_proposal: pending('dashboard_get_proposal'),
  dashboard_generate_fix: pending('dashboard_generate_fix'),
  dashboard_list_fleet: pending('dashboard_list_fleet'),
  dashboard_scan_summary_for_fleet: pending('dashboard_scan_summary_for_fleet'),
  dashboard_queue_bulk_fix: pending('dashboard_queue_bulk_fix'),
};
