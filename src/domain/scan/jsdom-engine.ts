/** The jsdom engine: axe-core on jsdom in worker threads (pool.ts), for machines without a browser. */
import { CheckError, type CheckSession, type ScanEngine } from './engine.js';
import { CheckPoolError, type CheckPool } from './check-pool.js';

export function createJsdomEngine(pool: CheckPool): ScanEngine {
  const sessionOf = (owner?: string): CheckSession => ({
    async check(page, signal) {
      try {
        return await pool.check(page.html, page.url, page.standard, signal, { styles: page.styles ?? false, owner });
      } catch (err) {
        if (!(err instanceof CheckPoolError)) throw err;
        const code = err.code === 'timeout' ? 'timeout' : err.code === 'worker-crashed' ? 'crashed' : err.code === 'closed' ? 'closed' : 'failed';
        throw new CheckError(code, err.message);
      }
    },
    close: () => Promise.resolve(),
  });
  return { name: 'jsdom', openSession: (_fetch, session) => sessionOf(session?.owner), close: () => pool.close() };
}
