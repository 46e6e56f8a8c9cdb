/**
 * Inputs a member or a browser controls that reach a lookup or an error path: JSON-RPC method
 * names that are Object.prototype's members, a stale session cookie on the pages, a report id that
 * fails its pattern, a NUL in an extra property (whether the specs say it is refused), and
 * whether an https deployment sends Strict-Transport-Security.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { report, withPactum } from './harness.js';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function rpc(url: string, token: string, method: string) {
  const res = await fetch(`${url}/api/v1/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: {} }) });
  const body = (await res.json().catch(() => null)) as { error?: { code?: number } } | null;
  return `${res.status}${typeof body?.error?.code === 'number' ? ` ${body.error.code}` : ''}`;
}

/** A signed-out session cookie of `user`. */
async function staleCookie(url: string, user: string, password: string): Promise<string | null> {
  const res = await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ username: user, password }) });
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('session='))?.split(';')[0];
  await res.body?.cancel();
  if (!cookie) return null;
  await fetch(`${url}/api/v1/auth/logout`, { method: 'POST', headers: { cookie } }).then((r) => r.body?.cancel());
  return cookie;
}

async function page(url: string, path: string, headers: Record<string, string>) {
  const res = await fetch(`${url}${path}`, { headers: { accept: 'text/html', ...headers } });
  await res.body?.cancel();
  const ended = res.headers.getSetCookie().some((c) => /Max-Age=0/.test(c));
  return `${res.status} ${(res.headers.get('content-type') ?? '').split(';')[0]}${ended ? ', cookie ended' : ''}`;
}

/** Whether the build's batch spec refuses a NUL in an extra property (what clients and the conformance runner read). */
function specRefusesNul(dist: string): string {
  const file = join(dist, '..', 'generated', 'specs', 'batch.json');
  if (!existsSync(file)) return 'no bundled spec beside the build';
  const spec = JSON.parse(readFileSync(file, 'utf8')) as { components: { schemas: Record<string, unknown> } };
  const defs = JSON.parse(JSON.stringify(spec.components.schemas).replaceAll('#/components/schemas/', '#/$defs/')) as Record<string, unknown>;
  const ajv = new Ajv2020.default({ strict: false });
  const validate = ajv.compile({ $defs: defs, $ref: '#/$defs/batch-request' });
  const body = { operation: 'download', objects: [{ oid: 'a'.repeat(64), size: 1 }], extra: 'a\u0000b' };
  return validate(body) ? 'the spec admits it (hole: clients and the conformance runner cannot know)' : 'the spec refuses it';
}

export default async function sharedServiceInputs(dist: string) {
  await withPactum(dist, {}, async ({ run, start }) => {
    run(['org', 'create', 'acme']);
    run(['user', 'create', 'ivy', '--org', 'acme', '--role', 'member', '--password-stdin'], 'ivy-password-123\n');
    const token = run(['token', '--user', 'ivy']);
    const { url } = await start();

    const methods = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];
    const answers = await Promise.all(methods.map((m) => rpc(url, token, m)));
    report('JSON-RPC methods named after Object.prototype members', methods.map((m, i) => `${m} ${answers[i]}`).join(', ') + (answers.some((a) => a.startsWith('5')) ? ' (hole)' : ''));

    const cookie = await staleCookie(url, 'ivy', 'ivy-password-123');
    if (!cookie) return report('a signed-out session cookie', 'no session could be made');
    const home = await page(url, '/', { cookie });
    report('GET / with a signed-out session cookie', `${home}${home.startsWith('200 text/html, cookie ended') ? '' : ' (hole: no landing page, no sign-in form)'}`);
    const reportPage = await page(url, '/reports/scn_01jdq3v8k2m5n7p9r1s3t5v7x9', { cookie });
    report('GET /reports/{id} with it, Accept text/html', `${reportPage}${reportPage.startsWith('401 text/html') ? '' : ' (hole)'}`);
    const withBearer = await page(url, '/reports/scn_01jdq3v8k2m5n7p9r1s3t5v7x9', { cookie, authorization: `Bearer ${token}` });
    report('the same with a valid bearer token beside it', `${withBearer}${withBearer.startsWith('404 text/html') ? '' : ' (hole: the token is not used)'}`);
    const badId = await page(url, '/reports/a.b', {});
    report('GET /reports/a.b (an id that fails its pattern)', `${badId}${badId.startsWith('404 text/html') ? '' : ' (hole: the spec declares an HTML 404)'}`);
  });

  report('a batch body with a NUL in an extra property, in the specs', specRefusesNul(dist));

  await withPactum(dist, { PUBLIC_URL: 'https://pactum.example' }, async ({ start, env }) => {
    await start();
    const res = await fetch(`http://127.0.0.1:${env.PORT}/healthz`);
    await res.body?.cancel();
    const hsts = res.headers.get('strict-transport-security');
    report('PUBLIC_URL https: Strict-Transport-Security', hsts ?? 'none (hole)');
  });
}
