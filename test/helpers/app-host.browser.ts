/**
 * A minimal MCP Apps host, in the browser: ext-apps' AppBridge (2.x) talks to the view in a sandboxed
 * iframe (srcdoc, scripts only, an opaque origin), hands it a tool's result, and forwards the
 * view's tool calls to the test (window.pactumCallTool, which calls pactum over MCP).
 */
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';
import type { CallToolResult } from '@modelcontextprotocol/client';

declare global {
  interface Window {
    pactumCallTool(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
    startView(html: string, result: CallToolResult, theme: 'light' | 'dark'): Promise<void>;
    toolCalls: string[];
  }
}

window.toolCalls = [];
window.startView = async (html, result, theme) => {
  const iframe = document.createElement('iframe');
  iframe.title = 'pactum accessibility report';
  iframe.setAttribute('sandbox', 'allow-scripts allow-popups');
  document.getElementById('view')!.append(iframe);
  const bridge = new AppBridge(null, { name: 'pactum-test-host', version: '1.0.0' }, { serverTools: {}, openLinks: {} }, { hostContext: { theme, displayMode: 'inline' } });
  bridge.oncalltool = async (params) => {
    window.toolCalls.push(params.name);
    return window.pactumCallTool(params.name, (params.arguments ?? {}));
  };
  bridge.onsizechange = ({ height }) => { if (height) iframe.style.height = `${height}px`; };
  bridge.oninitialized = () => void bridge.sendToolResult(result);
  // Listening before the view loads, as a host does: the view's ui/initialize comes at once.
  await bridge.connect(new PostMessageTransport(iframe.contentWindow!, iframe.contentWindow!));
  iframe.srcdoc = html;
};
