/**
 * `make mock`: `pactum mock` from the sources (src/cli/mock.ts); the servers themselves are
 * src/mock/servers.ts, re-exported here for the tests and scripts that start them in-process.
 *
 *   npx tsx scripts/mock.ts
 */
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { mock } from '../src/cli/mock.js';

export * from '../src/mock/servers.js';

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  mock(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
