import { loadConfig } from '../config.js';
import { migrate, openDb } from '../db/knex.js';
import { startServer } from '../server.js';

/** `pactum serve`: migrate, then serve until SIGTERM or SIGINT, shutting down gracefully. */
export async function serve(): Promise<number> {
  const running = await startServer();
  const log = running.services.log;
  log.info({ url: running.url, dataDir: running.services.config.dataDir }, 'pactum is serving');
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log.info({ signal }, 'shutting down');
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  await running.close();
  return 0;
}

/** `pactum migrate`: apply migrations and exit. */
export async function migrateCommand(): Promise<number> {
  const db = openDb(loadConfig());
  try {
    const applied = await migrate(db);
    console.log(applied.length ? `applied ${applied.join(', ')}` : 'the database is up to date');
  } finally {
    await db.destroy();
  }
  return 0;
}
