import type { OpsDeps } from './services.js';
import type { Handler } from '../http/router.js';
import { VERSION } from '../ground/version.js';

const CHECK_TIMEOUT_MS = 3000;

/** Answers within the timeout or says why not; never throws. */
async function check(probe: () => Promise<unknown>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS))),
    ]);
    return 'ok';
  } catch (err) {
    // The message names the dependency's failure (refused, timed out), never a credential: URLs are not included.
    return `unreachable: ${(err as Error).message.replace(/\w+:\/\/\S+/g, '<url>')}`.slice(0, 300);
  } finally {
    // An answer in time leaves the timer pending: a /readyz poll would otherwise hold one per probe for 3 s.
    clearTimeout(timer);
  }
}

/** Readiness: the database and the object storage both answer. */
export const ready =
  (s: Pick<OpsDeps, 'db' | 'objects'>): Handler<'ops.ready'> =>
  async () => {
    const [database, storage] = await Promise.all([check(() => s.db.raw('select 1')), check(() => s.objects.store.backend.ping())]);
    const ok = database === 'ok' && storage === 'ok';
    return { status: ok ? 200 : 503, body: { status: ok ? 'ok' : 'unavailable', version: VERSION, checks: { database, storage } } };
  };
