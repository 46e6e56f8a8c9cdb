/**
 * Once per vitest run. With PACTUM_TEST_BACKEND=postgres-s3: starts the S3 server (Ceph RGW where
 * Ceph is installed, else s3rver: test/helpers/s3.ts) for every test file's servers, says which
 * (and writes it to PACTUM_TEST_S3_REPORT for the summary of `make test`), and at the end drops
 * the databases the tests created. The embedded default needs nothing.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, writeFileSync } from 'node:fs';
import pg from 'pg';
import { adminPgUrl, TEST_BUCKET, TEST_DB_PREFIX, TEST_DB_RUN } from './helpers/backends.js';
import { startTestS3Server } from './helpers/s3.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Drops this run's test databases, or (`stale`) those of runs whose process is gone (an
 * interrupted run). Another run going on beside this one keeps its own.
 */
async function dropTestDatabases(which: 'own' | 'stale' = 'own') {
  const client = new pg.Client({ connectionString: adminPgUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>("select datname from pg_database where datname like 'pactum\\_t\\_%'");
    for (const { datname } of rows) {
      const run = /^pactum_t_(\d+)_/.exec(datname)?.[1];
      const drop = which === 'own' ? datname.startsWith(TEST_DB_PREFIX) : !run || !alive(Number(run));
      if (drop) await client.query(`drop database if exists "${datname}" with (force)`);
    }
  } finally {
    await client.end();
  }
}

/**
 * The browser tests (scans in Chromium, the /docs page) drive Debian's chromium. Where it is
 * missing and this runs as root with apt-get, it is installed here (about a minute), so they run
 * rather than fail; elsewhere they fail naming the command (test/helpers/chromium.ts).
 */
function ensureChromium() {
  const path = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  try {
    accessSync(path, constants.X_OK);
    return;
  } catch {
    // not there: install it if we can
  }
  if (process.env.CHROMIUM_PATH || process.getuid?.() !== 0) return;
  try {
    console.log('installing Debian\'s chromium for the browser tests (apt-get install chromium)');
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
    execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  } catch (err) {
    console.log(`could not install chromium (${(err as Error).message}); the browser tests will fail`);
  }
}

/**
 * Vitest calls a global setup once for the root config and once for each project that inherits it
 * (vitest.config.ts has two): the first call does the work, the others find it done. Test workers
 * are forked after it, so they all inherit the environment it sets.
 */
const shared = globalThis as { pactumGlobalSetup?: Promise<(() => Promise<void>) | undefined> };

export default async function setup() {
  if (shared.pactumGlobalSetup) {
    await shared.pactumGlobalSetup;
    return undefined;
  }
  shared.pactumGlobalSetup = setupOnce();
  return shared.pactumGlobalSetup;
}

async function setupOnce() {
  ensureChromium();
  // The workers name their databases after this run (helpers/backends.ts).
  process.env.PACTUM_TEST_RUN = TEST_DB_RUN;
  const mode = process.env.PACTUM_TEST_BACKEND;
  if (mode !== 'postgres' && mode !== 'postgres-s3') return;
  await dropTestDatabases('stale'); // what interrupted earlier runs left
  if (mode === 'postgres') return () => dropTestDatabases('own');
  const started = Date.now();
  const s3 = await startTestS3Server();
  await s3.createBucket(TEST_BUCKET);
  console.log(`S3 server of this run: ${s3.label} at ${s3.endpoint} (started in ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  if (process.env.PACTUM_TEST_S3_REPORT) writeFileSync(process.env.PACTUM_TEST_S3_REPORT, `${s3.label}\n`);
  // Test files run in forked workers, which inherit this environment.
  Object.assign(process.env, {
    PACTUM_TEST_S3_ENDPOINT: s3.endpoint,
    PACTUM_TEST_S3_KEY: s3.accessKeyId,
    PACTUM_TEST_S3_SECRET: s3.secretAccessKey,
    PACTUM_TEST_S3_KIND: s3.kind,
    PACTUM_TEST_CEPH_CONF: s3.cephConf ?? '',
  });
  return async () => {
    await s3.close();
    await dropTestDatabases();
  };
}
