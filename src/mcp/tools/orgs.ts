/** dashboard_create_org, dashboard_get_org, dashboard_list_orgs, dashboard_update_org. */
import { findOrgById, insertOrg, isUniqueViolation, toOrg } from '../../db/users.js';
import { page } from '../../db/pagination.js';
import { isSystemAdmin } from '../../domain/access/identity.js';
import { ToolFailure, targetOrg, type ToolHandlers } from '../tool-context.js';
import type { McpDeps } from '../services.js';

/** Slugs are one namespace across orgs (they are the first segment of the object API URLs): the answer names no holder. */
const slugTaken = (slug: string) => new ToolFailure('conflict', `The slug ${slug} is not available; choose another`);

export function orgTools(s: Pick<McpDeps, 'db' | 'users'>): Pick<ToolHandlers, 'dashboard_create_org' | 'dashboard_get_org' | 'dashboard_list_orgs' | 'dashboard_update_org'> {
  return {
    async dashboard_create_org({ name, slug }) {
      try {
        return await insertOrg(s.db, { name, slug });
      } catch (err) {
        if (isUniqueViolation(err)) throw slugTaken(slug);
        throw err;
      }
    },

    async dashboard_get_org({ targetOrgId }, { caller }) {
      const id = targetOrg(caller, targetOrgId); // left out: the caller's own
      const row = await s.users.org(id);
      if (!row) throw new ToolFailure('not_found', `No organization ${id}`);
      return toOrg(row);
    },

    async dashboard_list_orgs({ query, limit, cursor }, { caller }) {
      const q = s.db('orgs');
      if (!isSystemAdmin(caller)) q.where({ id: caller.orgId });
      if (query) {
        q.where((w) => {
          w.whereRaw('lower(name) like ?', [`%${query.toLowerCase()}%`]).orWhere('slug', 'like', `%${query.toLowerCase()}%`);
        });
      }
      const { rows, nextCursor } = await page<Parameters<typeof toOrg>[0]>(q, { column: 'slug', order: 'asc', limit: limit!, cursor });
      return { orgs: rows.map(toOrg), nextCursor };
    },

    async dashboard_update_org({ targetOrgId, name, slug }, { caller }) {
      const id = targetOrg(caller, targetOrgId);
      const changes: Record<string, string> = { updated_at: new Date().toISOString() };
      if (name !== undefined) changes.name = name;
      if (slug !== undefined) changes.slug = slug;
      try {
        const n = await s.db('orgs').where({ id }).update(changes);
        if (!n) throw new ToolFailure('not_found', `No organization ${targetOrgId}`);
      } catch (err) {
        if (isUniqueViolation(err)) throw slugTaken(slug!);
        throw err;
      }
      return (await findOrgById(s.db, id))!;
    },
  };
}
