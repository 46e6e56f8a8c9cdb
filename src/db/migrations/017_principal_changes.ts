import type { Knex } from 'knex';

/**
 * On PostgreSQL, a change to a user or an org is announced to every instance when its transaction
 * commits: NOTIFY pactum_principals '<table>:<id>', whatever wrote it (a tool, the CLI, an operator's
 * SQL). The instances drop what they remember of that row (db/principal-changes.ts). SQLite has one
 * server process; it notices another process's commits by the database's data version.
 */
/** The dialect, from knex's own client config (typed loosely by knex). */
const isPostgres = (db: Knex) => (db.client as { config: { client?: unknown } }).config.client === 'pg';

export async function up(db: Knex) {
  if (!isPostgres(db)) return;
  await db.raw(`
    create or replace function pactum_principal_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('pactum_principals', tg_table_name || ':' || old.id);
      return null;
    end
    $$`);
  for (const table of ['users', 'orgs']) {
    await db.raw(`create trigger ${table}_changed after update or delete on ${table} for each row execute procedure pactum_principal_changed()`);
  }
}

export async function down(db: Knex) {
  if (!isPostgres(db)) return;
  for (const table of ['users', 'orgs']) await db.raw(`drop trigger if exists ${table}_changed on ${table}`);
  await db.raw('drop function if exists pactum_principal_changed()');
}
