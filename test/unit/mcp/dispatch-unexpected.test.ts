/**
 * A tool whose handler fails unexpectedly: the caller gets a generic tool error naming the request
 * id, and neither the answer nor the audit row carries the error's own text, which may hold
 * anything (an upstream's answer, a value being handled); the log keeps it for the operator.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createDispatch } from '../../../src/mcp/dispatch.js';
import type { ToolHandlers } from '../../../src/mcp/tool-context.js';
import { createMetrics } from '../../../src/telemetry/metrics.js';
import { createLogger } from '../../../src/telemetry/log.js';

const DETAIL = 'the upstream answered: row 17 of invoices.csv';

describe('an unexpected failure of a tool', () => {
  it('reaches neither the answer nor the audit row, only the log', async () => {
    const lines: string[] = [];
    const log = createLogger('info', new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    const audited: { outcome: string; message?: string }[] = [];
    const handlers = { dashboard_get_org: () => Promise.reject(new TypeError(`cannot read ${DETAIL}`)) } as unknown as ToolHandlers;
    const callTool = createDispatch({ handlers, metrics: createMetrics({ recording: false }), audit: { write: (e) => (audited.push(e), Promise.resolve()) } });
    const answer = await callTool('dashboard_get_org', {}, {
      caller: { scheme: 'bearerAuth', subject: 'usr_1', username: 'ada', orgId: 'org_1', role: 'org_admin', permissions: new Set(['admin.system']) } as never,
      log, requestId: 'req_42', progress: async () => {},
    });
    const text = JSON.stringify(answer);
    expect(text).toContain('failed unexpectedly; the request id req_42');
    expect(text).not.toContain(DETAIL);
    expect(audited).toEqual([expect.objectContaining({ outcome: 'failed', message: 'unexpected TypeError; the request id req_42 identifies it in the server log' })]);
    expect(lines.join('')).toContain(DETAIL);
  });
});
