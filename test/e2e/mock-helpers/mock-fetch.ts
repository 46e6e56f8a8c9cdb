/**
 * The fetch wrapper docs/mock.md gives MCP SDK users. Prism answers with examples, not by
 * request: each JSON-RPC message must ask for the example that answers it, and the example's
 * JSON-RPC id must be replaced by the request's (the SDK drops a response whose id it did not
 * send). The text between the markers is quoted in docs/mock.md, and the e2e test checks that
 * the two still match.
 */
// docs:begin
/** A fetch for StreamableHTTPClientTransport against the Prism mock (`make mock`). */
export const mockFetch = async (url: string | URL, init?: RequestInit): Promise<Response> => {
  const headers = new Headers(init?.headers);
  let id: unknown;
  if (init?.method === 'POST' && typeof init.body === 'string' && !headers.has('prefer')) {
    const message = JSON.parse(init.body) as { id?: unknown; method?: string; params?: { name?: string } };
    id = message.id;
    const example =
      message.method === 'initialize' ? 'initialize'
      : message.method === 'tools/list' ? 'tools_list'
      : message.method === 'tools/call' ? message.params?.name
      : message.method === 'ping' ? 'ping'
      : undefined;
    // A notification (no id) is answered 202 without a body, as by the real server.
    if (id === undefined) headers.set('prefer', 'code=202');
    else if (example) headers.set('prefer', `example=${example}`);
  }
  const response = await fetch(url, { ...init, headers });
  if (id === undefined || !response.headers.get('content-type')?.startsWith('application/json')) return response;
  // The example carries its own JSON-RPC id; the client expects the one it sent.
  const body = (await response.json()) as Record<string, unknown>;
  const replyHeaders = new Headers(response.headers);
  replyHeaders.delete('content-length');
  return new Response(JSON.stringify({ ...body, id }), { status: response.status, headers: replyHeaders });
};
// docs:end
