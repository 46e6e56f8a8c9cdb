/**
 * The request line skips pino's redaction (its fields are fixed and flat); every other line a
 * request writes keeps it, and its logger, made only when first used, carries the request id.
 */
import { Writable } from 'node:stream';
import Koa from 'koa';
import { expect, it } from 'vitest';
import { requestContext } from '../../src/http/app.js';
import { createLogger, type Logger } from '../../src/telemetry/log.js';

it('writes the request line with its id, and redacts what a handler logs', async () => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const app = new Koa();
  app.use(requestContext(createLogger('info', sink)));
  app.use((ctx) => {
    (ctx.state.log as Logger).warn({ connection: { token: 'tok-secret-1', password: 'pw-secret-1' } }, 'handler line');
    ctx.body = { ok: true };
  });
  const server = app.listen(0);
  try {
    const { port } = server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}/somewhere?password=query-secret`, { headers: { authorization: 'Bearer header-secret' } });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-request-id');
    for (let i = 0; i < 50 && lines.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    const handler = lines.find((l) => l.msg === 'handler line');
    const request = lines.find((l) => l.msg === 'request');
    expect(handler).toMatchObject({ requestId: id, connection: { token: '[redacted]', password: '[redacted]' } });
    expect(request).toMatchObject({ requestId: id, method: 'GET', path: '/somewhere', status: 200 });
    const all = JSON.stringify(lines);
    for (const secret of ['tok-secret-1', 'pw-secret-1', 'query-secret', 'header-secret']) expect(all).not.toContain(secret);
  } finally {
    server.close();
  }
});
