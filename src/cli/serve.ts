import { ConfigError, describeDatabase, loadConfig } from '../ground/config.js';
import { cliSettings, noArguments } from './args.js';
import { migrate, openDb } from '../db/knex.js';
import { startServer } from '../server.js';
import { requestScope } from '../http/request-scope.js';
import type { Logger } from '../telemetry/log.js';

/**
 * The last line of defence: an error that no code handled. No request path should ever get here
 * (a client that goes away is handled where the bytes move); if one does, the process state is
 * unknown — a stream half torn down, a lock or a file handle never released — so it is logged
 * loudly, with the request whose code raised it, and the process exits non-zero after a bounded
 * graceful shutdown, for the supervisor to restart it. A second fault meanwhile exits at once.
 */
export function guardProcess(log: Logger, shutdown: () => Promise<void>, timeoutMs: number) {
  let exiting = false;
  const fatal = (kind: 'uncaughtException' | 'unhandledRejection') => (reason: unknown) => {
    log.fatal({ err: reason, request: requestScope.getStore() ?? null, kind }, `${kind}: exiting so that a supervisor restarts a clean process`);
    if (exiting) process.exit(1);
    exiting = true;
    setTimeout(() => process.exit(1), timeoutMs + 1000).unref();
    shutdown().then(
      () => process.exit(1),
      () => process.exit(1),
    );
  };
  process.on('uncaughtException', fatal('uncaughtException'));
  process.on('unhandledRejection', fatal('unhandledRejection'));
}

/** `pactum serve`: migrate, then serve until SIGTERM or SIGINT, shutting down gracefully. */
/** `started`: called once the server listens, with the young generation's limit (main.ts lets it grow again, up to that). */
export async function serve(args: string[], started: (youngGenerationMb: number) => void = () => {}): Promise<number> {
  noArguments(args);
  const settings = cliSettings();
  const running = await startServer({ env: settings.env, announce: (config) => ({ settingsFile: settings.file, database: describeDatabase(config, settings) }) }).catch((err: unknown) => {
    if (err instanceof ConfigError) throw err;
    // Not a setting we recognise: still one line, with what the error said.
    throw new ConfigError(`cannot start: ${err instanceof Error ? err.message : String(err)}`);
  });
  started(running.services.config.heapYoungGenerationMb);
  const log = running.services.log;
  guardProcess(log, running.close, running.services.config.shutdownTimeoutMs);
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
export async function migrateCommand(args: string[]): Promise<number> {
  noArguments(args);
  const settings = cliSettings();
  const config = loadConfig(settings.env);
  const db = openDb(config);
  try {
    const applied = await migrate(db);
    console.error(`pactum migrate: ${describeDatabase(config, settings)}`);
    console.log(applied.length ? `applied ${applied.join(', ')}` : 'the database is up to date');
  } finally {
    await db.destroy();
  }
  return 0;
}
