/**
 * Fuzzing every operation of the three APIs with valid credentials (a bearer token of a system
 * admin for the dashboard, HTTP Basic of a writer and real transfer tokens for the object APIs,
 * against a real repository): the conformance runner's own generators (examples, the generated
 * phase over many seeds, the negative phase, the MCP phase) plus mutations of valid requests —
 * fields deleted, types swapped, huge strings, hostile unicode, deep nesting, truncated JSON,
 * wrong content types, odd path parameters and encodings, odd query strings and headers,
 * oversized headers, odd methods, tus and basic transfers with broken headers; and edge cases
 * sent in every run (deep nesting where each parser meets it, NUL characters where strings reach
 * the database, JSON-RPC requests with missing or misshapen params).
 *
 * Asserted: no 5xx (from the client's side and in the server's request log), no error-level log
 * line (an unhandled error, a tool that failed unexpectedly, an output its schema refuses), no
 * JSON-RPC internal error, no response that breaks the specs (the server's response checker and
 * the runner's checks), and the server still healthy and serving at the end.
 *
 * Size: RELIABILITY=full sends at least 10,000 requests (about 12,000); the quick form in
 * `make test` about 1,200, in some ten seconds. RELIABILITY_SEED=N replays another sequence.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSync } from 'json-schema-faker';
import { tools, type ToolSpec } from '../../generated/tools.js';
import { checkAnswer } from '../../src/conformance/index.js';
import { buildRequest, exampleCases, generatedCases, negativeCases, operationDocs, type Case, type OperationDoc, type Target } from '../../src/conformance/cases.js';
import { send, type ConformanceRequest, type ConformanceResponse } from '../../src/conformance/http.js';
import { messageOf, mcpOpeningCases, toolCallCases, toolsListCase, type McpCase } from '../../src/conformance/mcp.js';
import type { Json, JsonObject } from '../../src/spec/documents.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { FULL, GIT_LFS, content, count, histogram, pool, rawRequest, report, sized, socketRequest } from './support.js';

const SEED = Number(process.env.RELIABILITY_SEED ?? 20261122);
/** Seeds of the generated phase (each: every operation, MAX_EXAMPLES requests). */
const GENERATED_SEEDS = sized(3, 40);
const MAX_EXAMPLES = 2;
const NEGATIVE_SEEDS = sized(1, 6);
/** Seeds of tools/call with arguments generated from each tool's input schema. */
const TOOL_SEEDS = sized(3, 40);
const MUTATIONS = sized(260, 4200);
const CONCURRENCY = 6;
const WANTED = sized(750, 10_000);

const PASSWORD = 'wally-fuzz-password-1';

/** A small seeded PRNG (mulberry32), so every mutation can be reproduced from RELIABILITY_SEED. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
    chance: (p: number) => next() < p,
  };
}
type Rng = ReturnType<typeof rng>;

/** One request of the fuzz run and how to judge its answer beyond "no 5xx, no violation". */
interface Attempt {
  phase: string;
  name: string;
  /** The operation of the specs it exercises, when it is one of the runner's cases. */
  operationId?: string;
  run(): Promise<{ status: number; res?: ConformanceResponse }>;
  check?(res: ConformanceResponse): string[];
}

let s: TestServer;
let target: Target;
let docs: OperationDoc[];
let orgId: string;
const statuses = new Map<number, number>();
const byPhase = new Map<string, number>();
const problems: string[] = [];
const covered = new Set<string>();
let tried = 0;

beforeAll(async () => {
  s = await startTestServer({ SERVICE_TIMEOUT_MS: '1000', LOG_LEVEL: 'debug' });
  const { org } = await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: PASSWORD, access: 'write' });
  orgId = org.id;
  const token = await s.token({ orgId, perms: ['admin.system'], ttl: 7200 });
  target = { base: s.url, repo: 'acme/site', credentials: { token, basic: `wally:${PASSWORD}` } };
  docs = (['dashboard', 'legacy', 'batch'] as const)
    .flatMap((api) => operationDocs(api))
    .filter((d, i, all) => all.findIndex((x) => x.op.operationId === d.op.operationId) === i);
});
afterAll(() => s?.stop());

async function runAll(attempts: Attempt[]) {
  await pool(attempts, CONCURRENCY, async (a) => {
    tried++;
    count(byPhase, a.phase);
    if (a.operationId) covered.add(a.operationId);
    let status = 0;
    try {
      const r = await a.run();
      status = r.status;
      if (r.res && a.check) for (const p of a.check(r.res)) problems.push(`${a.phase} ${a.name}: ${p}`);
    } catch (err) {
      problems.push(`${a.phase} ${a.name}: no answer: ${(err as Error).message}`);
    }
    count(statuses, status);
    if (status >= 500) problems.push(`${a.phase} ${a.name}: answered ${status}`);
  });
}

/** A request of the conformance runner's generators, judged by the runner's own checks. */
const fromCase = (c: Case, extra?: (res: ConformanceResponse) => string[]): Attempt => ({
  phase: c.phase,
  name: `${c.operationId} ${c.name}`,
  operationId: c.operationId,
  run: async () => {
    const res = await send(c.request, 30_000);
    return { status: res.status, res };
  },
  check: (res) => [...checkAnswer(target, c.request, res, c.expect), ...(extra?.(res) ?? [])],
});

/** A conformance-style request of ours; `refusal` when it must be answered with a 4xx. */
const request = (phase: string, name: string, req: ConformanceRequest, expect: 'any' | 'refusal' = 'any', extra?: (res: ConformanceResponse) => string[]): Attempt => ({
  phase,
  name,
  run: async () => {
    const res = await send(req, 30_000);
    return { status: res.status, res };
  },
  check: (res) => [...checkAnswer(target, req, res, expect), ...mcpInternalError(req, res), ...(extra?.(res) ?? [])],
});

/** A JSON-RPC internal error (-32603) is a server failure dressed as a 200. */
function mcpInternalError(req: ConformanceRequest, res: ConformanceResponse): string[] {
  if (!req.url.endsWith('/api/v1/mcp') || res.status !== 200) return [];
  const m = messageOf(res);
  return m?.error?.code === -32603 ? [`JSON-RPC internal error: ${JSON.stringify(m.error.message).slice(0, 300)}`] : [];
}

const mcpRequest = (body: string, extraHeaders: Record<string, string> = {}): ConformanceRequest => ({
  method: 'POST',
  url: `${target.base}/api/v1/mcp`,
  headers: {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
    authorization: `Bearer ${target.credentials.token}`,
    ...extraHeaders,
  },
  body,
});

let rpcId = 1;
const toolCall = (name: string, args: unknown) => JSON.stringify({ jsonrpc: '2.0', id: rpcId++, method: 'tools/call', params: { name, arguments: args } });

describe('fuzz', () => {
  it("the conformance runner's phases: examples, generated over many seeds, negative, MCP", async () => {
    await runAll(exampleCases(target, docs).map((c) => fromCase(c)));
    for (let i = 0; i < GENERATED_SEEDS; i++) await runAll(generatedCases(target, docs, SEED + i, MAX_EXAMPLES).map((c) => fromCase(c)));
    for (let i = 0; i < NEGATIVE_SEEDS; i++) await runAll(negativeCases(target, docs, SEED + i).map((c) => fromCase(c)));
    // The MCP phase as the runner speaks it: initialize, ping, unknown method and tool, tools/list, every tool.
    const mcpCheck = (c: McpCase) => (res: ConformanceResponse) => (res.status === 200 ? c.checkMessage(messageOf(res) as never) : [`HTTP ${res.status}`]);
    const listed: string[] = [];
    await runAll([...mcpOpeningCases(target), toolsListCase(target, listed)].map((c) => fromCase(c, mcpCheck(c))));
    expect(listed.length, 'tools/list of a system admin').toBe(Object.keys(tools).length);
    await runAll(toolCallCases(target, listed, { seed: SEED, readOnly: false }).map((c) => fromCase(c, mcpCheck(c))));
  });

  it('tools/call of every tool with arguments generated from its input schema, over many seeds', async () => {
    const attempts: Attempt[] = [];
    for (let i = 0; i < TOOL_SEEDS; i++) {
      for (const tool of Object.values(tools) as ToolSpec[]) {
        let args: unknown;
        try {
          args = generateSync(tool.inputSchema, { seed: SEED + i, optionalsProbability: 0.6 });
        } catch {
          args = (tool.inputSchema.examples as unknown[] | undefined)?.[0] ?? {};
        }
        attempts.push(request('tools', `${tool.name} (seed ${SEED + i})`, mcpRequest(toolCall(tool.name, args)), 'any', (res) => toolAnswer(tool, res)));
      }
    }
    await runAll(attempts);
  });

  it('mutations of valid requests: bodies, content types, paths, queries, headers, methods, transfers', async () => {
    const r = rng(SEED);
    const attempts = await mutationAttempts(r, MUTATIONS);
    await runAll(attempts);
  });

  it('leaves the server healthy and serving, with no 5xx, no error logged and no spec violation', async () => {
    // Still serving: a health check and a whole upload and download.
    const health = await fetch(`${s.url}/healthz`);
    expect(health.status).toBe(200);
    await health.body?.cancel();
    const c = content(10_000);
    const auth = { authorization: `Basic ${Buffer.from(`wally:${PASSWORD}`).toString('base64')}` };
    const up = await fetch(`${s.url}/acme/site.git/info/lfs/objects/batch`, {
      method: 'POST',
      headers: { ...auth, accept: GIT_LFS, 'content-type': GIT_LFS },
      body: JSON.stringify({ operation: 'upload', transfers: ['basic'], objects: [{ oid: c.oid, size: c.size }] }),
    });
    const action = (await up.json()).objects[0].actions.upload;
    expect((await fetch(action.href, { method: 'PUT', headers: action.header, body: c.bytes })).status).toBe(200);
    const got = await fetch(`${s.url}/acme/site.git/info/lfs/content/${c.oid}`, { headers: auth });
    expect(Buffer.from(await got.arrayBuffer()).equals(c.bytes)).toBe(true);

    const logged5xx = s.logLines.filter((l) => /"msg":"request"/.test(l) && /"status":5\d\d/.test(l));
    const errors = s.logLines.filter((l) => /"level":(50|60)/.test(l));
    const five = [...statuses.entries()].filter(([k]) => k >= 500).reduce((n, [, v]) => n + v, 0);
    report(`fuzz: ${tried} requests (seed ${SEED}${FULL ? ', full' : ', quick'}), ${five} 5xx, ${s.violations.length} spec violations, ${problems.length} problems, ${errors.length} error log lines`);
    const operations = docs.map((d) => d.op.operationId);
    const uncovered = operations.filter((o) => !covered.has(o));
    report(`fuzz: by phase: ${histogram(byPhase)}; operations exercised ${operations.length - uncovered.length}/${operations.length}`);
    report(`fuzz: statuses: ${histogram(statuses)}`);
    for (const p of problems.slice(0, 40)) report(`fuzz problem: ${p.slice(0, 600)}`);
    const violations = distinctViolations(s.violations);
    for (const v of violations.slice(0, 40)) report(`fuzz violation: ${v}`);
    for (const l of [...errors, ...logged5xx].slice(0, 20)) report(`fuzz server log: ${l.slice(0, 800)}`);

    expect(tried).toBeGreaterThanOrEqual(WANTED);
    expect(uncovered, 'operations of the specs never exercised').toEqual([]);
    expect(five, '5xx answers').toBe(0);
    expect(logged5xx, '5xx in the request log').toEqual([]);
    expect(errors, 'error-level log lines').toEqual([]);
    expect(problems, 'problems found by the checks').toEqual([]);
    expect(violations, 'responses that break the specs (distinct; paths cut to 100 characters)').toEqual([]);
  });
});

/** Violations as short lines, one per distinct operation, status and problem (the first path of each). */
function distinctViolations(vs: TestServer['violations']): string[] {
  const seen = new Map<string, string>();
  for (const v of vs) {
    const key = `${v.operationId} ${v.status} ${v.problem.replace(/\d{4,}/g, 'N').slice(0, 200)}`;
    if (!seen.has(key)) seen.set(key, `${v.method} ${v.path.length > 100 ? `${v.path.slice(0, 100)}…(${v.path.length})` : v.path} -> ${v.status} (${v.operationId ?? 'no operation'}): ${v.problem.slice(0, 300)}`);
  }
  return [...seen.values()];
}

/** A tools/call answer: a result or a tool error an agent can read; never an internal error. */
function toolAnswer(tool: ToolSpec, res: ConformanceResponse): string[] {
  if (res.status !== 200) return [`HTTP ${res.status}`];
  const m = messageOf(res);
  if (!m) return ['not a JSON-RPC message'];
  // -32603 is reported by mcpInternalError, which every MCP request goes through.
  if (m.error) return m.error.code === -32602 || m.error.code === -32603 ? [] : [`JSON-RPC error ${m.error.code}: ${m.error.message}`];
  const result = m.result as { isError?: boolean; content?: { text?: string }[]; structuredContent?: unknown } | undefined;
  if (result?.isError) {
    const text = result.content?.[0]?.text ?? '';
    try {
      const e = JSON.parse(text) as { error: string; message: string };
      if (e.error === 'failed' && /failed unexpectedly|invalid result/.test(e.message)) return [`tool failure: ${text}`];
      return typeof e.message === 'string' ? [] : [`error result without a message: ${text}`];
    } catch {
      return [`error result that is not JSON: ${text}`];
    }
  }
  return tool.validateOutput(result?.structuredContent) ? [] : [`structuredContent breaks ${tool.name}'s output schema`];
}

// ---------------------------------------------------------------------------------------------
// Mutations

const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff\ud800',
  '\u202eevil\u202c',
  'Z\u0351\u0352\u0353\u0354\u0355\u0356\u0357\u0358\u0359\u035a\u035b',
  '😀'.repeat(500),
  '\uFEFF',
  '\r\nX-Injected: 1',
  '../../../../etc/passwd',
  '..\\..\\..\\windows\\win.ini',
  "'; DROP TABLE users; --",
  '" OR 1=1 --',
  '%00%2e%2e%2f',
  '${jndi:ldap://127.0.0.1/x}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  '__proto__',
  'constructor',
  'NaN',
  '-0',
  '1e309',
  'null',
  'ｆｕｌｌｗｉｄｔｈ',
  'İıſK',
  'a'.repeat(70_000),
];
const NASTY_NUMBERS = [0, -1, -0, 1.5, 2 ** 53 + 1, -(2 ** 63), 1e308, 4294967296, Number.MAX_SAFE_INTEGER];

function typeSwap(r: Rng, v: Json): Json {
  const options: Json[] = [r.pick(NASTY_NUMBERS), r.pick(NASTY_STRINGS.slice(0, 20)), true, false, null, [], {}, [v], { v }];
  const differs = options.filter((o) => typeof o !== typeof v || Array.isArray(o) !== Array.isArray(v) || (o === null) !== (v === null));
  return r.pick(differs.length ? differs : options);
}

/** Paths (as key lists) to every node of a JSON value. */
function nodes(v: Json, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(at);
  if (at.length > 6) return out;
  if (Array.isArray(v)) v.forEach((x, i) => nodes(x, [...at, i], out));
  else if (v && typeof v === 'object') for (const k of Object.keys(v)) nodes((v)[k]!, [...at, k], out);
  return out;
}

function setAt(root: Json, path: (string | number)[], fn: (v: Json) => Json | undefined): Json {
  if (!path.length) return fn(root) ?? null;
  const copy = structuredClone(root) as JsonObject;
  let cur: Json = copy;
  for (const k of path.slice(0, -1)) cur = (cur as JsonObject)[k as string]!;
  const last = path[path.length - 1]!;
  const next = fn((cur as JsonObject)[last as string]!);
  if (next === undefined) {
    if (Array.isArray(cur)) cur.splice(last as number, 1);
    else delete (cur as JsonObject)[last as string];
  } else (cur as JsonObject)[last as string] = next;
  return copy;
}

function nested(depth: number, leaf: Json): string {
  return `${'['.repeat(depth)}${JSON.stringify(leaf)}${']'.repeat(depth)}`;
}

/** A mutated JSON body (as text) and whether it must be refused. */
function mutateJson(r: Rng, base: Json): { name: string; body: string | Buffer; refusal: boolean } {
  const all = nodes(base);
  const inner = all.filter((p) => p.length > 0);
  const strings = all.filter((p) => typeof p.reduce<Json>((v, k) => (v as JsonObject)?.[k as string] ?? null, base) === 'string');
  const kind = r.int(12);
  switch (kind) {
    case 0: {
      if (!inner.length) break;
      const p = r.pick(inner);
      return { name: `delete ${p.join('.')}`, body: JSON.stringify(setAt(base, p, () => undefined)), refusal: false };
    }
    case 1: {
      const p = r.pick(all);
      return { name: `type swap at ${p.join('.') || '(root)'}`, body: JSON.stringify(setAt(base, p, (v) => typeSwap(r, v))), refusal: false };
    }
    case 2: {
      const p = r.pick(strings.length ? strings : all);
      const n = r.pick([1000, 100_000, 1_000_000]);
      return { name: `huge string (${n}) at ${p.join('.')}`, body: JSON.stringify(setAt(base, p, () => 'A'.repeat(n))), refusal: false };
    }
    case 3: {
      const p = r.pick(strings.length ? strings : all);
      const u = r.pick(NASTY_STRINGS);
      return { name: `string ${JSON.stringify(u.slice(0, 20))} at ${p.join('.')}`, body: JSON.stringify(setAt(base, p, () => u)), refusal: false };
    }
    case 4: {
      const p = r.pick(all);
      const n = r.pick(NASTY_NUMBERS);
      return { name: `number ${n} at ${p.join('.')}`, body: JSON.stringify(setAt(base, p, () => n)), refusal: false };
    }
    case 5: {
      const text = JSON.stringify(base);
      const cut = 1 + r.int(Math.max(1, text.length - 1));
      return { name: `truncated at ${cut}/${text.length}`, body: text.slice(0, cut), refusal: true };
    }
    case 6: {
      const extra = r.pick(['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '']);
      const obj = base && typeof base === 'object' && !Array.isArray(base) ? JSON.stringify(base).replace(/^\{/, `{"${extra}":{"polluted":true,"isAdmin":true},`).replace(/,\}$/, '}') : JSON.stringify(base);
      return { name: `extra key ${JSON.stringify(extra)}`, body: obj, refusal: false };
    }
    case 7: {
      const depth = r.pick([64, 1000, 20_000, 200_000]);
      const p = r.pick(all);
      const marker = '"__NEST__"';
      const text = JSON.stringify(setAt(base, p, () => '__NEST__')).replace(marker, nested(depth, 1));
      return { name: `nesting ${depth} deep at ${p.join('.') || '(root)'}`, body: text, refusal: false };
    }
    case 8: {
      const body = r.pick(['null', '[]', '"text"', '0', 'true', '', ' ', '{}', '[{}]', '\uFEFF' + JSON.stringify(base), JSON.stringify([base, base])]);
      return { name: `body ${JSON.stringify(body.slice(0, 20))}`, body, refusal: !['{}', '\uFEFF'].some((x) => body.startsWith(x)) };
    }
    case 9: {
      // Duplicate keys: the last one wins in JSON.parse; it must still be judged as a whole.
      const text = JSON.stringify(base);
      const first = /^\{"([^"]+)":/.exec(text);
      return { name: 'duplicate key', body: first ? text.replace(/^\{/, `{"${first[1]}":${JSON.stringify(typeSwap(r, 'x'))},`) : text, refusal: false };
    }
    case 10: {
      return { name: 'body past MAX_JSON_BYTES', body: JSON.stringify({ pad: 'x'.repeat(4 * 1024 * 1024 + 10), base }), refusal: true };
    }
    default:
      break;
  }
  const bytes = Buffer.from(JSON.stringify(base));
  // Invalid UTF-8 in the middle of otherwise valid JSON.
  const at = r.int(bytes.length);
  return { name: 'invalid UTF-8 bytes', body: Buffer.concat([bytes.subarray(0, at), Buffer.from([0xc3, 0x28, 0xff]), bytes.subarray(at)]), refusal: false };
}

const WRONG_TYPES = ['text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16', 'application/vnd.git-lfs', 'application/*', '*/*', ';;;', 'application/json, text/plain', ''];
const ODD_SEGMENTS = [
  '..', '.', '%2e%2e', '%2E%2E%2F%2E%2E', '..%2f..%2fetc%2fpasswd', '%252e%252e%252f', 'a%2Fb', '%00', 'a%00b', '%zz', '%', '%c0%ae%c0%ae', '%ff%fe',
  '%F0%9F%98%80', 'x'.repeat(5000), '%20', '~', ';x=1', '%3F%23', 'A'.repeat(64), 'a'.repeat(63), 'a'.repeat(65), 'ABCDEF'.repeat(10) + 'abcd', '0'.repeat(64), '-1', 'null',
];

async function mutationAttempts(r: Rng, n: number): Promise<Attempt[]> {
  const out: Attempt[] = [];
  const jsonDocs = docs.filter((d) => d.body && !d.body.binary);
  const byId = new Map(docs.map((d) => [d.op.operationId, d]));
  const basic = `Basic ${Buffer.from(target.credentials.basic!).toString('base64')}`;
  const lfsBase = `${target.base}/acme/site.git/info/lfs`;

  // Real transfer tokens for the transfer endpoints: a basic upload, a download and a tus upload.
  const stored = content(4096);
  const fresh = content(8192);
  const batch = async (operation: string, objects: { oid: string; size: number }[], transfers?: string[]) => {
    const res = await fetch(`${lfsBase}/objects/batch`, { method: 'POST', headers: { authorization: basic, accept: GIT_LFS, 'content-type': GIT_LFS }, body: JSON.stringify({ operation, objects: objects.map(({ oid, size }) => ({ oid, size })), ...(transfers ? { transfers } : {}) }) });
    return (await res.json()).objects[0].actions as Record<string, { href: string; header: Record<string, string> }>;
  };
  const put = (await batch('upload', [stored], ['basic'])).upload!;
  expect((await fetch(put.href, { method: 'PUT', headers: put.header, body: stored.bytes })).status).toBe(200);
  const download = (await batch('download', [stored])).download!;
  const tusUpload = (await batch('upload', [fresh], ['tus'])).upload!;
  const basicUpload = (await batch('upload', [fresh], ['basic'])).upload!;
  const tokenOf = (a: { header: Record<string, string> }) => a.header.Authorization!;

  // Valid bodies to mutate: every example and generated body of every JSON operation, plus
  // tools/call of every tool with its example arguments.
  const bases: { od: OperationDoc; body: Json }[] = [];
  for (const od of jsonDocs) {
    for (const e of od.body!.examples) bases.push({ od, body: e });
    for (let i = 0; i < 3; i++) if (od.body!.schema) bases.push({ od, body: generateSync(od.body!.schema as never, { seed: SEED + i }) as Json });
  }
  const mcpDoc = byId.get('mcp.post')!;
  for (const tool of Object.values(tools) as ToolSpec[]) {
    bases.push({ od: mcpDoc, body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool.name, arguments: ((tool.inputSchema.examples as Json[] | undefined)?.[0] ?? {}) as Json } } });
  }

  const params = (od: OperationDoc): Record<string, Json> => {
    const v: Record<string, Json> = {};
    for (const p of od.params) if (p.required || p.example !== undefined) v[p.name] = p.example ?? (generateSync(p.schema as never, { seed: SEED }) as Json);
    return v;
  };

  const makers: ((i: number) => Attempt)[] = [
    // JSON bodies, mutated.
    (i) => {
      const { od, body } = r.pick(bases);
      const m = mutateJson(r, body);
      const req = buildRequest(target, od, { params: params(od), body: m.body, contentType: od.body!.mediaTypes[0] });
      return request('mutation', `#${i} ${od.op.operationId} ${m.name}`, req, m.refusal ? 'refusal' : 'any');
    },
    (i) => {
      const { od, body } = r.pick(bases);
      const m = mutateJson(r, body);
      const req = buildRequest(target, od, { params: params(od), body: m.body, contentType: od.body!.mediaTypes[0] });
      return request('mutation', `#${i} ${od.op.operationId} ${m.name}`, req, m.refusal ? 'refusal' : 'any');
    },
    // tools/call with mutated arguments only (the envelope stays valid, so the tool's own checks are reached).
    (i) => {
      const tool = r.pick(Object.values(tools));
      const example = ((tool.inputSchema.examples as Json[] | undefined)?.[0] ?? {}) as Json;
      const m = mutateJson(r, example);
      // Spliced in as text: a deeply nested value is more than JSON.stringify can walk.
      let argsText = m.body.toString();
      let args: unknown;
      try {
        args = JSON.parse(argsText);
      } catch {
        args = argsText;
        argsText = JSON.stringify(argsText);
      }
      const envelope = `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":${JSON.stringify(tool.name)},"arguments":${argsText}}}`;
      return request('mutation', `#${i} tools/call ${tool.name} ${m.name}`, mcpRequest(envelope), 'any', (res) =>
        typeof args === 'object' && args !== null && !Array.isArray(args) && m.body.length < 4_000_000 ? toolAnswer(tool, res) : [],
      );
    },
    // JSON-RPC envelopes that are odd.
    (i) => {
      const body = r.pick([
        '{"jsonrpc":"2.0","id":1,"method":"tools/call"}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":123}}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"dashboard_list_orgs","arguments":[]}}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"dashboard_list_orgs","arguments":"x"}}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"dashboard_list_orgs","arguments":null}}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"__proto__","arguments":{}}}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"constructor","arguments":{}}}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"toString","arguments":{}}}',
        '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
        '{"jsonrpc":"2.0","id":null,"method":"ping"}',
        '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
        '{"jsonrpc":"2.0","id":"x","method":"ping","params":"y"}',
        '{"jsonrpc":"1.0","id":1,"method":"ping"}',
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}',
        '{"jsonrpc":"2.0","id":1,"result":{}}',
        '{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}',
        '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
        '[]',
        '{"jsonrpc":"2.0","id":1,"method":"resources/list"}',
        '{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"x"}}',
        '{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}',
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}',
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"%%%"}}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"dashboard_list_orgs","arguments":{},"_meta":{"progressToken":{"x":1}}}}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"dashboard_list_orgs","arguments":{},"_meta":{"progressToken":"p1"}}}',
      ]);
      return request('mutation', `#${i} JSON-RPC ${body.slice(0, 80)}`, mcpRequest(body));
    },
    // MCP transport headers: protocol version, accept, content type.
    (i) => {
      const h = r.pick<Record<string, string>>([
        { 'mcp-protocol-version': '1900-01-01' },
        { 'mcp-protocol-version': '' },
        { 'mcp-protocol-version': 'x'.repeat(3000) },
        { accept: 'application/json' },
        { accept: 'text/event-stream' },
        { accept: 'text/html' },
        { accept: '*/*' },
        { 'content-type': r.pick(WRONG_TYPES) },
        { 'mcp-session-id': 'does-not-exist' },
        { 'last-event-id': '1' },
        { origin: 'https://evil.example' },
        { origin: 'null' },
      ]);
      return request('mutation', `#${i} MCP headers ${JSON.stringify(h).slice(0, 80)}`, mcpRequest(toolCall('dashboard_list_orgs', { limit: 2 }), h));
    },
    // Wrong content types on every JSON operation.
    (i) => {
      const od = r.pick(jsonDocs);
      const type = r.pick(WRONG_TYPES);
      const body = od.body!.examples[0] ?? {};
      const req = buildRequest(target, od, { params: params(od), body: JSON.stringify(body), contentType: type });
      if (type === '') delete req.headers['content-type'];
      return request('mutation', `#${i} ${od.op.operationId} content type ${JSON.stringify(type)}`, req, 'any');
    },
    // Odd path parameters, sent raw so nothing normalises them.
    (i) => {
      const od = r.pick(docs.filter((d) => /\{/.test(d.op.path)));
      const v = r.pick(ODD_SEGMENTS);
      const names = [...od.op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
      const victim = r.pick(names);
      const ok: Record<string, string> = { org: 'acme', repo: 'site', oid: stored.oid, id: 'lck_x', tool: 'dashboard_get_org', file: 'x.css', api: 'dashboard' };
      const path = od.op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => (name === victim ? v : ok[name] ?? 'x'));
      const headers: Record<string, string> = { authorization: od.op.security.flat().includes('bearerAuth') ? `Bearer ${target.credentials.token}` : basic, accept: od.op.path.includes('/info/lfs') ? GIT_LFS : 'application/json' };
      const body = od.body ? (od.body.binary ? Buffer.from('bytes') : JSON.stringify(od.body.examples[0] ?? {})) : undefined;
      if (body !== undefined) headers['content-type'] = od.body!.binary ? 'application/octet-stream' : od.body!.mediaTypes[0]!;
      return {
        phase: 'mutation',
        name: `#${i} ${od.op.method} ${path.slice(0, 120)}`,
        run: async () => ({ status: (await rawRequest(target.base, { method: od.op.method, path, headers, body })).status }),
      };
    },
    // Odd whole paths: double slashes, dot segments, case, trailing slashes, unknown suffixes.
    (i) => {
      const path = r.pick([
        '//api/v1/mcp', '/api/v1/mcp/', '/api/v1//mcp', '/API/V1/MCP', '/api/v1/./mcp', '/api/v1/x/../mcp', '/api/v1/mcp%2f', '/api/v1/mcp?x=%zz', '/api/v1/mcp#frag',
        '/acme/site.GIT/info/lfs/objects/batch', '/acme/site.git/info/lfs/objects/batch/', '/acme//site.git/info/lfs/objects/batch', '/acme/site.git/info/lfs//objects/batch',
        '/acme/site.git/info/lfs/../lfs/objects/batch', '/acme/site.git.git/info/lfs/objects/batch', '/acme/.git/info/lfs/objects/batch', '/.git/info/lfs/objects/batch',
        '/acme/site.git/info/lfs', '/acme/site.git/info/lfs/', '/acme/site.git/info/lfs/locks/', '/acme/site.git/info/lfs/locks/%2e%2e/unlock', '/healthz/', '/healthz?x',
        '/.well-known/oauth-protected-resource/', '/.well-known/oauth-protected-resource/api/v1/mcp/../mcp', '/' + 'a/'.repeat(2000), '/%', '/%00', '/*', '/?',
      ]);
      const method = r.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);
      const headers: Record<string, string> = { authorization: path.includes('/info/lfs') ? basic : `Bearer ${target.credentials.token}`, accept: path.includes('/info/lfs') ? GIT_LFS : 'application/json, text/event-stream' };
      let body: string | undefined;
      if (['POST', 'PUT', 'PATCH'].includes(method)) {
        headers['content-type'] = path.includes('/info/lfs') ? GIT_LFS : 'application/json';
        body = path.includes('/info/lfs') ? JSON.stringify({ operation: 'download', objects: [{ oid: stored.oid, size: stored.size }] }) : toolCall('dashboard_list_orgs', {});
      }
      return { phase: 'mutation', name: `#${i} ${method} ${path.slice(0, 100)}`, run: async () => ({ status: (await rawRequest(target.base, { method, path, headers, body })).status }) };
    },
    // Odd methods on real paths.
    (i) => {
      const od = r.pick(docs);
      const method = r.pick(['PROPFIND', 'TRACE', 'MKCOL', 'LOCK', 'PURGE', 'SEARCH', 'QUERY', 'M-SEARCH', 'get', 'Post', 'BREW']);
      const path = od.op.path.replace('{org}', 'acme').replace('{repo}', 'site').replace('{oid}', stored.oid).replace(/\{[^}]+\}/g, 'x');
      const headers = { authorization: basic, accept: '*/*' };
      return { phase: 'mutation', name: `#${i} ${method} ${path}`, run: async () => ({ status: (await rawRequest(target.base, { method, path, headers })).status }) };
    },
    // Query strings of the operations that take them.
    (i) => {
      const od = r.pick(docs.filter((d) => d.params.some((p) => p.in === 'query')) );
      const q = r.pick(['limit=-1', 'limit=0', 'limit=abc', 'limit=99999999999999999999999', 'limit=1.5', 'limit=1&limit=2', 'cursor=%zz', `cursor=${'A'.repeat(10_000)}`, 'cursor=bm90LWEtY3Vyc29y', 'path=%00', 'path=../../x', 'refspec=%ff', 'id=', 'x=' + '%41'.repeat(2000), '&&&', '=', 'limit', 'a[b]=c', '__proto__[x]=1']);
      const path = od.op.path.replace('{org}', 'acme').replace('{repo}', 'site').replace(/\{[^}]+\}/g, 'x');
      return { phase: 'mutation', name: `#${i} ${od.op.method} ${path}?${q.slice(0, 60)}`, run: async () => ({ status: (await rawRequest(target.base, { method: od.op.method, path: `${path}?${q}`, headers: { authorization: basic, accept: GIT_LFS } })).status }) };
    },
    // Credentials of the right kind, in odd shapes.
    (i) => {
      const lfs = r.chance(0.5);
      const auth = r.pick([
        'Basic', 'Basic ', 'Basic !!!', `Basic ${Buffer.from('wally').toString('base64')}`, `Basic ${Buffer.from(':').toString('base64')}`, `Basic ${Buffer.from('wally:').toString('base64')}`,
        `Basic ${Buffer.from(`wally:${PASSWORD}\u0000`).toString('base64')}`, `Basic ${Buffer.from(`${'w'.repeat(5000)}:x`).toString('base64')}`, `basic ${Buffer.from(`wally:${PASSWORD}`).toString('base64')}`,
        'Bearer', 'Bearer ', 'Bearer a.b.c', 'Bearer ....', `Bearer ${'a'.repeat(8000)}`, `Bearer ${target.credentials.token}x`, `Bearer ${target.credentials.token} extra`, `bearer ${target.credentials.token}`,
        `Bearer ${tokenOf(download).slice(7)}`, 'Digest username="x"', 'Negotiate YII=', `${basic}, ${basic}`,
      ]);
      const req: ConformanceRequest = lfs
        ? { method: 'POST', url: `${lfsBase}/objects/batch`, headers: { authorization: auth, accept: GIT_LFS, 'content-type': GIT_LFS }, body: JSON.stringify({ operation: 'download', objects: [{ oid: stored.oid, size: stored.size }] }) }
        : mcpRequest(toolCall('dashboard_list_orgs', {}), { authorization: auth });
      return request('mutation', `#${i} credentials ${auth.slice(0, 40)}`, req);
    },
    // Socket-level: oversized and odd headers, broken request lines, conflicting framing.
    (i) => {
      const host = new URL(target.base).host;
      const raw = r.pick([
        `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        `POST /api/v1/mcp HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${'a'.repeat(15_000)}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
        `GET /healthz HTTP/1.1\r\nHost: ${host}\r\n${Array.from({ length: 3000 }, (_, k) => `X-H${k}: v`).join('\r\n')}\r\n\r\n`,
        `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nX-Fold: a\r\n  folded\r\n\r\n`,
        `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nX-Bin: \u00ff\u00fe\r\n\r\n`,
        `POST /acme/site.git/info/lfs/objects/batch HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${basic}\r\nContent-Type: ${GIT_LFS}\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n{}{}{}`,
        `POST /acme/site.git/info/lfs/objects/batch HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${basic}\r\nContent-Type: ${GIT_LFS}\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
        `POST /acme/site.git/info/lfs/objects/batch HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${basic}\r\nAccept: ${GIT_LFS}\r\nContent-Type: ${GIT_LFS}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
        `POST /api/v1/mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: -1\r\n\r\n`,
        `GET /api/v1/mcp HTTP/1.1\r\n\r\n`,
        `GET /api/v1/mcp HTTP/1.0\r\n\r\n`,
        `GET /healthz HTTP/9.9\r\nHost: ${host}\r\n\r\n`,
        `GET /ü HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
        `GET /a b HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
        `GET http://${host}/healthz HTTP/1.1\r\nHost: evil.example\r\n\r\n`,
        `POST /api/v1/mcp HTTP/1.1\r\nHost: evil.example:80\r\nAuthorization: Bearer ${target.credentials.token}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"ping"}`,
        `POST /api/v1/mcp HTTP/1.1\r\nAuthorization: Bearer ${target.credentials.token}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"ping"}`,
      ]);
      return { phase: 'mutation', name: `#${i} raw ${JSON.stringify(raw.slice(0, 70))}`, run: async () => ({ status: (await socketRequest(target.base, raw)).status }) };
    },
    // The tus transfer with real tokens and odd headers.
    (i) => {
      const h = r.pick<Record<string, string>>([
        { 'upload-offset': '-1' }, { 'upload-offset': 'abc' }, { 'upload-offset': '99999999999999999999' }, { 'upload-offset': '1e3' }, { 'upload-offset': '' }, { 'upload-offset': '8193' },
        { 'upload-offset': '0', 'tus-resumable': '0.2.2' }, { 'upload-offset': '0', 'tus-resumable': '' }, { 'upload-offset': '0', 'content-type': 'application/json' },
        { 'upload-offset': '0', 'content-type': '' }, { 'upload-offset': '0', 'upload-length': '1' }, { 'upload-offset': '0', 'upload-checksum': 'sha1 AAAA' },
      ]);
      const method = r.pick(['PATCH', 'PATCH', 'HEAD', 'OPTIONS', 'POST', 'DELETE', 'GET', 'PUT']);
      const headers: Record<string, string> = { ...tusUpload.header, 'tus-resumable': '1.0.0', 'content-type': 'application/offset+octet-stream', ...h };
      for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
      const body = ['PATCH', 'POST', 'PUT'].includes(method) ? r.pick([Buffer.alloc(0), Buffer.from('x'), fresh.bytes.subarray(0, 100), Buffer.concat([fresh.bytes, Buffer.from('more')])]) : undefined;
      const path = new URL(tusUpload.href).pathname;
      return { phase: 'mutation', name: `#${i} tus ${method} ${JSON.stringify(h)}`, run: async () => ({ status: (await rawRequest(target.base, { method, path, headers, body })).status }) };
    },
    // The basic transfer with real tokens and odd bodies and headers.
    (i) => {
      const which = r.pick(['upload', 'upload', 'download', 'wrong-oid'] as const);
      const action = which === 'download' ? download : basicUpload;
      const path = which === 'wrong-oid' ? new URL(action.href).pathname.replace(fresh.oid, stored.oid) : new URL(action.href).pathname;
      const method = which === 'download' ? r.pick(['GET', 'HEAD', 'PUT']) : r.pick(['PUT', 'PUT', 'GET', 'POST']);
      const headers: Record<string, string> = { ...action.header };
      if (which === 'download') headers.range = r.pick(['bytes=0-0', 'bytes=-1', 'bytes=4095-', 'bytes=4096-', 'bytes=5-1', 'bytes=0-1,3-4', 'bytes=', 'items=0-1', 'bytes=-0', 'bytes=99999999999999999999-']);
      const body = method === 'PUT' || method === 'POST' ? r.pick([Buffer.alloc(0), fresh.bytes.subarray(0, 10), Buffer.concat([fresh.bytes, Buffer.from('x')]), Buffer.from(fresh.bytes).fill(1)]) : undefined;
      if (body) headers['content-type'] = r.pick(['application/octet-stream', 'text/plain', 'application/json']);
      return { phase: 'mutation', name: `#${i} basic ${which} ${method} ${headers.range ?? ''}`, run: async () => ({ status: (await rawRequest(target.base, { method, path, headers, body })).status }) };
    },
  ];

  // Edge cases sent in every run, quick or full: deep nesting where each parser and validator
  // meets it (the JSON-RPC envelope, a tool's arguments, the object APIs' bodies).
  for (const depth of [1000, 10_000, 100_000]) {
    const deep = nested(depth, 1);
    const edge = (name: string, req: ConformanceRequest, extra?: (res: ConformanceResponse) => string[]) => out.push(request('edge', `${name} nested ${depth} deep`, req, 'any', extra));
    edge('ping params', mcpRequest(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":${deep}}}`));
    // Refused while the body arrives (HTTP 400, far past the depth limit), else answered as a tool.
    const deepToolAnswer = (res: ConformanceResponse) => (res.status === 400 && /nests deeper/.test(res.body.toString("utf8")) ? [] : toolAnswer(tools.dashboard_list_orgs, res));
    edge('tools/call, an unknown argument', mcpRequest(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"dashboard_list_orgs","arguments":{"extra":${deep}}}}`), deepToolAnswer);
    edge('tools/call, a typed argument', mcpRequest(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"dashboard_list_orgs","arguments":{"limit":${deep}}}}`), deepToolAnswer);
    edge('tools/call, the arguments', mcpRequest(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"dashboard_list_orgs","arguments":${deep}}}`));
    edge('batch objects', { method: 'POST', url: `${lfsBase}/objects/batch`, headers: { authorization: basic, accept: GIT_LFS, 'content-type': GIT_LFS }, body: `{"operation":"download","objects":${deep}}` });
    edge('batch extra member', { method: 'POST', url: `${lfsBase}/objects/batch`, headers: { authorization: basic, accept: GIT_LFS, 'content-type': GIT_LFS }, body: `{"operation":"download","objects":[{"oid":"${stored.oid}","size":${stored.size}}],"extra":${deep}}` });
    edge('lock ref', { method: 'POST', url: `${lfsBase}/locks`, headers: { authorization: basic, accept: GIT_LFS, 'content-type': GIT_LFS }, body: `{"path":"deep.bin","ref":${deep}}` });
    edge('login', { method: 'POST', url: `${target.base}/api/v1/auth/login`, headers: { accept: 'application/json', 'content-type': 'application/json' }, body: `{"username":"x","password":${deep}}` });
  }

  // JSON-RPC requests whose params are missing or of the wrong shape: invalid params (-32602).
  for (const body of [
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}',
    '{"jsonrpc":"2.0","id":1,"method":"initialize"}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call"}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}',
  ]) out.push(request('edge', `JSON-RPC ${body}`, mcpRequest(body)));

  // NUL characters where a string reaches the database (PostgreSQL refuses them in text): path
  // parameters, a Basic username, a login, tool arguments.
  const nulEdge = (name: string, req: ConformanceRequest, extra?: (res: ConformanceResponse) => string[]) => out.push(request('edge', `NUL in ${name}`, req, 'any', extra));
  const lfsGet = (path: string, auth = basic): ConformanceRequest => ({ method: 'GET', url: `${target.base}${path}`, headers: { authorization: auth, accept: GIT_LFS } });
  nulEdge('the org of a path', lfsGet('/ac%00me/site.git/info/lfs/locks'));
  nulEdge('the repository of a path', lfsGet('/acme/si%00te.git/info/lfs/locks'));
  nulEdge('a lock id', { method: 'POST', url: `${lfsBase}/locks/lck%00x/unlock`, headers: { authorization: basic, accept: GIT_LFS, 'content-type': GIT_LFS }, body: '{}' });
  nulEdge('a lock path', { method: 'POST', url: `${lfsBase}/locks`, headers: { authorization: basic, accept: GIT_LFS, 'content-type': GIT_LFS }, body: JSON.stringify({ path: 'a\u0000b.bin' }) });
  nulEdge('a locks query', lfsGet(`${new URL(lfsBase).pathname}/locks?path=a%00b&id=x%00y&refspec=r%00`));
  nulEdge('a Basic username', lfsGet(`${new URL(lfsBase).pathname}/locks`, `Basic ${Buffer.from(`wa\u0000lly:${PASSWORD}`).toString('base64')}`));
  nulEdge('a Basic password', lfsGet(`${new URL(lfsBase).pathname}/locks`, `Basic ${Buffer.from(`wally:pat_\u0000x`).toString('base64')}`));
  nulEdge('a login', { method: 'POST', url: `${target.base}/api/v1/auth/login`, headers: { accept: 'application/json', 'content-type': 'application/json' }, body: JSON.stringify({ username: 'wa\u0000lly', password: 'x\u0000'.repeat(4) }) });
  for (const [tool, args] of [
    ['dashboard_get_user', { userId: 'usr_\u0000' }],
    ['dashboard_get_org', { targetOrgId: `${orgId}\u0000` }],
    ['dashboard_list_orgs', { query: 'a\u0000b' }],
    ['dashboard_get_scan_progress', { scanId: 'scn_\u0000' }],
    ['dashboard_get_service_connection', { serviceId: 'compliance\u0000' }],
    ['dashboard_create_org', { name: 'N\u0000L', slug: 'nul-org' }],
    ['dashboard_list_reports', { siteUrl: 'https://example.com/\u0000' }],
    ['dashboard_coordinated_pr_status', { id: 'cpr_\u0000' }],
  ] as const) {
    nulEdge(`${tool} arguments`, mcpRequest(toolCall(tool, args)), (res) => toolAnswer(tools[tool], res));
  }

  for (let i = 0; i < n; i++) out.push(r.pick(makers)(i));
  return out;
}
