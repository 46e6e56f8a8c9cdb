/**
 * The report view as an MCP App in jsdom, with ext-apps' AppBridge as its host over a transport
 * that carries what each side posts to the other. Every message the view sends is checked as
 * ext-apps' PostMessageTransport checks it (JSON-RPC), and a ui/ one against ext-apps' schema.
 */
import { createRequire } from 'node:module';
import { JSDOM, VirtualConsole } from 'jsdom';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/core';
import type { CallToolResult, JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { AppBridge } from '@modelcontextprotocol/ext-apps/app-bridge';
import { viewAssets, viewDocument } from '../../src/report-view/document.js';

const require = createRequire(import.meta.url);
const schema = require('@modelcontextprotocol/ext-apps/schema.json') as { $defs: Record<string, { properties?: { method?: { const?: string } } }> };

/** ext-apps' schema of a ui/ message, by its method. */
const ajv = new Ajv2020({ strict: false });
function uiSchemaOf(method: string) {
  const entry = Object.entries(schema.$defs).find(([, d]) => d.properties?.method?.const === method);
  if (!entry) throw new Error(`ext-apps' schema.json has no message ${method}`);
  return ajv.getSchema(entry[0]) ?? (ajv.addSchema(entry[1], entry[0]), ajv.getSchema(entry[0])!);
}

/**
 * The view as an MCP App in jsdom, with ext-apps' AppBridge as its host over a transport that
 * carries what each side posts to the other. Every message the view sends is checked as
 * ext-apps' PostMessageTransport checks it (JSON-RPC), and a ui/ one against ext-apps' schema.
 */
export async function viewInBridge(calls: (name: string, args: Record<string, unknown>) => Promise<CallToolResult>, html?: string) {
  const sent: JSONRPCMessage[] = [];
  const invalid: string[] = [];
  const errors: unknown[] = [];
  const virtualConsole = new VirtualConsole();
  virtualConsole.on('jsdomError', (e) => errors.push(e));
  /** The host's window, as the view sees it: what it posts to, and the source of what it reads. */
  const host = { postMessage: (_message: unknown) => {} };
  const transport: Transport & { deliver(m: unknown): void } = {
    async start() {},
    async close() {},
    send: (message) => Promise.resolve(transport.deliver(message)),
    deliver: () => {},
  };
  const dom = new JSDOM(html ?? viewDocument(await viewAssets(), { csp: false }), {
    runScripts: 'dangerously', pretendToBeVisual: true, virtualConsole,
    beforeParse(window) {
      // The view's parent is the host: what the view posts to it goes to the bridge.
      Object.defineProperty(window, 'parent', { value: host });
      host.postMessage = (message: unknown) => {
        const parsed = JSONRPCMessageSchema.safeParse(message);
        if (!parsed.success) invalid.push(`not JSON-RPC: ${JSON.stringify(message)}`);
        const m = message as { method?: string; params?: unknown };
        if (m.method?.startsWith('ui/')) {
          const validate = uiSchemaOf(m.method);
          if (!validate({ method: m.method, ...(m.params === undefined ? {} : { params: m.params }) })) invalid.push(`${m.method}: ${ajv.errorsText(validate.errors)}`);
        }
        sent.push(message as JSONRPCMessage);
        queueMicrotask(() => transport.onmessage?.(message as JSONRPCMessage));
      };
      // jsdom has no ResizeObserver: the view's size is measured once.
      (window as unknown as { ResizeObserver: unknown }).ResizeObserver = class { observe() {} disconnect() {} };
    },
  });
  const { window } = dom;
  // A message event as the browser fires it, from the host's window unless said otherwise.
  transport.deliver = (message, source: unknown = host) => {
    const event = new window.Event('message');
    Object.defineProperties(event, { data: { value: message }, source: { value: source } });
    window.dispatchEvent(event);
  };
  const bridge = new AppBridge(null, { name: 'test host', version: '1.0.0' }, { serverTools: {} }, { hostContext: { theme: 'light', displayMode: 'inline' } });
  bridge.oncalltool = (params) => calls(params.name, params.arguments ?? {});
  const initialized = new Promise<void>((resolve) => { bridge.oninitialized = () => resolve(); });
  const sizes: { width?: number; height?: number }[] = [];
  bridge.onsizechange = (size) => sizes.push(size);
  await bridge.connect(transport);
  await initialized;
  return { dom, window, bridge, transport, sent, invalid, errors, sizes, close: () => { dom.window.close(); void bridge.close(); } };
}

