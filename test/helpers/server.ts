/**
 * Starts a real pactum server for a test: a fresh DATA_DIR, a free port, every log line kept
 * (so tests can assert that no secret is ever logged), and every response checked against the
 * specs. `expectConformant()` fails the test on any violation.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { prismFront } from './prism.js';
import { backendEnv, backendMode } from './backends.js';
import { startRoundRobin, type RoundRobin } from './round-robin.js';
import { expect } from 'vitest';
import { createLogger } from '../../src/telemetry/log.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { responseChecker, type Violation } from '../../src/http/response-check.js';
import { DUMMY_HASH } from '../../src/auth/passwords.js';
import type { Role } from '../../src/domain/access/permissions.js';
import type { Db } from '../../src/db/knex.js';
import { insertOrg } from '../../src/db/users.js';

export interface TestServer extends RunningServer {
  dataDir: string;
  /**
   * Where to send requests that must reach this server: the server itself, or with
   * PACTUM_VIA_PRISM=1 the Prism proxies in front of it. (`url` is the public URL, which a test
   * may point elsewhere, at a proxy of its own.)
   */
  directUrl: string;
  violations: Violation[];
  logLines: string[];
  /** Every JSON or SSE response body the server sent, in order. */
  bodies: string[];
  /**
   * A JWT (default: the service principal `svc_test` of the org `test-org` with admin.system). The server
   * refuses a token whose org does not exist and reads a `usr_` subject's role from the database,
   * so the org and, for a `usr_` subject, the user are created when missing (the user with `role`,
   * else as a system admin, so that the token's scopes alone bound what it may do). Their ids are
   * the ones given: tests whose tool results list users or orgs should name real ones.
   */
  token(claims?: { sub?: string; orgId?: string; perms?: string[]; role?: string; ttl?: number }): Promise<string>;
  expectConformant(): void;
  /** The running instances: one, or two in the pair topology. */
  instances: RunningServer[];
  /** The round-robin proxy in front of the pair, else null. */
  balancer: RoundRobin | null;
  stop(): Promise<void>;
}

/** The org, and a `usr_` subject's user, that a test token names. */
async function provision(db: Db, sub: string, orgId: string, role: Role) {
  const now = new Date().toISOString();
  if (!(await db('orgs').where({ id: orgId }).first())) {
    await db('orgs').insert({ id: orgId, name: orgId, slug: orgId.toLowerCase().replace(/[^a-z0-9-]/g, '-'), created_at: now, updated_at: now }).onConflict('id').ignore();
  }
  if (sub.startsWith('usr_') && !(await db('users').where({ id: sub }).first())) {
    await db('users')
      .insert({ id: sub, org_id: orgId, username: sub, password_hash: DUMMY_HASH, role, active: true, created_at: now, updated_at: now, last_login_at: null })
      .onConflict('id')
      .ignore();
  }
}

/** Shared by both instances of the pair topology, as a deployment shares them. */
export const PAIR_SECRETS = {
  JWT_SECRET: 'pair-topology-jwt-secret-0123456789abcdef',
  TRANSFER_TOKEN_SECRET: 'a'.repeat(64),
  SECRETS_KEY: 'b'.repeat(64),
};

/**
 * PACTUM_TEST_TOPOLOGY=pair (with PACTUM_TEST_BACKEND=postgres-s3): every test server is two
 * instances sharing the database, the bucket and the secrets, behind a round-robin proxy that is
 * their public URL; consecutive requests alternate between them.
 */
export const topology = process.env.PACTUM_TEST_TOPOLOGY === 'pair' ? 'pair' : 'single';

export interface TestServerOptions {
  /**
   * false: no response checker. It keeps a copy of every JSON body it sees (up to 16 MiB each) to
   * validate it at the end, so a test that measures what the server itself holds goes without it.
   */
  checkResponses?: boolean;
}

export async function startTestServer(env: Record<string, string> = {}, options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pactum-test-'));
  // Once per CI run the end-to-end suites run again with Prism judging every response.
  const prism = process.env.PACTUM_VIA_PRISM === '1' ? await prismFront() : null;
  const balancer = topology === 'pair' ? await startRoundRobin() : null;
  if (prism && !env.PUBLIC_URL) env = { ...env, PUBLIC_URL: prism.url };
  if (balancer && !env.PUBLIC_URL) env = { ...env, PUBLIC_URL: balancer.url };
  const violations: Violation[] = [];
  const logLines: string[] = [];
  const bodies: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  const backends = await backendEnv(env.DATA_DIR ?? dataDir);
  const start = () =>
    startServer({
      env: { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'debug', SHUTDOWN_TIMEOUT_MS: '2000', ...backends, ...(balancer ? PAIR_SECRETS : {}), ...env },
      log: createLogger('debug', sink),
      before: options.checkResponses === false ? [] : [responseChecker((v) => violations.push(v), (_path, body) => bodies.push(body))],
    });
  const instances: RunningServer[] = [await start()];
  if (balancer) {
    if (backendMode !== 'postgres-s3') throw new Error('PACTUM_TEST_TOPOLOGY=pair needs PACTUM_TEST_BACKEND=postgres-s3: the instances share nothing else');
    instances.push(await start());
  }
  const running = instances[0]!;
  let defaultOrg: Promise<string> | undefined;
  const ownUrls = instances.map((i) => `http://127.0.0.1:${(i.server.address() as AddressInfo).port}`);
  if (balancer) balancer.targets = ownUrls;
  const own = balancer?.url ?? ownUrls[0]!;
  await prism?.connect(own);
  const url = prism && env.PUBLIC_URL === prism.url ? prism.url : balancer && env.PUBLIC_URL === balancer.url ? balancer.url : running.url;
  return {
    ...running,
    url,
    directUrl: prism?.url ?? own,
    dataDir,
    violations,
    logLines,
    bodies,
    instances,
    balancer,
    async token(c = {}) {
      const sub = c.sub ?? 'svc_test';
      const orgId = c.orgId ?? (await (defaultOrg ??= insertOrg(running.services.db, { name: 'Test org', slug: 'test-org' }).then((o) => o.id)));
      await provision(running.services.db, sub, orgId, (c.role ?? 'system_admin') as Role);
      return running.services.tokens.sign(
        { sub, orgId, role: c.role as never, scopes: (c.perms ?? (c.role ? [] : ['admin.system'])) as never },
        c.ttl ?? 600,
      );
    },
    /** Stops serving and keeps the data (a restart test's "crash"); the fronts go too (CI once found three Prism processes left running). */
    async close() {
      await Promise.all(instances.map((i) => i.close()));
      await balancer?.close();
      await prism?.close();
    },
    expectConformant() {
      expect(violations, 'responses that break the specs').toEqual([]);
      if (prism) expect(prism.violations, 'sl-violations reported by prism proxy --errors').toEqual([]);
      // Two instances are only tested if both served: consecutive requests alternate.
      if (balancer && balancer.counts.reduce((a, b) => a + b, 0) >= 2) expect(Math.min(balancer.counts[0] ?? 0, balancer.counts[1] ?? 0), `requests per instance: ${balancer.counts.join(',')}`).toBeGreaterThan(0);
    },
    async stop() {
      await Promise.all(instances.map((i) => i.close()));
      await balancer?.close();
      await prism?.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
