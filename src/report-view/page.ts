/**
 * What the report page adds to the report view, and the MCP App resource does not carry (it is a
 * script of its own, after view.ts's, so the resource stays within its size): on the signed-in
 * page, for a caller who may share, a button that makes a read-only link to the report
 * (dashboard_share_report, through this server's MCP endpoint with the page's session) and
 * revokes it; on a page a link shows, a note that it is a shared, read-only copy and until when.
 * The view has drawn the report by the time this runs (both scripts are inline, in order).
 */

interface PageExtras {
  view: { scanId: string } | null;
  canShare?: boolean;
  shared?: { expiresAt: string };
}

interface ToolAnswer {
  result?: { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { type: string; text?: string }[] };
  error?: { message: string };
  message?: string;
}

const utcTime = (iso: string) => `${new Date(iso).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, attrs: Record<string, string> = {}): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

/** A tool, through POST /api/v1/mcp (from /reports/{id}: ../api/v1/mcp, keeping a proxy's prefix). */
async function call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await fetch('../api/v1/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = (await res.json()) as ToolAnswer;
  const text = body.result?.content?.find((c) => c.type === 'text')?.text;
  if (!res.ok || !body.result) throw new Error(body.error?.message ?? body.message ?? `the server answered ${res.status}`);
  if (body.result.isError) throw new Error(text ? ((JSON.parse(text) as { message?: string }).message ?? text) : `${name} failed`);
  return body.result.structuredContent ?? {};
}

const why = (err: unknown) => (err instanceof Error ? err.message : String(err));

function shareSection(scanId: string): HTMLElement {
  const section = el('section', undefined, { class: 'share', 'aria-labelledby': 'share-h' });
  const out = el('div', undefined, { 'aria-live': 'polite' });
  const make = el('button', 'Share a link', { type: 'button', 'aria-label': 'Share a link to a read-only copy of this report' });
  make.addEventListener('click', () => {
    make.disabled = true;
    out.textContent = 'Making a link…';
    call('dashboard_share_report', { scanId }).then((link) => {
      out.textContent = '';
      const field = el('input', undefined, { type: 'text', readonly: '', value: String(link.url), 'aria-label': 'The link to this report' });
      // CSSOM, which the page's policy allows (no style attribute).
      field.style.width = '100%';
      const revoke = el('button', 'Revoke this link', { type: 'button' });
      revoke.addEventListener('click', () => {
        revoke.disabled = true;
        call('dashboard_revoke_report_share', { scanId, shareId: link.shareId }).then(
          () => void (out.textContent = 'The link was revoked: it no longer opens this report.'),
          (err: unknown) => {
            revoke.disabled = false;
            out.append(el('p', `The link could not be revoked: ${why(err)}`));
          },
        );
      });
      out.append(el('p', `Anyone with this link can read this report, without signing in, until ${utcTime(String(link.expiresAt))}.`), field, revoke);
      field.select();
    }, (err: unknown) => {
      out.textContent = `No link could be made: ${why(err)}`;
    }).finally(() => {
      make.disabled = false;
    });
  });
  section.append(el('h2', 'Share', { id: 'share-h' }), make, out);
  return section;
}

const data = document.getElementById('pactum-data')?.textContent;
const page = data ? (JSON.parse(data) as PageExtras) : null;
const facts = document.querySelector('#app .facts');
if (page && facts) {
  if (page.shared) facts.after(el('p', `A read-only copy of this report, shared by link; the link works until ${utcTime(page.shared.expiresAt)}.`, { role: 'note', class: 'shared-note' }));
  else if (page.canShare && page.view) facts.after(shareSection(page.view.scanId));
}
