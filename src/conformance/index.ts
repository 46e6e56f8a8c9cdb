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
import { messageOf, mcpOpeningCases, toolCallCases, toolsListCase, type McpCase } from './mcp.js';
import type { CaseResult, Phase, SkippedPhase } from './report.js';

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
  timeoutMs?: number;
  concurrency?: number;
  /** The phases to run (default all): examples, generated, negative, mcp, flow. */
  phases?: readonly Phase[];
  onProgress?: (done: number, total: number, phase: string) => void;
  /** Told of each phase left out and why (no credentials for it, no API it applies to). */
  onSkip?: (skipped: SkippedPhase) => void;
}

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

export async function runConformance(o: ConformanceOptions): Promise<CaseResult[]> {
  const target: Target = { base: o.target.replace(/\/$/, ''), repo: o.repo, credentials: { token: o.token, basic: o.basic } };
  const timeoutMs = o.timeoutMs ?? 30_000;
  const results: CaseResult[] = [];

  async function runAll(phase: string, cases: Case[], extra?: (c: Case, res: ConformanceResponse) => string[]) {
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

  const phases = new Set<Phase>(o.phases ?? ['examples', 'generated', 'negative', 'mcp', 'flow']);
  const docs = o.apis.flatMap((api) => operationDocs(api)).filter((d, i, all) => all.findIndex((x) => x.op.operationId === d.op.operationId) === i);
  if (phases.has('examples')) await runAll('examples', exampleCases(target, docs));
  if (phases.has('generated')) await runAll('generated', generatedCases(target, docs, o.seed, o.maxExamples));
  if (phases.has('negative')) await runAll('negative', negativeCases(target, docs, o.seed));

  const skip = (phase: string, reason: string) => o.onSkip?.({ phase, reason });
  if (phases.has('mcp') && o.apis.includes('dashboard') && !o.token) skip('mcp', 'no --token: the MCP-aware checks (initialize, tools/list, every tool) need a bearer token of the target');
  if (phases.has('flow') && o.apis.some((a) => a !== 'dashboard') && !o.basic) skip('flow', 'no --basic: the object-API flow (upload, verify, download, locks) needs a user and password or token of the target');
  if (phases.has('mcp') && o.apis.includes('dashboard') && o.token) {
    const mcpCheck = (c: Case, res: ConformanceResponse) => {
      const m = messageOf(res);
      return res.status === 200 ? (c as McpCase).checkMessage(m as never) : [`mcp: ${c.name} answered HTTP ${res.status}`];
    };
    const listed: string[] = [];
    await runAll('mcp', [...mcpOpeningCases(target), toolsListCase(target, listed)], mcpCheck);
    await runAll('mcp tools', toolCallCases(target, listed, { seed: o.seed, readOnly: Boolean(o.readOnly) }), mcpCheck);
  }

  const objectApis = o.apis.filter((a) => a !== 'dashboard');
  if (phases.has('flow') && objectApis.length && o.basic) {
    let steps = 0;
    await objectFlow(target, objectApis, async (name, api, request, expect) => {
      o.onProgress?.(steps, steps + 1, 'flow');
      let res: ConformanceResponse | null = null;
      let problems: string[];
      try {
        res = await send(request, timeoutMs);
        problems = [...checkAnswer(target, request, res, 'any'), ...expect(res)];
      } catch (err) {
        problems = [`answers: ${(err as Error).message}`];
      }
      const prefix = new URL(target.base).pathname.replace(/\/$/, '');
      const op = operationFor(request.method, new URL(request.url).pathname.slice(prefix.length));
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
  return results;
}
