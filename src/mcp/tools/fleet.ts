/** Fleet tools: the org's sites, and coordinated PRs across them. */
import { readCoordinatedPr } from '../../db/coordinated-prs.js';
import { ToolFailure, inScope, type ToolHandlers } from '../tool-context.js';

export const fleetTools: Pick<ToolHandlers, 'dashboard_coordinated_pr_status'> = {
  async dashboard_coordinated_pr_status({ id }, { caller, services }) {
    const found = await readCoordinatedPr(services.db, id);
    if (!found) throw new ToolFailure('not_found', `No coordinated PR ${id}`);
    if (!inScope(caller, found.pr.orgId)) throw new ToolFailure('forbidden', 'This coordinated PR belongs to another organization; only admin.system may read it');
    return found;
  },
};
