import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path and query as received. */
  path: string;
  /** Host header as received, to tell 127.0.0.1 from localhost. */
  host: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export type Handler = (req: RecordedRequest, res: ServerResponse, index: number) => void;

export interface LoopbackServer {
  port: number;
  /** http://127.0.0.1:<port> */
  origin: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** A loopback HTTP server on an ephemeral port that records each request before handing it to `handler`. */
export async function startServer(handler: Handler): Promise<LoopbackServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        host: req.headers.host ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      requests.push(recorded);
      try {
        handler(recorded, res, requests.length - 1);
      } catch (err) {
        res.statusCode = 599;
        res.end(String(err));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A route table: path → handler; unknown paths get 404. */
export function routes(table: Record<string, Handler>): Handler {
  return (req, res, i) => {
    const path = req.path.split('?')[0] ?? '';
    const h = table[path];
    if (h === undefined) {
      res.statusCode = 404;
      res.end('no route');
      return;
    }
    h(req, res, i);
  };
}

export function redirect(status: number, location: string): Handler {
  return (_req, res) => {
    res.writeHead(status, { location });
    res.end();
  };
}

export function reply(status: number, body = '', headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(status, headers);
    res.end(body);
  };
}
