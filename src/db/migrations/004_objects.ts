import type { Knex } from 'knex';

export async function up(db: Knex) {
  await db.schema.createTable('repos', (t) => {
    t.string('id', 40).primary();
    t.string('org_id', 40).notNullable().references('orgs.id');
    t.string('name', 100).notNullable();
    t.boolean('public').notNullable().defaultTo(false);
    t.string('created_at', 30).notNullable();
    t.unique(['org_id', 'name']);
  });
  await db.schema.createTable('repo_grants', (t) => {
    t.string('repo_id', 40).notNullable().references('repos.id');
    t.string('user_id', 40).notNullable().references('users.id');
    t.string('access', 10).notNullable(); // read | write | admin
    t.primary(['repo_id', 'user_id']);
  });
  // Personal access tokens: the password of HTTP Basic for Git LFS, stored as SHA-256 only.
  await db.schema.createTable('personal_tokens', (t) => {
    t.string('id', 40).primary();
    t.string('user_id', 40).notNullable().references('users.id');
    t.string('token_hash', 64).notNullable().unique();
    t.string('name', 100).notNullable();
    t.string('created_at', 30).notNullable();
    t.string('last_used_at', 30).nullable();
    t.string('revoked_at', 30).nullable();
  });
  // An object is visible in a repository only once its row exists, which is written after the
  // content was stored and its hash checked. A deleted object keeps its row with the reason (410).
  await db.schema.createTable('lfs_objects', (t) => {
    t.string('repo_id', 40).notNullable().references('repos.id');
    t.string('oid', 64).notNullable();
    t.bigInteger('size').notNullable();
    t.string('created_at', 30).notNullable();
    t.string('deleted_at', 30).nullable();
    t.text('deleted_reason').nullable();
    t.primary(['repo_id', 'oid']);
    t.index(['oid']);
  });
  await db.schema.createTable('lfs_locks', (t) => {
    t.string('id', 40).primary();
    t.string('repo_id', 40).notNullable().references('repos.id');
    t.string('path', 4096).notNullable();
    t.string('owner_id', 40).notNullable();
    t.string('owner_name', 100).notNullable();
    t.string('ref_name', 1000).nullable();
    t.string('locked_at', 30).notNullable();
    t.unique(['repo_id', 'path']);
  });
  // Shared across instances: bandwidth per repository and day, requests per key and minute.
  await db.schema.createTable('lfs_bandwidth', (t) => {
    t.string('repo_id', 40).notNullable();
    t.string('day', 10).notNullable();
    t.bigInteger('bytes').notNullable().defaultTo(0);
    t.primary(['repo_id', 'day']);
  });
  await db.schema.createTable('rate_windows', (t) => {
    t.string('key', 200).notNullable();
    t.bigInteger('window').notNullable();
    t.integer('count').notNullable().defaultTo(0);
    t.primary(['key', 'window']);
  });
}

export async function down(db: Knex) {
  for (const t of ['rate_windows', 'lfs_bandwidth', 'lfs_locks', 'lfs_objects', 'personal_tokens', 'repo_grants', 'repos']) await db.schema.dropTable(t);
}
