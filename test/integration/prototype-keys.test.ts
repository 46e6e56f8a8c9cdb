/**
 * No lookup keyed by a client's string reaches Object.prototype. Every name Object.prototype has
 * (constructor, toString, __proto__, …) is sent where a client chooses a key: the JSON-RPC method,
 * a token's role, and the CSS values, tag names and language names of fix drafting. Each is
 * answered as any unknown name is, never with a 500, a failed tool or an error-level log line.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { insertOrg } from '../../src/db/users.js';
import { isRole } from '../../src/domain/access/permissions.js';
import { parseColour } from '../../src/domain/fix/colour.js';
import { fontSizeInPx } from '../../src/domain/fix/css.js';
import { repairLang } from '../../src/domain/fix/recipes/language.js';
import { fontSizePx } from '../../src/domain/scan/style-stats.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { pactum } from '../helpers/cli.js';
import { bearer } from '../helpers/mcp.js';

const PROTOTYPE_NAMES = [...new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__'])];

let s: TestServer;
let token: string;
let orgId: string;
beforeAll(async () => {
  s = await startTestServer();
  orgId = (await insertOrg(s.services.db, { name: 'Proto', slug: 'proto' })).id;
  token = await s.token({ sub: 'usr_proto_member', orgId, role: 'member' });
});
afterAll(() => s.stop());
afterEach(() => s.expectConformant());

const errorLines = () => s.logLines.filter((l) => (JSON.parse(l) as { level: number }).level >= 50);

async function post(message: object, auth = token) {
  const res = await fetch(`${s.url}/api/v1/mcp`, {
    method: 'POST',
    headers: { ...bearer(auth), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(message),
  });
  return { status: res.status, text: await res.text() };
}

describe('Object.prototype names are unknown names', () => {
  it('has names to try', () => {
    expect(PROTOTYPE_NAMES).toEqual(expect.arrayContaining(['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf']));
  });

  it('answers each as a JSON-RPC method: method not found, as a request and as a notification', async () => {
    const before = errorLines().length;
    for (const method of PROTOTYPE_NAMES) {
      const request = await post({ jsonrpc: '2.0', id: 1, method, params: {} });
      expect(request.status, method).toBe(200);
      expect((JSON.parse(request.text) as { error?: { code: number } }).error?.code, method).toBe(-32601);
      const notification = await post({ jsonrpc: '2.0', method, params: {} });
      expect(notification.status, `${method} as a notification`).toBeLessThan(500);
    }
    expect(errorLines().slice(before)).toEqual([]);
  });

  it('refuses each as a token role: 401, as for any unknown role', async () => {
    for (const role of PROTOTYPE_NAMES) {
      expect(isRole(role), role).toBe(false);
      const forged = await s.services.tokens.sign({ sub: 'svc_proto', orgId, role: role as never, scopes: [] }, 60);
      const res = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, forged);
      expect(res.status, role).toBe(401);
    }
  });

  it('finds no colour, font size or language by such a name', () => {
    for (const name of PROTOTYPE_NAMES) {
      expect(parseColour(name), name).toBeNull();
      expect(fontSizeInPx(name), name).toBeNull();
      expect(fontSizePx(name), name).toBe(fontSizePx('medium'));
      expect(repairLang(name), name).toBeNull();
    }
  });

  it('drafts fixes for markup whose tags, colours, sizes and languages carry such names', async () => {
    const outcomes: string[] = [];
    for (const name of PROTOTYPE_NAMES.filter((n) => /^[a-z]/i.test(n))) {
      for (const [wcagCriterion, issueMessage] of [['1.4.3', 'Elements must meet minimum color contrast ratio thresholds'], ['3.1.1', '<html> element must have a valid value for the lang attribute']] as const) {
        const htmlContext = wcagCriterion === '3.1.1'
          ? `<html lang="${name}"><body><p>the and of to is</p></body></html>`
          : `<${name.toLowerCase()}-x><${name.toLowerCase()} style="color: ${name}; background: ${name}; font-size: ${name}; font: ${name}">Text</${name.toLowerCase()}></${name.toLowerCase()}-x>`;
        const res = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dashboard_generate_fix', arguments: { wcagCriterion, issueMessage, htmlContext, cssContext: `p { color: ${name}; }` } } });
        expect(res.status).toBe(200);
        const result = (JSON.parse(res.text) as { result: { isError?: boolean; content: { text: string }[] } }).result;
        outcomes.push(result.isError ? `${name} ${wcagCriterion}: ${(JSON.parse(result.content[0]!.text) as { error: string }).error}` : 'ok');
      }
    }
    expect(outcomes.filter((o) => o !== 'ok' && !o.endsWith('invalid_arguments'))).toEqual([]);
    expect(errorLines()).toEqual([]);
  });

  it('takes none for a command or an export format of the pactum command', async () => {
    // One process per name; `constructor` and `toString` are the ones an object literal answers.
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const command = await pactum([name], { DATA_DIR: s.dataDir });
      expect(command.code, name).toBe(2);
      expect(command.stderr, name).toContain(`unknown command ${name}`);
      const format = await pactum(['scan', 'http://127.0.0.1:1/', '--server', 'http://127.0.0.1:1', '--token', 't', '--format', name, '--output', '/dev/null'], { DATA_DIR: s.dataDir });
      expect(format.code, name).toBe(2);
      expect(format.stderr, name).toContain('--format is sarif, junit, csv or pa11y');
    }
  });
});
