/**
 * Fuzz: requests over every operation of the three APIs, from the conformance runner's generators
 * (valid requests generated from the schemas with many seeds, and its negative cases), plus
 * mutations of those: fields dropped, types swapped, huge and odd strings, NUL characters,
 * truncated JSON, wrong media types, odd path parameters, oversized headers. With valid
 * credentials, so they reach the handlers. Zero 5xx, zero responses that break the specs, and
 * the server still healthy at the end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationDocs, generatedCases, negativeCases, type Case, type Target } from '../../src/conformance/cases.js';
import { checkAnswer } from '../../src/conformance/index.js';
import { send, type ConformanceRequest } from '../../src/conformance/http.js';
import type { ApiName } from '../../generated/operations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { report, size } from './size.js';

const TARGET_REQUESTS = size(1200, 10_000);
let s: TestServer;
let target: Target;

beforeAll(async () => {
  s = await startTestServer();
  const { org } = await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: 'wally-password-1', access: 'write' });
  target = { base: s.url, repo: 'acme/site', credentials: { token: await s.token({ orgId: org.id, perms: ['admin.system'] }), basic: 'wally:wally-password-1' } };
});
afterAll(() => s.stop());

/** A small deterministic generator, so a failure can be replayed from its seed. */
function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return () => ((x = (x * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

const ODD_STRINGS = ['', ' ', '\u0000', 'a\u0000b', '😀'.repeat(300), 'x'.repeat(70_000), '../../etc/passwd', '%2e%2e%2f', '<script>alert(1)</script>', "' OR 1=1 --", '\ud800', '-1', '1e309', 'null'];
const ODD_VALUES: unknown[] = [null, true, 0, -1, 2 ** 53, 1.5, [], {}, [null], { nested: { deep: [1, 2, 3] } }, ...ODD_STRINGS];

function mutateJson(value: unknown, r: () => number): unknown {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  if (Array.isArray(value)) {
    if (!value.length || r() < 0.3) return r() < 0.5 ? [] : [pick(ODD_VALUES)];
    const copy = [...value];
    const i = Math.floor(r() * copy.length);
    copy[i] = mutateJson(copy[i], r);
    return copy;
  }
  if (value && typeof value === 'object') {
    const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    const keys = Object.keys(copy);
    const roll = r();
    if (!keys.length || roll < 0.15) copy[pick(['extra', '__proto__', 'constructor', 'x'.repeat(300)])] = pick(ODD_VALUES);
    else if (roll < 0.4) delete copy[pick(keys)];
    else {
      const k = pick(keys);
      copy[k] = r() < 0.5 ? pick(ODD_VALUES) : mutateJson(copy[k], r);
    }
    return copy;
  }
  return pick(ODD_VALUES);
}

/** A lone surrogate cannot be encoded: send the invalid UTF-8 it would be, which a server must refuse too. */
const encodePath = (x: string) => {
  try {
    return encodeURIComponent(x) || '%00';
  } catch {
    return '%ED%A0%80';
  }
};

/** One mutation of a generated request. */
function mutate(c: Case, r: () => number): ConformanceRequest {
  const req: ConformanceRequest = { ...c.request, headers: { ...c.request.headers } };
  const roll = r();
  const isJson = typeof req.body === 'string' && /json/.test(req.headers['content-type'] ?? '');
  if (isJson && roll < 0.45) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(req.body as string);
    } catch {
      parsed = {};
    }
    req.body = JSON.stringify(mutateJson(parsed, r));
  } else if (isJson && roll < 0.55) {
    req.body = (req.body as string).slice(0, Math.floor((req.body as string).length * r())); // truncated JSON
  } else if (roll < 0.65) {
    req.headers['content-type'] = ['text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/json; charset=utf-16', ''][Math.floor(r() * 5)]!;
  } else if (roll < 0.75) {
    const url = new URL(req.url);
    const parts = url.pathname.split('/');
    const i = 1 + Math.floor(r() * (parts.length - 1));
    parts[i] = encodePath(ODD_STRINGS[Math.floor(r() * ODD_STRINGS.length)]!.slice(0, 2000));
    req.url = `${url.origin}${parts.join('/')}${url.search}`;
  } else if (roll < 0.82) {
    req.headers['x-padding'] = 'p'.repeat(8000 + Math.floor(r() * 8000));
    req.headers.accept = r() < 0.5 ? '*/*;q=0' : 'application/json;q=abc, */*';
  } else if (roll < 0.9) {
    const url = new URL(req.url);
    url.search = `${url.search ? `${url.search}&` : '?'}${['cursor', 'limit', 'path', 'id', 'refspec'][Math.floor(r() * 5)]}=${encodePath(ODD_STRINGS[Math.floor(r() * ODD_STRINGS.length)]!.slice(0, 3000))}`;
    req.url = url.href;
  } else {
    req.method = ['PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'POST', 'GET'][Math.floor(r() * 7)]!;
    if (req.method === 'GET' || req.method === 'HEAD') delete req.body;
  }
  return req;
}

describe('fuzz', () => {
  it(`answers ${TARGET_REQUESTS.toLocaleString('en')}+ generated and mutated requests without a 5xx or a response that breaks the specs`, { timeout: size(120_000, 1_800_000) }, async () => {
    const docs = (['dashboard', 'legacy', 'batch'] as ApiName[]).flatMap((api) => operationDocs(api));
    const ops = new Set(docs.map((d) => d.op.operationId));
    const problems: string[] = [];
    const statuses = new Map<number, number>();
    const covered = new Set<string>();
    let tried = 0;
    let mutated = 0;
    const check = async (req: ConformanceRequest, expect: 'any' | 'refusal', label: string) => {
      let res;
      try {
        res = await send(req, 30_000);
      } catch (err) {
        problems.push(`${label}: no answer (${(err as Error).message}) ${req.method} ${req.url.slice(0, 200)}`);
        return;
      }
      tried++;
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      for (const p of checkAnswer(target, req, res, expect)) if (problems.length < 50) problems.push(`${label}: ${p} — ${req.method} ${req.url.slice(0, 200)} ${typeof req.body === 'string' ? req.body.slice(0, 200) : ''}`);
    };
    for (let seed = 1; tried < TARGET_REQUESTS; seed++) {
      const r = rng(seed);
      const batch = [...generatedCases(target, docs, 1000 + seed, 2), ...(seed % 4 === 1 ? negativeCases(target, docs, seed) : [])];
      // A few at a time, as concurrent clients would send them.
      for (let i = 0; i < batch.length; i += 4) {
        await Promise.all(
          batch.slice(i, i + 4).map(async (c) => {
            covered.add(c.operationId);
            await check(c.request, c.expect, `${c.operationId} ${c.name}`);
            const m = mutate(c, r);
            mutated++;
            await check(m, 'any', `${c.operationId} mutated (seed ${seed})`);
          }),
        );
      }
    }
    const health = await fetch(`${s.url}/healthz`);
    expect(health.status).toBe(200);
    report('fuzz', {
      'requests tried': tried, mutated, operations: `${[...ops].filter((o) => covered.has(o)).length}/${ops.size}`,
      '5xx': [...statuses].filter(([st]) => st >= 500).reduce((a, [, n]) => a + n, 0),
      'spec violations': s.violations.length, statuses: [...statuses].sort(([a], [b]) => a - b).map(([st, n]) => `${st}×${n}`).join(' '),
    });
    expect([...ops].filter((o) => !covered.has(o)), 'operations never exercised').toEqual([]);
    expect(problems).toEqual([]);
    s.expectConformant();
  });
});
