/** MCP SDK clients against a test server, and helpers to read tool results. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';

export async function mcpClient(baseUrl: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'pactum-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/api/v1/mcp`), { requestInit: { headers } }));
  return client;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The structured result of a successful call; fails the test on an error result. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- read like the JSON answers (helpers/http.ts json)
export function ok(result: unknown): any {
  const r = result as CallToolResult;
  expect(r.isError, r.isError ? String((r.content[0] as { text: string }).text) : '').toBeFalsy();
  expect(JSON.parse((r.content[0] as { text: string }).text)).toEqual(r.structuredContent);
  return r.structuredContent;
}

/** The {error, message} of a failed call; fails the test when the call succeeded. */
export function failure(result: unknown): { error: string; message: string; details?: unknown[] } {
  const r = result as CallToolResult;
  expect(r.isError, `expected an error result, got ${JSON.stringify(r.structuredContent)}`).toBe(true);
  expect(r.structuredContent).toBeUndefined();
  return JSON.parse((r.content[0] as { text: string }).text);
}
