/**
 * The generated Java client (`make clients` → .build/clients/java, okhttp-gson) compiled and
 * installed with Maven, then the Java example (test/clients/java: JUnit) driving a live pactum that
 * this file starts: the batch API (upload, download, bytes compared), the legacy API and locks.
 * Every response the server sent is checked against the specs, as in every other server test.
 *
 * PACTUM_MAVEN_OFFLINE=1 runs Maven with -o (everything it needs already in ~/.m2).
 */
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { requireClient, root, run } from './run.js';

/** The JUnit tests of test/clients/java: each must have run and passed. */
const JUNIT_TESTS = [
  'batchUploadThenDownloadReturnsTheSameBytes',
  'batchReportsAMissingObjectInsideItsAnswer',
  'legacyAnnounceUploadVerifyAndReadBack',
  'legacyMissingObjectIs404WithTheServersMessage',
  'wrongPasswordIs401',
  'locksCreateAndList',
];

const example = join(root, 'test', 'clients', 'java');
const maven = (args: string[], env: Record<string, string> = {}) =>
  run('mvn', ['-B', '-Dstyle.color=never', ...(process.env.PACTUM_MAVEN_OFFLINE === '1' ? ['-o'] : []), ...args], { env });

let s: TestServer;
let client: string;
const results = new Map<string, string>();

beforeAll(async () => {
  client = requireClient('java', 'pom.xml');
  s = await startTestServer();
  await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'jane', password: 'jane-password-1', access: 'write' });
});
afterAll(() => s?.stop());

/** testcase name → passed | failed | error | skipped, from Surefire's XML reports. */
function surefireResults(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  if (!existsSync(dir)) return out;
  for (const file of readdirSync(dir).filter((f) => f.startsWith('TEST-') && f.endsWith('.xml'))) {
    const xml = readFileSync(join(dir, file), 'utf8');
    for (const m of xml.matchAll(/<testcase\b[^>]*\bname="([^"]+)"[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g)) {
      const body = m[3] ?? '';
      out.set(m[1]!, /<failure\b/.test(body) ? 'failed' : /<error\b/.test(body) ? 'error' : /<skipped\b/.test(body) ? 'skipped' : 'passed');
    }
  }
  return out;
}

describe('the generated Java client', () => {
  it('compiles with Maven and installs as dev.pactum:pactum-client', async () => {
    const r = await maven(['-q', '-f', join(client, 'pom.xml'), 'install', '-DskipTests', '-Dmaven.javadoc.skip=true', '-Dmaven.source.skip=true']);
    expect(r.code, r.output).toBe(0);
  });

  it('runs the JUnit example against a live server', async () => {
    rmSync(join(example, 'target', 'surefire-reports'), { recursive: true, force: true });
    const r = await maven(['-f', join(example, 'pom.xml'), 'test'], {
      PACTUM_URL: s.url,
      PACTUM_ORG: 'acme',
      PACTUM_REPO: 'site',
      PACTUM_USER: 'jane',
      PACTUM_PASSWORD: 'jane-password-1',
    });
    for (const [name, status] of surefireResults(join(example, 'target', 'surefire-reports'))) results.set(name, status);
    expect(r.code, r.output.split('\n').filter((l) => /ERROR|FAIL|Tests run|expected|Exception/.test(l)).join('\n')).toBe(0);
    expect([...results.keys()].sort()).toEqual([...JUNIT_TESTS].sort());
    s.expectConformant();
  });

  it.each(JUNIT_TESTS)('JUnit %s passed', (name) => {
    expect(results.get(name)).toBe('passed');
  });
});
