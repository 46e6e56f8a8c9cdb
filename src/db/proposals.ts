/** Proposals as stored, imported with `pactum proposals import`. */
import type { Proposal, ProposedChange } from '../domain/regulations/proposals.js';
import { proposalDiff } from '../domain/regulations/proposals.js';
import type { Db } from './knex.js';

export interface ProposalRow {
  id: string;
  source: string;
  detected_at: string;
  type: Proposal['type'];
  affected_regulation_id: string | null;
  summary: string;
  proposed_changes: string;
  status: Proposal['status'];
  imported_at: string;
}

export function toProposal(r: ProposalRow, withDiff: boolean): Proposal {
  const proposedChanges = JSON.parse(r.proposed_changes) as ProposedChange[];
  return {
    id: r.id,
    source: r.source,
    detectedAt: r.detected_at,
    type: r.type,
    affectedRegulationId: r.affected_regulation_id,
    summary: r.summary,
    proposedChanges,
    status: r.status,
    // Stays on the event loop: proposals come from the operator's import (pactum proposals
    // import), never from a caller, and each change is one regulation record of a few kB.
    ...(withDiff ? { diff: proposalDiff(proposedChanges) } : {}),
    origin: 'database',
  };
}

export async function upsertProposal(db: Db, p: Omit<Proposal, 'diff' | 'origin'>) {
  const row: ProposalRow = {
    id: p.id,
    source: p.source,
    detected_at: p.detectedAt,
    type: p.type,
    affected_regulation_id: p.affectedRegulationId,
    summary: p.summary,
    proposed_changes: JSON.stringify(p.proposedChanges),
    status: p.status,
    imported_at: new Date().toISOString(),
  };
  const { id, ...rest } = row;
  await db('proposals').insert(row).onConflict('id').merge(rest);
  void id;
}
