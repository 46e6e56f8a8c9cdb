/**
 * Every tool name bound to its handler, by area; each area is given the parts it uses.
 * TypeScript fails the build when a tool of the catalogue (generated from the spec) has no
 * handler here.
 */
import type { ToolHandlers } from '../tool-context.js';
import type { McpDeps } from '../services.js';
import { acrTools } from './acr.js';
import { brandTools } from './brand.js';
import { connectionTools } from './connections.js';
import { findingTools } from './findings.js';
import { fixTools } from './fixes.js';
import { fleetTools } from './fleet.js';
import { orgTools } from './orgs.js';
import { regulationTools } from './regulations.js';
import { scanTools } from './scans.js';
import { shareTools } from './shares.js';
import { userTools } from './users.js';
import { oauthGrantTools } from './oauth-grants.js';
import { monitoringTools } from './monitoring.js';

export function toolHandlers(s: McpDeps): ToolHandlers {
  return {
    ...orgTools(s),
    ...userTools(s),
    ...oauthGrantTools(s),
    ...connectionTools(s),
    ...scanTools(s),
    ...shareTools(s),
    ...brandTools(s),
    ...regulationTools(s),
    ...fixTools(s),
    ...fleetTools(s),
    ...findingTools(s),
    ...monitoringTools(s),
    ...acrTools(s),
  };
}
