/**
 * Jurisdictions, regulations, WCAG criteria and regulatory update proposals. Regulations and
 * proposals come from the org's compliance service when one is connected, else (or when it
 * fails) from the embedded data set and the proposals table.
 */
import { validator } from '../../../generated/operations.js';
import { decodeCursor, encodeCursor, page } from '../../db/pagination.js';
import { toProposal, type ProposalRow } from '../../db/proposals.js';
import { fetchCompliance } from '../../domain/connections/compliance.js';
import { findCriteria, findJurisdictions, findRegulation, findRegulations, type Regulation } from '../../domain/regulations/index.js';
import { proposalDiff, type Proposal } from '../../domain/regulations/proposals.js';
import { ToolFailure, type ToolContext, type ToolHandlers } from '../tool-context.js';
import type { McpDeps } from '../services.js';

const validRegulation = validator('dashboard', 'schema_regulation');
const validProposal = validator('dashboard', 'schema_proposal');

/** In-memory lists page by position. */
function slice<T>(items: T[], limit: number, cursor?: string) {
  const start = cursor ? Number(decodeCursor(cursor)) : 0;
  if (!Number.isInteger(start) || start < 0) throw new ToolFailure('invalid_arguments', 'cursor is not one this server handed out');
  const end = start + limit;
  return { items: items.slice(start, end), nextCursor: end < items.length ? encodeCursor(String(end)) : null };
}

const listOf = (key: string, each: (x: unknown) => boolean) => (body: unknown) =>
  Boolean(body && typeof body === 'object' && Array.isArray((body as Record<string, unknown>)[key]) && ((body as Record<string, unknown[]>)[key]!).every(each));

/** The org's compliance service, or null: then the embedded data set answers. */
async function compliance(s: Pick<McpDeps, 'config' | 'connections'>, ctx: ToolContext) {
  const credentials = await s.connections.credentials(ctx.caller.orgId, 'compliance');
  if (!credentials) return null;
  const timeoutMs = s.config.serviceTimeoutMs;
  return {
    get: <T>(path: string, validate: (x: unknown) => boolean) => fetchCompliance<T>(credentials, path, validate, timeoutMs),
    fallback: (reason: string) => ctx.log.warn({ reason }, 'compliance service failed; answering from the embedded data set'),
  };
}

const query = (params: Record<string, string | undefined>) => {
  const q = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
  return q.size ? `?${q}` : '';
};

export function regulationTools(s: Pick<McpDeps, 'config' | 'connections' | 'db'>): Pick<
  ToolHandlers,
  'dashboard_list_jurisdictions' | 'dashboard_list_regulations' | 'dashboard_get_regulation' | 'dashboard_list_wcag_criteria' | 'dashboard_list_proposals' | 'dashboard_get_proposal'
> {
  return {
    dashboard_list_jurisdictions({ query: q, parentId, type }) {
      return Promise.resolve({ jurisdictions: findJurisdictions({ query: q, parentId, type }) });
    },

    async dashboard_list_regulations({ jurisdiction, query: q, status, scope, limit, cursor }, ctx) {
      const remote = await compliance(s, ctx);
      if (remote) {
        const r = await remote.get<{ regulations: Regulation[] }>(`api/v1/regulations${query({ jurisdiction, query: q, status, scope })}`, listOf('regulations', validRegulation));
        if (r.ok) {
          const { items, nextCursor } = slice(r.value.regulations.map((x) => ({ ...x, source: 'compliance-service' as const })), limit!, cursor);
          return { regulations: items, nextCursor, source: 'compliance-service' };
        }
        remote.fallback(r.reason);
      }
      const { items, nextCursor } = slice(findRegulations({ jurisdiction, query: q, status, scope }), limit!, cursor);
      return { regulations: items, nextCursor, source: 'embedded' };
    },

    async dashboard_get_regulation({ regulationId }, ctx) {
      const remote = await compliance(s, ctx);
      if (remote) {
        const r = await remote.get<Regulation>(`api/v1/regulations/${encodeURIComponent(regulationId)}`, validRegulation);
        if (r.ok) return { ...r.value, source: 'compliance-service' };
        if (!r.notFound) remote.fallback(r.reason);
      }
      const found = findRegulation(regulationId);
      if (!found) throw new ToolFailure('not_found', `No regulation ${regulationId} (ids are case-sensitive, for example EU-EAA); see dashboard_list_regulations`);
      return found;
    },

    dashboard_list_wcag_criteria({ version, level, principle }) {
      return Promise.resolve({ criteria: findCriteria({ version, level, principle }) });
    },

    async dashboard_list_proposals({ status, limit, cursor }, ctx) {
      const remote = await compliance(s, ctx);
      if (remote) {
        const r = await remote.get<{ proposals: Proposal[] }>(`api/v1/proposals${query({ status })}`, listOf('proposals', validProposal));
        if (r.ok) {
          const { items, nextCursor } = slice(r.value.proposals.map((p) => ({ ...p, origin: 'compliance-service' as const })), limit!, cursor);
          return { proposals: items, nextCursor };
        }
        remote.fallback(r.reason);
      }
      const q = s.db('proposals');
      if (status) q.where({ status });
      const { rows, nextCursor } = await page<ProposalRow>(q, { column: 'id', order: 'desc', limit: limit!, cursor });
      return { proposals: rows.map((r) => toProposal(r, false)), nextCursor };
    },

    async dashboard_get_proposal({ proposalId }, ctx) {
      const remote = await compliance(s, ctx);
      if (remote) {
        const r = await remote.get<Proposal>(`api/v1/proposals/${encodeURIComponent(proposalId)}`, validProposal);
        if (r.ok) return { ...r.value, diff: r.value.diff ?? proposalDiff(r.value.proposedChanges), origin: 'compliance-service' };
        if (!r.notFound) remote.fallback(r.reason);
      }
      const row = await s.db<ProposalRow>('proposals').where({ id: proposalId }).first();
      if (!row) throw new ToolFailure('not_found', `No proposal ${proposalId}; see dashboard_list_proposals`);
      return toProposal(row, true);
    },
  };
}
