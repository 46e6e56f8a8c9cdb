/**
 * Once per vitest run. With PACTUM_TEST_BACKEND=postgres-s3: starts an S3-protocol server (s3rver,
 * files in a temporary directory) for every test file's servers, and at the end drops the
 * databases the tests created. The embedded default needs nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import S3rver from 's3rver';
import { adminPgUrl, TEST_BUCKET, TEST_DB_PREFIX } from './helpers/backends.js';

async function dropTestDatabases() {
  const client = new pg.Client({ connectionString: adminPgUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>('select datname from pg_database where datname like $1', [`${TEST_DB_PREFIX}%`]);
    for (const { datname } of rows) await client.query(`drop database if exists "${datname}" with (force)`);
  } finally {
    await client.end();
  }
}

export default async function setup() {
  const mode = process.env.PACTUM_TEST_BACKEND;
  if (mode !== 'postgres' && mode !== 'postgres-s3') return;
  await dropTestDatabases(); // what an interrupted earlier run left
  if (mode === 'postgres') return dropTestDatabases;
  const dir = mkdtempSync(join(tmpdir(), 'pactum-s3rver-'));
  const s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [{ name: TEST_BUCKET, configs: [] }] });
  const { port } = (await s3.run()) as { port: number };
  // Test files run in forked workers, which inherit this environment.
  process.env.PACTUM_TEST_S3_ENDPOINT = `http://127.0.0.1:${port}`;
  return async () => {
    await s3.close();
    rmSync(dir, { recursive: true, force: true });
    await dropTestDatabases();
  };
}
