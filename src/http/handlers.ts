/**
 * The binding of every operationId in the specs to its handler: one hop from a spec operation
 * (or a tool name, through mcp/tools) to the code that serves it. TypeScript fails the build
 * when an operation has no handler.
 */
import { toolNames, type ToolName } from '../../generated/tools.js';
import type { Services } from '../server.js';
import { toolStub } from '../mcp/stubs.js';
import { health } from '../ops/health.js';
import { mcpEndpoint } from '../mcp/endpoint.js';
import { login, logout, protectedResource } from '../auth/routes.js';
import { notImplemented } from './not-implemented.js';
import type { Handlers } from './router.js';

export function bindHandlers(s: Services): Handlers {
  const stubs = Object.fromEntries(toolNames.map((t) => [`mcp.tool.${t}`, toolStub])) as Record<`mcp.tool.${ToolName}`, typeof toolStub>;
  return {
    ...stubs,
    'mcp.post': mcpEndpoint(s),
    'auth.login': login(s),
    'auth.logout': logout(s),
    'auth.protectedResource': protectedResource(s),
    'auth.protectedResourceForMcp': protectedResource(s),
    'ops.health': health,
    'legacy.getObject': notImplemented,
    'legacy.createObject': notImplemented,
    'objects.download': notImplemented,
    'objects.upload': notImplemented,
    'objects.verify': notImplemented,
    'batch.batch': notImplemented,
    'tus.options': notImplemented,
    'tus.head': notImplemented,
    'tus.patch': notImplemented,
    'locks.list': notImplemented,
    'locks.create': notImplemented,
    'locks.verify': notImplemented,
    'locks.unlock': notImplemented,
  };
}
