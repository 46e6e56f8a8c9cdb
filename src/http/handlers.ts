/**
 * The binding of every operationId in the specs to its handler: one hop from a spec operation
 * (or a tool name, through mcp/tools) to the code that serves it. TypeScript fails the build
 * when an operation has no handler.
 */
import { toolNames, type ToolName } from '../../generated/tools.js';
import type { Services } from '../server.js';
import { toolStub } from '../mcp/stubs.js';
import { health } from '../ops/health.js';
import { notImplemented } from './not-implemented.js';
import type { Handlers } from './router.js';

export function bindHandlers(_s: Services): Handlers {
  const stubs = Object.fromEntries(toolNames.map((t) => [`mcp.tool.${t}`, toolStub])) as Record<`mcp.tool.${ToolName}`, typeof toolStub>;
  return {
    ...stubs,
    'mcp.post': notImplemented,
    'auth.login': notImplemented,
    'auth.logout': notImplemented,
    'auth.protectedResource': notImplemented,
    'auth.protectedResourceForMcp': notImplemented,
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
