/** Ports for tests: free a moment ago, so a server can be started (or found absent) on them. */
import { createServer } from 'node:net';

/** n distinct ports that were free a moment ago. */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => new Promise<ReturnType<typeof createServer>>((ok, fail) => {
      const s = createServer();
      s.once('error', fail);
      s.listen(0, '127.0.0.1', () => ok(s));
    })),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((ok) => s.close(ok))));
  return ports;
}

/** One port that was free a moment ago: for a server that must come back on it, or for a client that must find nothing there. */
export const freePort = async () => (await freePorts(1))[0]!;
