/**
 * Baselines for scripts/bench/objects.ts, one per process.
 *   upload-baseline    node:http, PUT body gathered into writes of at least 1 MiB (one writev of
 *                      the socket's chunks, no copy; one write in flight while the next fills),
 *                      fsynced, 200: what a skilled user writes when the disk is the limit
 *                      (objects.ts checks it against dd)
 *   upload-hashing     the same, hashing each chunk with SHA-256 in the same pass (what pactum
 *                      must do and the bare server does not: it shows what the hash costs here)
 *   download-baseline  node:http, GET streams the file named by BENCH_FILE
 * Each also answers GET /stall with its longest event-loop interval in ms since the previous one (as
 * pactum's nodejs_eventloop_lag_max_seconds: monitorEventLoopDelay at prom-client's 10 ms
 * resolution), so a stall of pactum's can be told from one the busy machine causes anyway.
 * (pactum itself runs as `pactum serve` from dist/: see ../pactum-process.ts)
 */
import { createHash } from 'node:crypto';
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { open, rm, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';

const kind = process.argv[2];
const dir = mkdtempSync(join(tmpdir(), `bench-${kind}-`));

if (kind === 'upload-baseline' || kind === 'upload-hashing' || kind === 'download-baseline') {
  let n = 0;
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.url === '/stall') {
      res.writeHead(200).end(String(delay.max / 1e6));
      delay.reset();
    } else if (req.method === 'PUT') {
      const path = join(dir, `f${n++}`);
      const h = await open(path, 'w');
      const sha = kind === 'upload-hashing' ? createHash('sha256') : null;
      let pending: Buffer[] = [];
      let bytes = 0;
      let writing: Promise<unknown> = Promise.resolve();
      for await (const chunk of req) {
        pending.push(chunk as Buffer);
        sha?.update(chunk as Buffer);
        bytes += (chunk as Buffer).length;
        if (bytes >= 1 << 20) {
          // One write in flight while the socket keeps filling the next (pipeline() to a
          // WriteStream reached half of this here: it writes each 64 KiB chunk on its own).
          const batch = pending;
          pending = [];
          bytes = 0;
          await writing;
          writing = h.writev(batch);
        }
      }
      await writing;
      if (pending.length) await h.writev(pending);
      await h.sync();
      await h.close();
      res.writeHead(200).end(sha?.digest('hex'));
      // Only the write is measured; keep the disk free. Not rmSync: unlinking a GiB's extents
      // blocked the loop for ~200 ms, which /stall then reported as the server's own stall.
      await rm(path);
    } else {
      const file = process.env.BENCH_FILE!;
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': (await stat(file)).size });
      await pipeline(createReadStream(file, { highWaterMark: 1 << 20 }), res);
    }
  };
  // A client that goes mid-transfer ends that request, not the server.
  const server = createServer((req, res) => void handle(req, res).catch(() => res.destroy())).listen(0, '127.0.0.1', () => process.send!({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
}

process.on('SIGTERM', () => {
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});
