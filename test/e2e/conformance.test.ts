/**
 * The conformance runner: it passes pactum itself (all three APIs, every phase), and it catches
 * servers that break the contract — a proxy in front of pactum breaks chosen answers in known
 * ways, and each one must be reported against the right operation.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConformance } from '../../src/conformance/index.js';
import type { CaseResult } from '../../src/conformance/report.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { pactum } from '../helpers/cli.js';

let s: TestServer;
let token: string;
const basic = 'wally:wally-password-1';

beforeAll(async () => {
  s = await startTestServer();
  const { org } = await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: 'wally-password-1', access: 'write' });
  token = await s.token({ orgId: org.id, perms: ['admin.system'] });
});
afterAll(() => s.stop());

const failuresOf = (results: CaseResult[]) => results.filter((r) => r.problems.length);

describe('against pactum', () => {
  it('passes every phase of all three APIs', async () => {
    const results = await runConformance({ target: s.url, apis: ['dashboard', 'legacy', 'batch'], token, basic, repo: 'acme/site', allowWrites: 'acme/site', seed: 7, maxExamples: 3 });
    expect(failuresOf(results).map((r) => `${r.operationId} ${r.name}: ${r.problems.join('; ')}`)).toEqual([]);
    const phases = new Set(results.map((r) => r.phase));
    expect([...phases].sort()).toEqual(['examples', 'flow', 'generated', 'mcp', 'negative']);
    expect(results.length).toBeGreaterThan(500);
    // Every operation of the specs was exercised.
    const ops = new Set(results.map((r) => r.operationId));
    for (const id of ['mcp.post', 'auth.login', 'legacy.getObject', 'legacy.createObject', 'batch.batch', 'objects.upload', 'objects.download', 'objects.verify', 'tus.head', 'tus.patch', 'locks.create', 'locks.unlock', 'mcp.tool.dashboard_get_org']) {
      expect(ops, id).toContain(id);
    }
    expect(results.filter((r) => r.phase === 'flow').map((r) => r.name)).toEqual(expect.arrayContaining(['tus PATCH', 'basic PUT', 'download a range', 'unlock']));
    // The discovery an MCP client follows before it has a token, each link checked.
    const discovery = results.filter((r) => r.name.startsWith('authorization:'));
    expect(discovery.map((r) => `${r.operationId} ${r.status}`)).toEqual([
      'mcp.post 401', expect.stringMatching(/^auth\.protectedResource(ForMcp)? 200$/), expect.stringMatching(/^auth\.\w+ 200$/),
    ]);
    s.expectConformant();
  });

  it('is reproducible: the same seed makes the same requests', async () => {
    const run = () => runConformance({ target: s.url, apis: ['legacy'], repo: 'acme/site', seed: 3, maxExamples: 2 });
    const strip = (rs: CaseResult[]) => rs.filter((r) => r.phase === 'generated').map((r) => `${r.request.method} ${r.request.url} ${typeof r.request.body === 'string' ? r.request.body : ''}`).sort();
    expect(strip(await run())).toEqual(strip(await run()));
  });

  it('runs as `pactum conformance`, writing JUnit XML and exiting 0', async () => {
    const junit = join(mkdtempSync(join(tmpdir(), 'conformance-')), 'out.xml');
    const r = await pactum(['conformance', '--target', s.url, '--api', 'legacy', '--basic', basic, '--max-examples', '1', '--junit', junit], {});
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/\d+ passed, 0 failed/);
    expect(readFileSync(junit, 'utf8')).toMatch(/<testsuites name="pactum conformance" tests="\d+" failures="0" skipped="0">/);
  });
});

/** What a run could leave behind on the server: compared before and after. */
async function serverState() {
  const db = s.services.db;
  const ids = async (table: string, cols: string[]) => (await db(table).select(cols).orderBy(cols[0]!)).map((r: Record<string, unknown>) => JSON.stringify(r));
  return {
    locks: await ids('lfs_locks', ['id', 'path']),
    connections: await ids('service_connections', ['org_id', 'service_id', 'url']),
    tokens: await ids('personal_tokens', ['id', 'revoked_at']),
    sessions: await ids('sessions', ['token_hash', 'revoked_at']),
    repos: await ids('repos', ['id']),
    objects: await ids('lfs_objects', ['oid', 'repo_id']),
    orgs: await ids('orgs', ['id', 'slug', 'name']),
    users: await ids('users', ['id', 'username', 'role', 'active']),
  };
}

describe('leaves no trace on the server it checks', () => {
  it('without --allow-writes: nothing changes, and one line says what was left out', async () => {
    const before = await serverState();
    const skipped: string[] = [];
    const results = await runConformance({ target: s.url, apis: ['dashboard', 'legacy', 'batch'], token, basic, repo: 'acme/site', seed: 5, maxExamples: 2, onSkip: (x) => skipped.push(`${x.phase}: ${x.reason}`) });
    expect(failuresOf(results).map((r) => `${r.operationId} ${r.name}: ${r.problems.join('; ')}`)).toEqual([]);
    expect(await serverState()).toEqual(before);
    expect(skipped.join('\n')).toMatch(/^writes: .*--allow-writes acme\/site/m);
    expect(skipped.join('\n')).toMatch(/^mcp writes: .*dashboard_create_service_connection/m);
    expect(results.some((r) => r.operationId === 'locks.create' && r.status === 201)).toBe(false);
  });

  it('with --allow-writes: the locks it took are gone, no connection, token, session, org or user is left, and its strings are short', async () => {
    const before = await serverState();
    const results = await runConformance({ target: s.url, apis: ['dashboard', 'legacy', 'batch'], token, basic, repo: 'acme/site', allowWrites: 'acme/site', seed: 11, maxExamples: 4 });
    expect(failuresOf(results).map((r) => `${r.operationId} ${r.name}: ${r.problems.join('; ')}`)).toEqual([]);
    // It did take locks outside the flow (which unlocks its own): the cleanup removed them.
    const taken = results.filter((r) => r.operationId === 'locks.create' && r.status === 201);
    expect(taken.filter((r) => r.phase !== 'flow').length).toBeGreaterThan(0);
    for (const r of taken) expect((JSON.parse(String(r.request.body)) as { path: string }).path.length).toBeLessThanOrEqual(200);
    const after = await serverState();
    // Objects stay: the object APIs have no delete, which is why writes need --allow-writes.
    expect({ ...after, objects: [] }).toEqual({ ...before, objects: [] });
  });

  it('removes what it created even when the run fails halfway', async () => {
    const before = await serverState();
    let tookLocks = false;
    const run = runConformance({
      target: s.url, apis: ['batch'], basic, repo: 'acme/site', allowWrites: 'acme/site', seed: 11, maxExamples: 4,
      onProgress: (_done, _total, phase) => {
        if (phase === 'negative') throw new Error('interrupted');
      },
    });
    await expect(run).rejects.toThrow('interrupted');
    expect(await serverState()).toEqual({ ...before, objects: (await serverState()).objects });
    // The same run without the interruption does hold locks when it reaches that point.
    await runConformance({
      target: s.url, apis: ['batch'], basic, repo: 'acme/site', allowWrites: 'acme/site', seed: 11, maxExamples: 4, phases: ['examples', 'generated'],
      onProgress: () => {},
    }).then((rs) => (tookLocks = rs.some((r) => r.operationId === 'locks.create' && r.status === 201)));
    expect(tookLocks).toBe(true);
  });

  it('a dead target, a refused token or refused Basic credentials: one line and exit 2', async () => {
    const dead = createServer().listen(0, '127.0.0.1');
    await new Promise((r) => dead.once('listening', r));
    const port = (dead.address() as AddressInfo).port;
    await new Promise((r) => dead.close(r));
    const down = await pactum(['conformance', '--target', `http://127.0.0.1:${port}`], {});
    expect(down.code).toBe(2);
    expect(down.stdout).toBe('');
    expect(down.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^pactum conformance: cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/)]);

    const badToken = await pactum(['conformance', '--target', s.url, '--api', 'dashboard', '--token', 'garbage'], {});
    expect(badToken.code).toBe(2);
    expect(badToken.stdout).toBe('');
    expect(badToken.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^pactum conformance: the target refuses --token \(401: /)]);

    const badBasic = await pactum(['conformance', '--target', s.url, '--api', 'batch', '--basic', 'wally:wrong-password'], {});
    expect(badBasic.code).toBe(2);
    expect(badBasic.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^pactum conformance: the target refuses --basic for wally on acme\/site \(401/)]);

    const noRepo = await pactum(['conformance', '--target', s.url, '--api', 'batch', '--basic', basic, '--repo', 'acme/nothing-here'], {});
    expect(noRepo.code).toBe(2);
    expect(noRepo.stderr.trim().split('\n')).toEqual([expect.stringMatching(/no repository acme\/nothing-here/)]);
  });
});

/** pactum behind a proxy that breaks what `breaks` says, for the matching requests. */
async function brokenPactum(breaks: { when: (method: string, path: string) => boolean; answer: (status: number, headers: Record<string, string>, body: string) => [number, Record<string, string>, string] }[]) {
  const proxy: Server = createServer((req, res) => {
    // As a reverse proxy does: the upstream sees its own host (pactum refuses other Hosts on the MCP endpoint).
    const up = request(`${s.url}${req.url}`, { method: req.method, headers: { ...req.headers, host: new URL(s.url).host } }, (r) => {
      const chunks: Buffer[] = [];
      r.on('data', (c) => chunks.push(c));
      r.on('end', () => {
        let [status, headers, body] = [r.statusCode!, r.headers as Record<string, string>, Buffer.concat(chunks).toString('utf8')];
        const path = new URL(req.url!, 'http://x').pathname;
        for (const b of breaks) if (b.when(req.method!, path)) [status, headers, body] = b.answer(status, headers, body);
        delete headers['content-length'];
        delete headers['transfer-encoding'];
        res.writeHead(status, headers).end(body);
      });
    });
    req.pipe(up);
  }).listen(0, '127.0.0.1');
  await new Promise((r) => proxy.once('listening', r));
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, close: () => proxy.close() };
}

describe('against the Prism mock', () => {
  it('passes the examples and generated phases of all three APIs', async () => {
    const { startMock } = await import('../../src/mock/servers.js');
    const mock = await startMock({ portBase: 4310 });
    try {
      // A mock has no error handling of its own to check (Prism answers invalid requests itself),
      // nor MCP semantics (it cannot answer initialize to an initialize): valid requests only.
      for (const api of ['dashboard', 'legacy', 'batch'] as const) {
        const results = await runConformance({ target: mock.urls[api], apis: [api], token: 'mock-token', basic: 'ada:password', repo: 'acme/site', seed: 2, maxExamples: 2, phases: ['examples', 'generated'] });
        expect(results.length, api).toBeGreaterThan(10);
        expect(failuresOf(results).map((r) => `${api} ${r.operationId} ${r.name}: ${r.problems.join('; ')}`)).toEqual([]);
      }
    } finally {
      await mock.stop();
    }
  });
});

describe('against servers that break the contract', () => {
  it('reports a missing required field, an undeclared status, a 500 and a wrong content type, each against its operation', async () => {
    const broken = await brokenPactum([
      { when: (m, p) => m === 'GET' && p === '/healthz', answer: (st, h) => [st, h, JSON.stringify({ version: '3.4.0' })] },
      { when: (m, p) => m === 'GET' && p === '/.well-known/oauth-protected-resource', answer: (st, h, b) => [st, { ...h, 'content-type': 'text/html' }, b] },
      { when: (m, p) => m === 'GET' && p === '/.well-known/oauth-protected-resource/api/v1/mcp', answer: (_st, h, b) => [418, h, b] },
      { when: (m, p) => m === 'POST' && p === '/api/v1/auth/logout', answer: (_st, h) => [500, { ...h, 'content-type': 'application/json' }, '{"error":"boom"}'] },
      { when: (m, p) => m === 'POST' && p.endsWith('/objects/batch'), answer: (st, h, b) => [st, h, st === 200 ? JSON.stringify({ ...JSON.parse(b), objects: undefined }) : b] },
    ]);
    const results = await runConformance({ target: broken.url, apis: ['dashboard', 'batch'], basic, repo: 'acme/site', seed: 1, maxExamples: 1 });
    broken.close();
    const problemsOf = (op: string) => failuresOf(results).filter((r) => r.operationId === op).flatMap((r) => r.problems);
    expect(problemsOf('ops.health').join('\n')).toMatch(/conforms to the spec: body must have property 'status'/);
    expect(problemsOf('auth.protectedResource').join('\n')).toMatch(/content type text\/html is not declared/);
    expect(problemsOf('auth.protectedResourceForMcp').join('\n')).toMatch(/status 418 is not declared/);
    expect(problemsOf('auth.logout').join('\n')).toMatch(/no 5xx: answered 500/);
    expect(problemsOf('batch.batch').join('\n')).toMatch(/must have property 'objects'/);
    // The healthy operations are not blamed.
    expect(problemsOf('mcp.post')).toEqual([]);
  });

  it('follows the authorization discovery and reports each broken link a client would refuse', async () => {
    let self = '';
    const here = (text: string) => text.replaceAll(s.url, self);
    // The challenge and the metadata point to the proxy, so the whole chain goes through it.
    const noServers = await brokenPactum([
      { when: (m, p) => m === 'POST' && p === '/api/v1/mcp', answer: (st, h, b) => [st, { ...h, 'www-authenticate': here(h['www-authenticate'] ?? '') }, b] },
      { when: (m, p) => m === 'GET' && p.startsWith('/.well-known/oauth-protected-resource'), answer: (st, h, b) => [st, h, JSON.stringify({ ...JSON.parse(b), authorization_servers: [] })] },
    ]);
    self = noServers.url;
    let results = await runConformance({ target: noServers.url, apis: ['dashboard'], repo: 'acme/site', seed: 1, maxExamples: 0, phases: ['mcp'] });
    noServers.close();
    let problems = failuresOf(results).flatMap((r) => r.problems).join('\n');
    expect(problems).toMatch(/its resource is ".*", not this endpoint's URL/);
    expect(problems).toMatch(/names no authorization_servers/);

    const badIssuer = await brokenPactum([
      { when: (m, p) => m === 'POST' && p === '/api/v1/mcp', answer: (st, h, b) => [st, { ...h, 'www-authenticate': here(h['www-authenticate'] ?? '') }, b] },
      { when: (m, p) => m === 'GET' && p.startsWith('/.well-known/oauth-protected-resource'), answer: (st, h, b) => [st, h, here(b)] },
      { when: (m, p) => m === 'GET' && p === '/.well-known/oauth-authorization-server', answer: (st, h, b) => [st, h, JSON.stringify({ ...JSON.parse(b), issuer: 'https://elsewhere.example', code_challenge_methods_supported: ['plain'] })] },
    ]);
    self = badIssuer.url;
    results = await runConformance({ target: badIssuer.url, apis: ['dashboard'], repo: 'acme/site', seed: 1, maxExamples: 0, phases: ['mcp'] });
    badIssuer.close();
    const asProblems = failuresOf(results).filter((r) => r.name.startsWith('authorization: the metadata of')).flatMap((r) => r.problems).join('\n');
    expect(asProblems).toMatch(/its issuer is "https:\/\/elsewhere\.example", not http:\/\/127\.0\.0\.1:\d+/);
    expect(asProblems).toMatch(/does not offer S256/);
    // The links that were not broken are not blamed.
    problems = failuresOf(results).filter((r) => !r.name.startsWith('authorization: the metadata of')).flatMap((r) => r.problems).join('\n');
    expect(problems).toBe('');
  });

  it('reports a server that accepts invalid requests, and one that leaves Allow out of a 405', async () => {
    const broken = await brokenPactum([
      // Pretend to accept whatever reaches the login route.
      { when: (m, p) => m === 'POST' && p === '/api/v1/auth/login', answer: (_st, h) => [200, { ...h, 'content-type': 'application/json' }, JSON.stringify({ userId: 'u', orgId: 'o', role: 'member', permissions: [], expiresAt: '2026-11-22T00:00:00.000Z' })] },
      { when: (m, p) => m === 'DELETE' && p === '/api/v1/mcp', answer: (st, h, b) => { const { allow: _a, ...rest } = h; return [st, rest, b]; } },
    ]);
    const results = await runConformance({ target: broken.url, apis: ['dashboard'], repo: 'acme/site', seed: 1, maxExamples: 0 });
    broken.close();
    const login = failuresOf(results).filter((r) => r.operationId === 'auth.login' && r.phase === 'negative');
    expect(login.map((r) => r.name)).toEqual(expect.arrayContaining(['malformed JSON', 'missing required property password']));
    expect(login[0]!.problems.join()).toMatch(/refuses invalid requests: answered 200/);
    expect(failuresOf(results).flatMap((r) => r.problems).join('\n')).toMatch(/Allow on 405: the header is missing/);
  });
});
