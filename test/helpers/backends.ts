/**
 * Which database and object storage the tests' servers use. By default the embedded ones (SQLite
 * and files in DATA_DIR). With PACTUM_TEST_BACKEND=postgres, PostgreSQL; with postgres-s3 (the second pass of `make test`)
 * every server gets its own PostgreSQL database on 127.0.0.1:5432 and its own prefix in a bucket
 * of the S3 server that test/global-setup.ts started (Ceph RGW, else s3rver); both are named after DATA_DIR, so a process
 * restarted on the same DATA_DIR (a restart test, the CLI) finds the same data.
 */
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import pg from 'pg';

const MODES = ['embedded', 'postgres', 'postgres-s3'] as const;
/** embedded (default) | postgres (PostgreSQL, files) | postgres-s3 (PostgreSQL and S3). */
export const backendMode: (typeof MODES)[number] = (MODES as readonly string[]).includes(process.env.PACTUM_TEST_BACKEND ?? '')
  ? (process.env.PACTUM_TEST_BACKEND as (typeof MODES)[number])
  : 'embedded';
/**
 * Every database a vitest run creates is named after the run (its main process id, which
 * test/global-setup.ts hands to the workers), so that runs side by side (two checkouts, two
 * shells) never drop each other's databases.
 */
export const TEST_DB_RUN = process.env.PACTUM_TEST_RUN ?? String(process.pid);
export const TEST_DB_PREFIX = `pactum_t_${TEST_DB_RUN}_`;
/** An admin connection to the server the tests create databases in. */
export const adminPgUrl = process.env.PACTUM_TEST_PG_URL ?? 'postgres://root@127.0.0.1:5432/test';
export const TEST_BUCKET = 'pactum-test';

const created = new Set<string>();

function nameOf(dataDir: string) {
  let path = dataDir;
  try {
    path = realpathSync(dataDir);
  } catch {
    // not created yet: its name is stable anyway
  }
  return createHash('sha256').update(path).digest('hex').slice(0, 20);
}

/** Creates database `name` on the test PostgreSQL unless it exists. */
export async function ensureDatabase(name: string) {
  if (created.has(name)) return;
  const client = new pg.Client({ connectionString: adminPgUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (!rowCount) {
      await client.query(`create database "${name}"`).catch((err: { code?: string }) => {
        if (err.code !== '42P04') throw err; // created meanwhile by another process
      });
    }
    created.add(name);
  } finally {
    await client.end();
  }
}

export function databaseUrlFor(name: string) {
  const url = new URL(adminPgUrl);
  url.pathname = `/${name}`;
  return url.href;
}

/** The environment a server (or a CLI process) on `dataDir` needs for the selected backends. */
export async function backendEnv(dataDir: string): Promise<Record<string, string>> {
  if (backendMode === 'embedded') return {};
  const name = `${TEST_DB_PREFIX}${nameOf(dataDir)}`;
  await ensureDatabase(name);
  const database = {
    DATABASE_URL: databaseUrlFor(name),
    // Dead workers are found quickly in tests.
    SCAN_QUEUE_MAINTENANCE_SECONDS: '1',
    SCAN_QUEUE_POLL_SECONDS: '1',
  };
  if (backendMode === 'postgres') return database;
  const endpoint = process.env.PACTUM_TEST_S3_ENDPOINT;
  if (!endpoint) throw new Error('PACTUM_TEST_BACKEND=postgres-s3 needs the S3 server of test/global-setup.ts (run through vitest)');
  return {
    ...database,
    STORAGE: 's3',
    S3_ENDPOINT: endpoint,
    S3_BUCKET: TEST_BUCKET,
    S3_REGION: 'us-east-1',
    S3_ACCESS_KEY_ID: process.env.PACTUM_TEST_S3_KEY ?? 'S3RVER',
    S3_SECRET_ACCESS_KEY: process.env.PACTUM_TEST_S3_SECRET ?? 'S3RVER',
    S3_FORCE_PATH_STYLE: 'true',
    S3_PREFIX: `${nameOf(dataDir)}/`,
    S3_PART_SIZE_MB: '5',
  };
}
