/**
 * `pactum mock`: the three Prism mock servers of src/mock/servers.ts in the foreground, until
 * Ctrl-C or SIGTERM stops them.
 */
import { parseArgs } from 'node:util';
import { UsageError } from './args.js';
import { describeMock, MOCK_APIS, PrismMissing, startMock } from '../mock/servers.js';

export async function mock(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, strict: true, options: { host: { type: 'string' }, 'port-base': { type: 'string' } } });
  const portBase = values['port-base'] === undefined ? undefined : Number(values['port-base']);
  if (portBase !== undefined && !(Number.isInteger(portBase) && portBase >= 1 && portBase <= 65533)) throw new UsageError('--port-base is a port number (the three servers take it and the two after it)');
  let running;
  try {
    running = await startMock({ host: values.host, portBase, log: (api, line) => process.stdout.write(`[${api}] ${line}\n`) });
  } catch (err) {
    if (!(err instanceof PrismMissing) && !(err instanceof Error && / is in use |did not listen|exited .*before listening/.test(err.message))) throw err;
    console.error(`pactum mock: ${err.message}`);
    return err instanceof PrismMissing ? 2 : 1;
  }
  const started = running;
  process.stdout.write(`\n${describeMock(started)}\n\n`);
  return new Promise<number>((done) => {
    let stopping = false;
    const shutdown = (code: number) => {
      if (stopping) return;
      stopping = true;
      void started.stop().then(() => done(code));
    };
    // `on`, not `once`: Ctrl-C may arrive twice (from the terminal and relayed by tsx), and a second
    // signal without a listener would end the process before the servers are stopped.
    process.on('SIGINT', () => shutdown(0));
    process.on('SIGTERM', () => shutdown(0));
    // Nothing a request does should get here (the fronts answer their own failures); if anything
    // does, the mock stops as a whole rather than leave three Prism processes and their files behind.
    const fatal = (err: unknown) => {
      process.stderr.write(`mock: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\nstopping the three servers\n`);
      shutdown(1);
    };
    process.on('uncaughtException', fatal);
    process.on('unhandledRejection', fatal);
    for (const api of MOCK_APIS) {
      void started.exited[api].then(() =>
        // Ctrl-C reaches the Prism processes too (same process group): give our own handler a moment.
        setTimeout(() => {
          if (stopping) return;
          process.stderr.write(`[${api}] Prism stopped unexpectedly; stopping the others\n`);
          shutdown(1);
        }, 500),
      );
    }
  });
}
