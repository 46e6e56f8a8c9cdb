/** The tool catalogue generated from the spec's stubs: complete, and every tool guarded. */
import { describe, expect, it } from 'vitest';
import { tools, toolNames } from '../../generated/tools.js';
import { operations } from '../../generated/operations.js';
import { PERMISSIONS } from '../../src/domain/access/permissions.js';

const SEED_TOOLS = [
  'dashboard_coordinated_pr_status', 'dashboard_create_org', 'dashboard_create_service_connection', 'dashboard_create_user',
  'dashboard_generate_fix', 'dashboard_get_brand_score', 'dashboard_get_org', 'dashboard_get_proposal', 'dashboard_get_regulation',
  'dashboard_get_report', 'dashboard_get_scan_progress', 'dashboard_get_service_connection', 'dashboard_get_user',
  'dashboard_list_proposals', 'dashboard_list_regulations', 'dashboard_scan_site', 'dashboard_test_service_connection',
];
const REFERENCE_TOOLS = [
  'list_orgs', 'list_users', 'update_user', 'update_org', 'list_service_connections', 'update_service_connection', 'list_reports',
  'query_issues', 'list_brand_scores', 'list_jurisdictions', 'list_wcag_criteria', 'list_fleet', 'scan_summary_for_fleet',
  'queue_bulk_fix', 'scan_page',
].map((t) => `dashboard_${t}`);

describe('tool catalogue', () => {
  it('covers the 17 tools of seed 000 and the 15 more of the reference dashboard', () => {
    for (const t of [...SEED_TOOLS, ...REFERENCE_TOOLS]) expect(toolNames).toContain(t);
    expect(new Set([...SEED_TOOLS, ...REFERENCE_TOOLS]).size).toBe(32);
  });

  it('gives every tool a known permission, all four annotations, a description and object schemas', () => {
    for (const t of Object.values(tools)) {
      expect(PERMISSIONS, t.name).toContain(t.permission);
      expect(Object.keys(t.annotations).sort(), t.name).toEqual(['destructiveHint', 'idempotentHint', 'openWorldHint', 'readOnlyHint']);
      for (const v of Object.values(t.annotations)) expect(typeof v).toBe('boolean');
      if (t.annotations.readOnlyHint) expect(t.annotations.destructiveHint, `${t.name} is read-only and destructive`).toBe(false);
      expect(t.description.length, t.name).toBeGreaterThan(40);
      expect(t.inputSchema.type).toBe('object');
      expect(t.outputSchema.type).toBe('object');
      expect(JSON.stringify([t.inputSchema, t.outputSchema]), `${t.name} schemas must be self-contained`).not.toContain('$ref');
    }
  });

  it('takes the permissions the seed names for org and coordinated-PR tools', () => {
    expect(tools.dashboard_create_org.permission).toBe('admin.system');
    expect(tools.dashboard_get_org.permission).toBe('admin.org');
    expect(tools.dashboard_queue_bulk_fix.permission).toBe('admin.org');
  });

  it('has one discovery stub operation per tool, open to anyone', () => {
    for (const name of toolNames) {
      const op = operations.find((o) => o.operationId === `mcp.tool.${name}`);
      expect(op?.path).toBe(`/api/v1/mcp/tools/${name}`);
      expect(op?.security).toEqual([]);
      expect(Object.keys(op!.responses).sort()).toEqual(['200', '405']);
    }
  });

  it('never lets a secret into an output schema', () => {
    for (const t of Object.values(tools)) {
      const out = JSON.stringify(t.outputSchema);
      for (const word of ['"password"', '"passwordHash"', '"clientSecret"', '"password_hash"']) expect(out, t.name).not.toContain(word);
    }
  });
});
