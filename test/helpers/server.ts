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
import { expect } from 'vitest';
import { createLogger } from '../../src/log.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { responseChecker, type Violation } from '../../src/http/response-check.js';

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
  /** The JWT of a system admin of `orgId` (default: a fresh org id that need not exist). */
  token(claims?: { sub?: string; orgId?: string; perms?: string[]; role?: string; ttl?: number }): Promise<string>;
  expectConformant(): void;
  stop(): Promise<void>;
}

export async function startTestServer(env: Record<string, string> = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pactum-test-'));
  // Once per CI run the end-to-end suites run again with Prism judging every response.
  const prism = process.env.PACTUM_VIA_PRISM === '1' ? await prismFront() : null;
  if (prism && !env.PUBLIC_URL) env = { ...env, PUBLIC_URL: prism.url };
  const violations: Violation[] = [];
  const logLines: string[] = [];
  const bodies: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  const running = await startServer({
    env: { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'debug', SHUTDOWN_TIMEOUT_MS: '2000', ...env },
    log: createLogger('debug', sink),
    before: [responseChecker((v) => violations.push(v), (_path, body) => bodies.push(body))],
  });
  const own = `http://127.0.0.1:${(running.server.address() as AddressInfo).port}`;
  await prism?.connect(own);
  const url = prism && env.PUBLIC_URL === prism.url ? prism.url : running.url;
  return {
    ...running,
    url,
    directUrl: prism?.url ?? own,
    dataDir,
    violations,
    logLines,
    bodies,
    token: (c = {}) =>
      running.services.tokens.sign(
        { sub: c.sub ?? 'usr_test', orgId: c.orgId ?? 'org_test', role: c.role as never, scopes: (c.perms ?? (c.role ? [] : ['admin.system'])) as never },
        c.ttl ?? 600,
      ),
    expectConformant() {
      expect(violations, 'responses that break the specs').toEqual([]);
      if (prism) expect(prism.violations, 'sl-violations reported by prism proxy --errors').toEqual([]);
    },
    async stop() {
      await running.close();
      await prism?.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
