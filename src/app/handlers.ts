/**
 * The binding of every operationId in the specs to its handler: one hop from a spec operation
 * (or a tool name, through mcp/tools) to the code that serves it. TypeScript fails the build
 * when an operation has no handler.
 */
import { randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { toolNames, type ToolName } from '../../generated/tools.js';
import type { Services } from './services.js';
import { toolStub } from '../mcp/stubs.js';
import { health } from '../ops/health.js';
import { ready } from '../ops/ready.js';
import { metricsHandler } from '../ops/metrics-endpoint.js';
import { docsAsset, docsPage, docsSpec, homePage } from '../ops/docs.js';
import { login, logout, protectedResource } from '../auth/routes.js';
import { delegate, oauthConsent, oauthInteraction, oauthSignIn, registrationLimit } from '../auth/oauth-routes.js';
import { reportExport, reportPage, reportScreenshot, sharedReportPage, sharedScreenshot } from '../reports/routes.js';
import { reportAcr } from '../reports/acr.js';
import { batch } from '../objects/batch.js';
import { createObject, getObject } from '../objects/legacy.js';
import { createLock, listLocks, unlock, verifyLocks } from '../objects/locks.js';
import { download, upload, verify } from '../objects/transfers/basic.js';
import { tusHead, tusOptions, tusPatch } from '../objects/transfers/tus.js';
import type { Handler, Handlers } from '../http/router.js';
import type { OperationId } from '../../generated/operations.js';

/**
 * A handler whose module is loaded by its first request: the MCP stack (the SDK, zod, the tools)
 * is about 15 MB resident that a server used only for Git LFS never needs.
 */
function loadedOnFirstUse<Id extends OperationId>(load: () => Promise<Handler<Id>>): Handler<Id> {
  let handler: Promise<Handler<Id>> | null = null;
  return async (c) => (await (handler ??= load()))(c);
}

export function bindHandlers(s: Services): Handlers {
  const stubs = Object.fromEntries(toolNames.map((t) => [`mcp.tool.${t}`, toolStub])) as Record<`mcp.tool.${ToolName}`, typeof toolStub>;
  return {
    ...stubs,
    'mcp.post': loadedOnFirstUse(async () => {
      const [{ mcpEndpoint }, { createDispatch, errorResult }, { toolHandlers }, { createScanTasks }] = await Promise.all([
        import('../mcp/endpoint.js'), import('../mcp/dispatch.js'), import('../mcp/tools/index.js'), import('../mcp/tasks.js'),
      ]);
      // One dispatch for the server's life: every tool given the parts it uses.
      const callTool = createDispatch({ handlers: toolHandlers(s), metrics: s.metrics, audit: s.audit });
      return mcpEndpoint({ config: s.config, db: s.db, callTool, tasks: createScanTasks({
          db: s.db,
          scans: s.scans,
          // A finished rescan's task answers what the tool answers about it, called as the task's poller.
          // What went wrong stays in the log: the task is answered the tool's failure without it.
          recall: async (caller, tool, args) => {
            const requestId = `task-${randomBytes(12).toString('base64url')}`;
            try {
              return (await callTool(tool, args, { caller, log: s.log, requestId, progress: () => Promise.resolve() })) as CallToolResult;
            } catch (err) {
              s.log.error({ err, tool, requestId }, 'a task\'s result could not be made');
              return errorResult('failed', `The result could not be made now; the request id ${requestId} identifies it in the server log`);
            }
          },
          // A tasks/result that waits tells the task's status at least this often: a connection silent for HTTP_IDLE_TIMEOUT_MS is closed.
          heartbeatMs: Math.min(30_000, Math.max(50, Math.floor(s.config.http.idleTimeoutMs / 2))),
        }) });
    }),
    'auth.login': login(s),
    'auth.logout': logout(s),
    'auth.protectedResource': protectedResource(s),
    'auth.protectedResourceForMcp': protectedResource(s),
    'auth.oauthServerMetadata': delegate(s, { path: '/.well-known/openid-configuration' }),
    'auth.openidConfiguration': delegate(s),
    'auth.oauthJwks': delegate(s),
    'auth.oauthAuthorize': delegate(s),
    'auth.oauthAuthorizeResume': delegate(s),
    'auth.oauthToken': delegate(s),
    'auth.oauthRevoke': delegate(s),
    'auth.oauthRegister': delegate(s, { when: (config) => config.oauth.dcr, limit: registrationLimit() }),
    'auth.oauthInteraction': oauthInteraction(s),
    'auth.oauthSignIn': oauthSignIn(s),
    'auth.oauthConsent': oauthConsent(s),
    'ops.health': health,
    'ops.ready': ready(s),
    'ops.metrics': metricsHandler(s.config, s.metrics),
    'ops.docs': docsPage,
    'ops.docsAsset': docsAsset,
    'ops.docsSpec': docsSpec(s.config.publicUrl),
    'ops.home': homePage(s),
    'reports.page': reportPage(s),
    'reports.sarif': reportExport(s, 'sarif'),
    'reports.junit': reportExport(s, 'junit'),
    'reports.csv': reportExport(s, 'csv'),
    'reports.pa11y': reportExport(s, 'pa11y'),
    'reports.acr': reportAcr(s),
    'reports.screenshot': reportScreenshot(s),
    'reports.shared': sharedReportPage(s),
    'reports.sharedScreenshot': sharedScreenshot(s),
    'legacy.getObject': getObject(s),
    'legacy.createObject': createObject(s),
    'objects.download': download(s),
    'objects.upload': upload(s),
    'objects.verify': verify(s),
    'batch.batch': batch(s),
    'tus.options': tusOptions,
    'tus.head': tusHead(s),
    'tus.patch': tusPatch(s),
    'locks.list': listLocks(s),
    'locks.create': createLock(s),
    'locks.verify': verifyLocks(s),
    'locks.unlock': unlock(s),
  };
}
