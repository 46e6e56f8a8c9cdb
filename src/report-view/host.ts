/**
 * The report view's side of MCP Apps: the `ui/` dialect of JSON-RPC over postMessage between the
 * view and the host that frames it (ext-apps' specification, version 2026-01-26), spoken here
 * directly. ext-apps' own `App` runs on the MCP SDK's `Protocol` and validates with zod: bundled,
 * it costs 200 kB or more, and the resource must stay within 150 kB (docs/reports.md has the
 * measurements). The view needs little of it: the handshake, the tool result, the host's
 * context (theme and colours), its own tool calls, and its size.
 *
 * The message shapes are ext-apps' types; the version and method names are ext-apps' constants
 * (test/unit/report/view-bundle.test.ts compares them with the installed package, so an
 * upgrade that changes them fails there), and the tests run the view against ext-apps'
 * `AppBridge`, in jsdom and in Chromium.
 */
import type { McpUiHostContext, McpUiInitializeRequest, McpUiInitializeResult, McpUiSizeChangedNotification } from '@modelcontextprotocol/ext-apps';

/** The MCP Apps version the view speaks (ext-apps' LATEST_PROTOCOL_VERSION). */
export const APPS_PROTOCOL_VERSION = '2026-01-26';

/** The methods the view sends or answers, as ext-apps names them. */
export const METHODS = {
  initialize: 'ui/initialize',
  initialized: 'ui/notifications/initialized',
  toolResult: 'ui/notifications/tool-result',
  hostContextChanged: 'ui/notifications/host-context-changed',
  sizeChanged: 'ui/notifications/size-changed',
  resourceTeardown: 'ui/resource-teardown',
} as const;

/** How long the view waits for the host's answer to a request (the MCP SDK's default). */
export const REQUEST_TIMEOUT_MS = 60_000;

export interface ToolResult { structuredContent?: Record<string, unknown>; content?: { type: string; text?: string }[]; isError?: boolean }

export interface HostConnection {
  /** The host's context as it is now: what ui/initialize gave, with every change since merged in. */
  context(): McpUiHostContext;
  /** A tool of the view's MCP server, called through the host. */
  callTool(name: string, args: Record<string, unknown>): Promise<ToolResult>;
}

export interface ViewHandlers {
  toolResult(result: ToolResult): void;
  hostContextChanged(context: McpUiHostContext): void;
}

interface Message {
  jsonrpc: '2.0';
  id?: string | number;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { code: number; message: string };
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * Connects to the host (the parent frame): handlers first, so that a tool result sent right
 * after the handshake is not missed; then ui/initialize, ui/notifications/initialized, and size
 * notifications from then on. Only messages from `host` are read.
 */
export async function connectToHost(appInfo: McpUiInitializeRequest['params']['appInfo'], on: ViewHandlers, host: Window = window.parent): Promise<HostConnection> {
  // A document opened on its own is its own parent: nothing would answer.
  if (host === window) throw new Error('it is an MCP App, shown inside an MCP host\'s conversation');
  let nextId = 1;
  const pending = new Map<number, { resolve(result: unknown): void; reject(err: Error): void; timer: ReturnType<typeof setTimeout> }>();
  let context: McpUiHostContext = {};
  // The view's frame has an opaque origin and its host's origin is not known to it: as ext-apps' transport does, '*'.
  const post = (message: Omit<Message, 'jsonrpc'>) => host.postMessage({ jsonrpc: '2.0', ...message }, '*');
  const request = (method: string, params: object) => new Promise<unknown>((resolve, reject) => {
    const id = nextId++;
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new Error(`the host did not answer ${method} within ${REQUEST_TIMEOUT_MS / 1000} s`));
    }, REQUEST_TIMEOUT_MS);
    pending.set(id, { resolve, reject, timer });
    post({ id, method, params: params as Record<string, unknown> });
  });

  const answer = (m: Message) => {
    // Nothing to release on teardown: the view holds no resources of its own.
    if (m.method === 'ping' || m.method === METHODS.resourceTeardown) post({ id: m.id, result: {} });
    else post({ id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
  };
  const notified = (m: Message) => {
    if (m.method === METHODS.toolResult && isObject(m.params)) on.toolResult(m.params);
    else if (m.method === METHODS.hostContextChanged && isObject(m.params)) {
      context = { ...context, ...(m.params as McpUiHostContext) };
      on.hostContextChanged(context);
    }
    // Tool input, cancellation and the rest change nothing the view shows.
  };
  const answered = (m: Message) => {
    const waiting = typeof m.id === 'number' ? pending.get(m.id) : undefined;
    if (!waiting) return;
    pending.delete(m.id as number);
    clearTimeout(waiting.timer);
    if (isObject(m.error)) waiting.reject(new Error(typeof m.error.message === 'string' ? m.error.message : 'the host refused the request'));
    else waiting.resolve(m.result);
  };
  window.addEventListener('message', (e: MessageEvent) => {
    if (e.source !== host) return;
    const m = e.data as unknown;
    if (!isObject(m) || m.jsonrpc !== '2.0') return;
    const message = m as unknown as Message;
    if (typeof message.method === 'string') {
      if (message.id !== undefined) answer(message);
      else notified(message);
    } else if (message.id !== undefined) answered(message);
  });

  const params: McpUiInitializeRequest['params'] = { appInfo, appCapabilities: {}, protocolVersion: APPS_PROTOCOL_VERSION };
  const initialized = await request(METHODS.initialize, params);
  if (!isObject(initialized)) throw new Error('the host answered ui/initialize without a result');
  context = (initialized as unknown as McpUiInitializeResult).hostContext ?? {};
  post({ method: METHODS.initialized, params: {} });
  reportSize((size) => post({ method: METHODS.sizeChanged, params: size }));

  return {
    context: () => context,
    async callTool(name, args) {
      const result = await request('tools/call', { name, arguments: args });
      if (!isObject(result)) throw new Error(`${name}: the host answered without a result`);
      return result;
    },
  };
}

/**
 * The document's size whenever it changes, once a frame: the height its content needs (measured
 * at max-content, so a frame the host has made taller does not keep it tall) and the width the
 * host gave it. The host sizes the frame from it.
 */
function reportSize(send: (size: McpUiSizeChangedNotification['params']) => void) {
  let queued = false;
  let width = 0;
  let height = 0;
  const measure = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      const html = document.documentElement;
      const before = html.style.height;
      html.style.height = 'max-content';
      const h = Math.ceil(html.getBoundingClientRect().height);
      html.style.height = before;
      const w = Math.ceil(window.innerWidth);
      if (w === width && h === height) return;
      width = w;
      height = h;
      send({ width: w, height: h });
    });
  };
  measure();
  const observer = new ResizeObserver(measure);
  observer.observe(document.documentElement);
  observer.observe(document.body);
}

/** The host's theme and colours on the document (data-theme and color-scheme; its CSS variables). */
export function applyHostContext(context: McpUiHostContext) {
  const html = document.documentElement;
  if (context.theme === 'light' || context.theme === 'dark') {
    html.setAttribute('data-theme', context.theme);
    html.style.colorScheme = context.theme;
  }
  const variables = context.styles?.variables as Record<string, string | undefined> | undefined;
  // Custom properties only: the host names the variables, the view's stylesheet decides what they style.
  if (variables) for (const [name, value] of Object.entries(variables)) if (name.startsWith('--') && typeof value === 'string') html.style.setProperty(name, value);
}
