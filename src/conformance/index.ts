/**
 * The conformance runner: checks any server that claims to implement pactum's specs, with
 * nothing but the specs and the server's URL. Phases: examples, generated (seeded), negative,
 * MCP-aware (dashboard, with a token) and the object-API flow (with Basic credentials). Every
 * answer is checked the same way pactum's own tests check pactum: no 5xx, a status the
 * operation declares, a declared content type, a body valid against its schema, required headers.
 */
import type { ApiName } from '../../generated/operations.js';
import { checkResponse } from '../http/response-check.js';
import { operationFor } from '../http/routes.js';
import { exampleCases, generatedCases, negativeCases, operationDocs, type Case, type Target } from './cases.js';
import { STATEFUL_STEPS, objectFlow } from './flow.js';
import { send, type ConformanceRequest, type ConformanceResponse } from './http.js';
import { tools, type ToolSpec } from '../../generated/tools.js';
import { authorizationDiscovery } from './authorization.js';
import { messageOf, mcpOpeningCases, toolCallCases, toolsListCase, type McpCase } from './mcp.js';
import type { CaseResult, Phase, SkippedPhase } from './report.js';
import { TargetProblem, checkBasic, checkHealth, checkToken, factsOf, reachTarget } from './preflight.js';

export { TargetProblem } from './preflight.js';

export interface ConformanceOptions {
  target: string;
  apis: ApiName[];
  token?: string;
  basic?: string;
  /** org/repo of the object APIs. */
  repo: string;
  seed: number;
  maxExamples: number;
  /** Call only tools marked read-only (for a target whose data must not change). */
  readOnly?: boolean;
  /**
   * The repository (org/repo, the same as `repo`) the run may write to: upload objects, take
   * locks. Without it only a target that says it keeps no state (the mock) is written to.
   */
  allowWrites?: string;
  timeoutMs?: number;
  concurrency?: number;
  /** The phases to run (default all): examples, generated, negative, mcp, flow. */
  phases?: readonly Phase[];
  onProgress?: (done: number, total: number, phase: string) => void;
  /** Told of each phase left out and why (no credentials for it, no API it applies to). */
  onSkip?: (skipped: SkippedPhase) => void;
  /** Told of what the run found out about the target, and of anything it could not clean up. */
  onNotice?: (line: string) => void;
}

/** The object-API operations that change a repository (an upload announcement counts: it reserves). */
const WRITES = new Set(['legacy.createObject', 'objects.upload', 'objects.verify', 'tus.patch', 'locks.create', 'locks.unlock']);

function isWrite(api: ApiName, operationId: string, request: ConformanceRequest): boolean {
  if (api === 'dashboard') return false;
  if (WRITES.has(operationId)) return true;
  if (operationId !== 'batch.batch' || typeof request.body !== 'string') return false;
  try {
    return (JSON.parse(request.body) as { operation?: unknown }).operation !== 'download';
  } catch {
    return false;
  }
}

/**
 * What the run created on the target, to remove at the end, whatever happened meanwhile: the
 * locks it took (unlocked with force) and the sessions it signed in (logged out). Objects stay:
 * the object APIs cannot delete one, which is why the run writes only where it is allowed to.
 */
class Traces {
  private readonly locks = new Map<string, ConformanceRequest>();
  private readonly sessions = new Set<string>();

  record(operationId: string | undefined, request: ConformanceRequest, res: ConformanceResponse) {
    if (operationId === 'locks.create' && res.status === 201) {
      const id = (jsonOf(res) as { lock?: { id?: unknown } } | null)?.lock?.id;
      if (typeof id === 'string') this.locks.set(id, request);
    }
    if (operationId === 'locks.unlock' && res.status === 200) {
      const id = (jsonOf(res) as { lock?: { id?: unknown } } | null)?.lock?.id;
      if (typeof id === 'string') this.locks.delete(id);
    }
    if (operationId === 'auth.login' && res.status < 300) {
      for (const m of (res.headers['set-cookie'] ?? '').matchAll(/(?:^|,\s*)((?:__Host-)?session=[^;,]+)/g)) this.sessions.add(m[1]!);
    }
  }

  /** Removes every trace it can; returns a line for each it could not. */
  async remove(base: string, timeoutMs: number): Promise<string[]> {
    const left: string[] = [];
    for (const [id, created] of this.locks) {
      const url = `${created.url.replace(/\/locks(\?.*)?$/, '')}/locks/${encodeURIComponent(id)}/unlock`;
      const headers = { ...created.headers, 'content-type': 'application/vnd.git-lfs+json', accept: 'application/vnd.git-lfs+json' };
      const res = await send({ method: 'POST', url, headers, body: JSON.stringify({ force: true }) }, timeoutMs).catch(() => null);
      if (res?.status === 200 || res?.status === 404) this.locks.delete(id);
      else left.push(`lock ${id} (unlock answered ${res?.status ?? 'nothing'})`);
    }
    for (const cookie of this.sessions) {
      const res = await send({ method: 'POST', url: `${base}/api/v1/auth/logout`, headers: { cookie } }, timeoutMs).catch(() => null);
      if (res && res.status < 300) this.sessions.delete(cookie);
      else left.push(`a session it signed in (logout answered ${res?.status ?? 'nothing'})`);
    }
    return left;
  }
}

const jsonOf = (res: ConformanceResponse): unknown => {
  try {
    return JSON.parse(res.body.toString('utf8'));
  } catch {
    return null;
  }
};

/** The checks every answer gets; returns the problems found. */
export function checkAnswer(target: Target, request: ConformanceRequest, res: ConformanceResponse, expect: 'any' | 'refusal'): string[] {
  const prefix = new URL(target.base).pathname.replace(/\/$/, '');
  const path = new URL(request.url).pathname.slice(prefix.length) || '/';
  const op = operationFor(request.method, path);
  const problems: string[] = [];
  if (res.status >= 500) problems.push(`no 5xx: answered ${res.status}`);
  const body = request.method === 'HEAD' ? null : res.body;
  for (const p of checkResponse(op, path, res.status, res.headers, body)) problems.push(`conforms to the spec: ${p}`);
  if (expect === 'refusal' && res.status < 400) problems.push(`refuses invalid requests: answered ${res.status}`);
  if (res.status === 405 && res.headers.allow === undefined) problems.push('Allow on 405: the header is missing');
  return problems;
}

/**
 * Runs the phases against the target. Throws TargetProblem, before any check, when the target
 * cannot be reached, is not healthy, serves none of the APIs asked for or refuses the credentials.
 */
export async function runConformance(o: ConformanceOptions): Promise<CaseResult[]> {
  const target: Target = { base: o.target.replace(/\/$/, ''), repo: o.repo, credentials: { token: o.token, basic: o.basic } };
  const timeoutMs = o.timeoutMs ?? 30_000;
  const phases = new Set<Phase>(o.phases ?? ['examples', 'generated', 'negative', 'mcp', 'flow']);

  const health = await reachTarget(target.base, timeoutMs);
  const facts = factsOf(health);
  checkHealth(target.base, health, facts);
  let apis = o.apis;
  if (facts.mockApi && apis.some((a) => a !== facts.mockApi)) {
    const port = `${target.base} is the pactum mock's ${facts.mockApi} port: it serves only the ${facts.mockApi} API (one API per port: dashboard on MOCK_PORT_BASE, legacy on +1, batch on +2)`;
    if (!apis.includes(facts.mockApi)) throw new TargetProblem(`${port}; run with --api ${facts.mockApi}, or point --target at the port of ${apis.join(', ')}`);
    o.onNotice?.(`${port}; checking ${facts.mockApi} only`);
    apis = [facts.mockApi];
  }
  if (o.token && apis.includes('dashboard') && phases.has('mcp')) await checkToken(target.base, o.token, timeoutMs);
  if (o.basic && apis.some((a) => a !== 'dashboard')) await checkBasic(target.base, o.repo, o.basic, apis, timeoutMs);

  const writes = facts.stateless || o.allowWrites === o.repo;
  const results: CaseResult[] = [];
  const traces = new Traces();
  try {
    await runPhases(o, { ...o, apis }, target, phases, { writes, stateless: facts.stateless }, results, traces);
  } finally {
    const left = await traces.remove(target.base, timeoutMs);
    if (left.length) o.onNotice?.(`could not remove what the run created: ${left.join('; ')}`);
  }
  return results;
}

async function runPhases(
  o: ConformanceOptions, run: ConformanceOptions, target: Target, phases: Set<Phase>,
  { writes, stateless }: { writes: boolean; stateless: boolean }, results: CaseResult[], traces: Traces,
) {
  const timeoutMs = o.timeoutMs ?? 30_000;
  const skip = (phase: string, reason: string) => o.onSkip?.({ phase, reason });
  if (!writes && run.apis.some((a) => a !== 'dashboard') && ['examples', 'generated', 'flow'].some((p) => phases.has(p as Phase))) {
    skip('writes', `the runner writes only to a repository it may change, and the API cannot create a throwaway one: pass --allow-writes ${o.repo} to check uploads and locks in ${o.repo} (its locks are removed at the end; uploaded objects stay)`);
  }

  async function runAll(phase: string, all: Case[], extra?: (c: Case, res: ConformanceResponse) => string[]) {
    const cases = writes ? all : all.filter((c) => c.expect === 'refusal' || !isWrite(c.api, c.operationId, c.request));
    let done = 0;
    o.onProgress?.(0, cases.length, phase);
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const c = cases[next++]!;
        let res: ConformanceResponse | null = null;
        let problems: string[];
        try {
          res = await send(c.request, timeoutMs);
          traces.record(c.operationId, c.request, res);
          problems = [...checkAnswer(target, c.request, res, c.expect), ...(extra?.(c, res) ?? [])];
        } catch (err) {
          problems = [`answers: ${(err as Error).message}`];
        }
        results.push({ phase: c.phase, api: c.api, operationId: c.operationId, name: c.name, request: c.request, status: res?.status ?? null, problems });
        o.onProgress?.(++done, cases.length, phase);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, o.concurrency ?? 4) }, worker));
  }

  const docs = run.apis.flatMap((api) => operationDocs(api)).filter((d, i, all) => all.findIndex((x) => x.op.operationId === d.op.operationId) === i);
  if (phases.has('examples')) await runAll('examples', exampleCases(target, docs));
  if (phases.has('generated')) await runAll('generated', generatedCases(target, docs, o.seed, o.maxExamples));
  if (phases.has('negative')) await runAll('negative', negativeCases(target, docs, o.seed));

  // How a client without a token finds where to sign in: it needs no credentials of the target.
  if (phases.has('mcp') && run.apis.includes('dashboard')) {
    const targetOperation = (url: string) => {
      if (!url.startsWith(`${target.base}/`)) return null;
      const prefix = new URL(target.base).pathname.replace(/\/$/, '');
      return operationFor('GET', new URL(url).pathname.slice(prefix.length))?.operationId ?? null;
    };
    o.onProgress?.(0, 1, 'authorization');
    results.push(...(await authorizationDiscovery(target, timeoutMs, (req, res) => checkAnswer(target, req, res, 'any'), targetOperation)));
  }
  if (phases.has('mcp') && run.apis.includes('dashboard') && !o.token) skip('mcp', 'no --token: the MCP-aware checks (initialize, tools/list, every tool) need a bearer token of the target');
  if (phases.has('flow') && run.apis.some((a) => a !== 'dashboard') && !o.basic) skip('flow', 'no --basic: the object-API flow (upload, verify, download, locks) needs a user and password or token of the target');
  if (phases.has('mcp') && run.apis.includes('dashboard') && o.token) {
    const mcpCheck = (c: Case, res: ConformanceResponse) => {
      const m = messageOf(res);
      return res.status === 200 ? (c as McpCase).checkMessage(m as never) : [`mcp: ${c.name} answered HTTP ${res.status}`];
    };
    const listed: string[] = [];
    await runAll('mcp', [...mcpOpeningCases(target), toolsListCase(target, listed)], mcpCheck);
    // A tool that changes the server's state cannot be undone through the API (there is no
    // delete of an organization, a user or a service connection): against a server that keeps
    // state such tools get only their invalid-arguments call, which a conforming server refuses.
    const changing = listed.filter((n) => !(tools as Record<string, ToolSpec>)[n]!.annotations.readOnlyHint);
    if (!stateless && !o.readOnly && changing.length) skip('mcp writes', `called only with invalid arguments, as the API cannot undo what they change: ${changing.join(', ')}`);
    await runAll('mcp tools', toolCallCases(target, listed, { seed: o.seed, readOnly: Boolean(o.readOnly), changeState: stateless }), mcpCheck);
  }

  const objectApis = run.apis.filter((a) => a !== 'dashboard');
  if (phases.has('flow') && objectApis.length && o.basic && writes) {
    let steps = 0;
    await objectFlow(target, objectApis, async (name, api, request, expect) => {
      o.onProgress?.(steps, steps + 1, 'flow');
      let res: ConformanceResponse | null = null;
      let problems: string[];
      try {
        res = await send(request, timeoutMs);
        traces.record(opOf(target, request)?.operationId, request, res);
        problems = [...checkAnswer(target, request, res, 'any'), ...expect(res)];
      } catch (err) {
        problems = [`answers: ${(err as Error).message}`];
      }
      const op = opOf(target, request);
      const result: CaseResult = { phase: 'flow', api, operationId: op?.operationId ?? 'unknown', name, request, status: res?.status ?? null, problems };
      // Only the flow's own checks of a step that needs state, and only against a mock that says it keeps none.
      const mock = res?.headers['x-pactum-mock'];
      if (problems.length && mock?.includes('stateless') && STATEFUL_STEPS.has(name) && problems.every((p) => p.startsWith('flow:'))) {
        results.push({ ...result, problems: [], limitation: `${problems.map((p) => p.replace(/^flow: /, '')).join('; ')} (the mock keeps no state)` });
        o.onProgress?.(++steps, steps, 'flow');
        return res;
      }
      results.push(result);
      o.onProgress?.(++steps, steps, 'flow');
      return problems.length ? null : res;
    });
  }
}

function opOf(target: Target, request: ConformanceRequest) {
  const prefix = new URL(target.base).pathname.replace(/\/$/, '');
  return operationFor(request.method, new URL(request.url).pathname.slice(prefix.length));
}
