/**
 * The report view's bundle: the MCP App resource stays within its size budget and holds no
 * package; the view speaks the MCP Apps version and methods of the installed ext-apps, every
 * message it sends is valid by ext-apps' own JSON Schema, and it works with ext-apps' AppBridge as
 * its host (in jsdom here; in Chromium in test/e2e/reports-chromium.test.ts); and it draws a
 * report.
 */
import { describe, expect, it, vi } from 'vitest';
import { JSDOM, VirtualConsole } from 'jsdom';
import * as extApps from '@modelcontextprotocol/ext-apps';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/ext-apps/app-bridge';
import { assertNoPackages, viewAssets, viewDocument } from '../../../src/report-view/document.js';
import { viewInBridge } from '../../helpers/view-bridge.js';
import { APPS_PROTOCOL_VERSION, METHODS } from '../../../src/report-view/host.js';
import { buildReportView } from '../../../src/domain/report/view-model.js';
import type { Issue, PageReport } from '../../../src/domain/scan/types.js';

const RESOURCE_BUDGET = 150_000;

const issue = (i: number, code: string): Issue => ({
  code, wcagCriterion: '1.1.1', wcagCriteria: ['1.1.1'], type: 'error', impact: 'serious', message: `Rule ${code}: element ${i}`, selector: `#e${i}`, context: `<div id="e${i}">x</div>`, helpUrl: `https://dequeuniversity.com/rules/axe/4.14/${code}`,
});
function reportView() {
  const pages: PageReport[] = [
    { url: 'https://example.com/a', title: 'A', issueCount: 1, issues: [issue(0, 'image-alt')], notEvaluated: [] },
    { url: 'https://example.com/b?q=1', title: 'B', issueCount: 3, issues: [issue(1, 'image-alt'), issue(2, 'label'), issue(3, 'label')], notEvaluated: [] },
  ];
  return buildReportView({
    scan: { scanId: 'scn_1', siteUrl: 'https://example.com/', standard: 'WCAG2AA', status: 'completed', engine: 'chromium', finishedAt: '2026-05-01T14:03:09.000Z' },
    summary: { pagesScanned: 2, pagesFailed: 0, totalIssues: 4, byLevel: { error: 4, warning: 0, notice: 0 }, byCriterion: {}, notEvaluated: [] },
    pages, brandScore: null, maxIssues: 100,
  });
}

describe('the report view bundle', () => {
  it(`keeps the resource ui://pactum/report within ${RESOURCE_BUDGET / 1000} kB`, async () => {
    const bytes = Buffer.byteLength(viewDocument(await viewAssets()));
    expect(bytes).toBeLessThanOrEqual(RESOURCE_BUDGET);
  });

  it('refuses a view script that bundles a package, rather than silently growing the resource', () => {
    expect(() => assertNoPackages('view.ts', ['src/report-view/view.ts', 'src/report-view/host.ts'])).not.toThrow();
    expect(() => assertNoPackages('view.ts', ['src/report-view/view.ts', 'node_modules/@modelcontextprotocol/ext-apps/dist/src/app.js'])).toThrow(/view\.ts bundles node_modules\/@modelcontextprotocol\/ext-apps\/dist\/src\/app\.js; the view's scripts take no package/);
  });

  it('speaks the MCP Apps version and methods of the installed ext-apps', () => {
    expect(APPS_PROTOCOL_VERSION).toBe(extApps.LATEST_PROTOCOL_VERSION);
    expect(SUPPORTED_PROTOCOL_VERSIONS).toContain(APPS_PROTOCOL_VERSION);
    expect(METHODS).toEqual({
      initialize: extApps.INITIALIZE_METHOD,
      initialized: extApps.INITIALIZED_METHOD,
      toolResult: extApps.TOOL_RESULT_METHOD,
      hostContextChanged: extApps.HOST_CONTEXT_CHANGED_METHOD,
      sizeChanged: extApps.SIZE_CHANGED_METHOD,
      resourceTeardown: extApps.RESOURCE_TEARDOWN_METHOD,
    });
  });

  it('works with ext-apps\' AppBridge as its host: handshake, tool result, tool calls, host context, size, ping and teardown', async () => {
    const called: string[] = [];
    const v = await viewInBridge((name, args) => {
      called.push(name);
      if (name === 'dashboard_generate_fix' && args.htmlContext === '<div id="e1">x</div>') return Promise.reject(new Error('the model is not configured'));
      if (name === 'dashboard_generate_fix') return Promise.resolve({ content: [{ type: 'text', text: '{}' }], structuredContent: { diff: '-<div>\n+<div role="img" aria-label="x">', explanation: 'Name the element.' } });
      return Promise.resolve({ content: [{ type: 'text', text: '{"error":"Not Found","message":"no such scan"}' }], isError: true });
    });
    const doc = v.window.document;
    try {
      expect(v.bridge.getAppVersion()).toEqual({ name: 'pactum report', version: '1.0.0' });
      expect(v.sent[0]).toMatchObject({ jsonrpc: '2.0', method: 'ui/initialize', params: { protocolVersion: APPS_PROTOCOL_VERSION, appCapabilities: {} } });
      expect(v.sent[1]).toEqual({ jsonrpc: '2.0', method: 'ui/notifications/initialized', params: {} });
      expect(doc.documentElement.dataset.theme).toBe('light');
      await vi.waitFor(() => expect(v.sizes).toHaveLength(1));

      // The tool's result: the report model, drawn.
      await v.bridge.sendToolResult({ content: [{ type: 'text', text: '{}' }], structuredContent: { app: reportView() } });
      await vi.waitFor(() => expect(doc.querySelectorAll('button.issue').length).toBeGreaterThan(0));

      // A fix drafted through the host, and a call the host refuses.
      const draft = (selector: string) => {
        const b = [...doc.querySelectorAll<HTMLButtonElement>('button.issue')].find((x) => x.querySelector('code')!.textContent === selector)!;
        b.click();
        const detail = doc.getElementById(b.getAttribute('aria-controls')!)!;
        [...detail.querySelectorAll('button')].find((x) => x.textContent === 'Draft a fix')!.click();
        return detail;
      };
      const fixed = draft('#e0');
      await vi.waitFor(() => expect(fixed.querySelector('.fix pre.diff')?.textContent).toBe('-<div>\n+<div role="img" aria-label="x">\n'));
      expect(fixed.querySelector('.fix')!.textContent).toContain('Name the element.');
      const refused = draft('#e1');
      await vi.waitFor(() => expect(refused.querySelector('.fix')!.textContent).toBe('No fix could be drafted: the model is not configured'));
      expect(called).toEqual(['dashboard_generate_fix', 'dashboard_generate_fix']);

      // The host's context changes: its theme and colours on the document.
      v.bridge.setHostContext({ theme: 'dark', displayMode: 'inline', styles: { variables: { '--color-background-primary': '#101010' } as never } });
      await vi.waitFor(() => expect(doc.documentElement.dataset.theme).toBe('dark'));
      expect(doc.documentElement.style.getPropertyValue('--color-background-primary')).toBe('#101010');
      expect(doc.documentElement.style.colorScheme).toBe('dark');

      // Requests from the host: ping and teardown are answered, anything else is refused.
      await expect(v.bridge.teardownResource({})).resolves.toEqual({});
      v.transport.deliver({ jsonrpc: '2.0', id: 'p1', method: 'ping' });
      v.transport.deliver({ jsonrpc: '2.0', id: 'x1', method: 'ui/unknown', params: {} });
      await vi.waitFor(() => expect(v.sent.filter((m) => 'id' in m && (m.id === 'p1' || m.id === 'x1'))).toEqual([
        { jsonrpc: '2.0', id: 'p1', result: {} },
        { jsonrpc: '2.0', id: 'x1', error: { code: -32601, message: 'Method not found: ui/unknown' } },
      ]));
      expect(v.invalid).toEqual([]);
      expect(v.errors).toEqual([]);
    } finally {
      v.close();
    }
  });

  it('reads only its host: a message from elsewhere in the page is ignored', async () => {
    const v = await viewInBridge(() => Promise.reject(new Error('no calls expected')));
    try {
      const doc = v.window.document;
      const elsewhere = new JSDOM('').window;
      (v.transport.deliver as (m: unknown, source: unknown) => void)({ jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: { content: [], structuredContent: { app: reportView() } } }, elsewhere);
      (v.transport.deliver as (m: unknown, source: unknown) => void)({ jsonrpc: '2.0', method: 'ui/notifications/host-context-changed', params: { theme: 'dark' } }, v.window);
      (v.transport.deliver as (m: unknown, source: unknown) => void)({ jsonrpc: '2.0', method: 'ui/notifications/host-context-changed', params: { theme: 'dark' } }, null);
      await new Promise((r) => setTimeout(r, 20));
      expect(doc.querySelectorAll('button.issue')).toHaveLength(0);
      expect(doc.documentElement.dataset.theme).toBe('light');
      // The same result from the host is drawn.
      await v.bridge.sendToolResult({ content: [], structuredContent: { app: reportView() } });
      await vi.waitFor(() => expect(doc.querySelectorAll('button.issue').length).toBeGreaterThan(0));
      elsewhere.close();
    } finally {
      v.close();
    }
  });

  it('says why the report cannot be loaded outside a host, instead of loading forever', async () => {
    // Opened on its own, the document is its own parent.
    const dom = new JSDOM(viewDocument(await viewAssets(), { csp: false }), { runScripts: 'dangerously', pretendToBeVisual: true });
    try {
      await vi.waitFor(() => expect(dom.window.document.getElementById('status')!.textContent).toBe('The report could not be loaded: it is an MCP App, shown inside an MCP host\'s conversation'));
    } finally {
      dom.window.close();
    }
  });

  it('draws a report embedded in the page: every rule, every issue, the worst page first', async () => {
    const view = reportView();
    const errors: unknown[] = [];
    const virtualConsole = new VirtualConsole();
    virtualConsole.on('jsdomError', (e) => errors.push(e));
    const dom = new JSDOM(viewDocument(await viewAssets(), { data: { view, progress: null }, csp: false }), { runScripts: 'dangerously', virtualConsole });
    const doc = dom.window.document;
    expect(errors).toEqual([]);
    expect([...doc.querySelectorAll('section.rule .rule-code')].map((e) => e.textContent).sort()).toEqual(['image-alt', 'label']);
    // Shown at once: the first group open and drawn; the closed one is drawn a moment later.
    const [open, closed] = [...doc.querySelectorAll<HTMLElement>('.rule-body')];
    expect(open!.hidden).toBe(false);
    expect(open!.querySelectorAll('button.issue')).toHaveLength(2);
    expect(closed!.hidden).toBe(true);
    expect(closed!.childElementCount).toBe(0);
    await vi.waitFor(() => expect((dom.window as unknown as { __pactumAllDrawnMs?: number }).__pactumAllDrawnMs).toBeTypeOf('number'));
    expect(closed!.querySelectorAll('button.issue')).toHaveLength(2);
    expect(closed!.hidden).toBe(true);
    expect(doc.querySelectorAll('button.issue')).toHaveLength(4);
    expect(doc.querySelector('table.pages tbody tr th')!.textContent).toMatch(/^B/);
    expect(doc.querySelector('.facts')!.textContent).toContain('on 2026-05-01 14:03 UTC.');
    const onB = [...doc.querySelectorAll<HTMLButtonElement>('button.issue')].find((b) => b.querySelector('code')!.textContent === '#e1')!;
    expect(onB.querySelector('.on')!.textContent).toBe(' on /b?q=1');
    onB.click();
    expect(onB.getAttribute('aria-expanded')).toBe('true');
    const detail = doc.getElementById(onB.getAttribute('aria-controls')!)!;
    expect(detail.hidden).toBe(false);
    expect(detail.querySelector('dd code')!.textContent).toBe('#e1');
    onB.click();
    expect(detail.hidden).toBe(true);
    // "Show issues" on a page's row leaves that page's issues only.
    doc.querySelector<HTMLButtonElement>('table.pages button[aria-label="Show issues: 1 issue on /a"]')!.click();
    const shown = [...doc.querySelectorAll('li[data-page]')].filter((li) => !(li as HTMLElement).hidden);
    expect(shown.map((li) => li.querySelector('code')!.textContent)).toEqual(['#e0']);
    dom.window.close();
  });
});
