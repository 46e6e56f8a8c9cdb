/** A loopback port that was free a moment ago, for a server the script is about to start. */
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((ok, fail) => s.once('error', fail).listen(0, '127.0.0.1', ok));
  const { port } = s.address() as { port: number };
  await new Promise((ok) => s.close(ok));
  return port;
}
