import { afterEach, describe, expect, it } from 'vitest';
import {
  createObjectsFetch,
  expectOk,
  ObjectsApiError,
  parseRetryAfterMs,
  TooManyRedirectsError,
  type ObjectsFetchOptions,
} from '../../../src/clients/objects-fetch.js';
import { redirect, reply, routes, startServer, type Handler, type LoopbackServer } from './loopback-server.js';

const servers: LoopbackServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(handler: Handler): Promise<LoopbackServer> {
  const s = await startServer(handler);
  servers.push(s);
  return s;
}

/** An objects fetch whose sleeps are recorded, never really waited. */
function client(options: ObjectsFetchOptions = {}) {
  const sleeps: number[] = [];
  const f = createObjectsFetch({
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
    ...options,
  });
  return { f, sleeps };
}

/** Fails `failures` times with `status` (plus headers), then answers 200 with the attempt number. */
function flaky(status: number, failures: number, headers: Record<string, string> = {}): Handler {
  let n = 0;
  return (_req, res) => {
    n++;
    if (n <= failures) {
      res.writeHead(status, headers);
      res.end(`attempt ${n}`);
    } else {
      res.writeHead(200);
      res.end(`ok after ${n}`);
    }
  };
}

const MEDIA = 'application/vnd.objstore+json';
const OBJECT = JSON.stringify({ oid: 'a'.repeat(64), size: 12 });

describe('redirects', () => {
  it.each([301, 302, 303, 307])('follows %i for GET', async (status) => {
    const s = await serve(routes({ '/start': redirect(status, '/end'), '/end': reply(200, 'done') }));
    const { f } = client();
    const res = await f(`${s.origin}/start`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('done');
    expect(s.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /start', 'GET /end']);
  });

  it.each([301, 302, 303, 307])('follows %i for HEAD, keeping HEAD', async (status) => {
    const s = await serve(routes({ '/start': redirect(status, '/end'), '/end': reply(200, '', { 'x-end': 'yes' }) }));
    const { f } = client();
    const res = await f(`${s.origin}/start`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-end')).toBe('yes');
    expect(s.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['HEAD /start', 'HEAD /end']);
  });

  it.each([301, 302, 303])('does not follow %i for POST: the response is returned as is', async (status) => {
    const s = await serve(routes({ '/objects': redirect(status, '/elsewhere'), '/elsewhere': reply(200) }));
    const { f } = client();
    const res = await f(`${s.origin}/objects`, { method: 'POST', body: OBJECT });
    expect(res.status).toBe(status);
    expect(res.headers.get('location')).toBe('/elsewhere');
    expect(s.requests.map((r) => r.path)).toEqual(['/objects']);
  });

  it('follows 307 for POST with the same method, body and headers', async () => {
    const s = await serve(routes({ '/objects': redirect(307, '/v2/objects'), '/v2/objects': reply(202, '{}') }));
    const { f } = client();
    const res = await f(`${s.origin}/objects`, {
      method: 'POST',
      headers: { accept: MEDIA, 'content-type': MEDIA },
      body: OBJECT,
    });
    expect(res.status).toBe(202);
    expect(s.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /objects', 'POST /v2/objects']);
    for (const r of s.requests) {
      expect(r.body.toString()).toBe(OBJECT);
      expect(r.headers['content-type']).toBe(MEDIA);
      expect(r.headers['accept']).toBe(MEDIA);
    }
  });

  it('follows 307 for PUT and other methods too', async () => {
    const s = await serve(routes({ '/a': redirect(307, '/b'), '/b': reply(200) }));
    const { f } = client();
    const res = await f(`${s.origin}/a`, { method: 'PUT', body: 'content' });
    expect(res.status).toBe(200);
    expect(s.requests.map((r) => `${r.method} ${r.path} ${r.body.toString()}`)).toEqual([
      'PUT /a content',
      'PUT /b content',
    ]);
  });

  it.each(['GET', 'HEAD', 'POST'])('never follows 308 (%s)', async (method) => {
    const s = await serve(routes({ '/a': redirect(308, '/b'), '/b': reply(200) }));
    const { f } = client();
    const res = await f(`${s.origin}/a`, method === 'POST' ? { method, body: OBJECT } : { method });
    expect(res.status).toBe(308);
    expect(res.headers.get('location')).toBe('/b');
    expect(s.requests.map((r) => r.path)).toEqual(['/a']);
  });

  it('returns a redirect without a Location as is', async () => {
    const s = await serve(reply(302));
    const { f } = client();
    const res = await f(`${s.origin}/a`);
    expect(res.status).toBe(302);
    expect(s.requests).toHaveLength(1);
  });

  it('resolves the Location against the current URL, hop after hop', async () => {
    const s = await serve(
      routes({
        '/api/objects/x': redirect(302, 'moved/x'),
        '/api/objects/moved/x': redirect(301, '../../store/x?v=1'),
        '/api/store/x': reply(200, 'found'),
      }),
    );
    const { f } = client();
    const res = await f(`${s.origin}/api/objects/x`);
    expect(await res.text()).toBe('found');
    expect(s.requests.map((r) => r.path)).toEqual(['/api/objects/x', '/api/objects/moved/x', '/api/store/x?v=1']);
  });

  it('throws after maxRedirects hops on a redirect loop', async () => {
    const s = await serve(routes({ '/loop': redirect(302, '/loop') }));
    const { f } = client({ maxRedirects: 3 });
    const err = await f(`${s.origin}/loop`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TooManyRedirectsError);
    expect((err as Error).message).toMatch(/too many redirects: more than 3/i);
    expect(s.requests).toHaveLength(4); // the original request and three hops
  });

  it('allows 5 redirects by default', async () => {
    const s = await serve(routes({ '/loop': redirect(307, '/loop') }));
    const { f } = client();
    await expect(f(`${s.origin}/loop`)).rejects.toThrow(/more than 5/);
    expect(s.requests).toHaveLength(6);
  });

  it('calls the underlying fetch with redirect: manual, whatever the caller asked', async () => {
    const s = await serve(routes({ '/a': redirect(302, '/b'), '/b': reply(200) }));
    const seen: (RequestRedirect | undefined)[] = [];
    const { f } = client({
      fetch: (input, init) => {
        seen.push(init?.redirect);
        return fetch(input, init);
      },
    });
    const res = await f(`${s.origin}/a`, { redirect: 'follow' });
    expect(res.status).toBe(200);
    expect(seen).toEqual(['manual', 'manual']);
  });
});

describe('headers on redirect', () => {
  const original = {
    authorization: 'Basic dXNlcjpwYXNz',
    accept: MEDIA,
    'content-type': MEDIA,
    'x-custom': 'kept',
    'user-agent': 'objects-client-test',
  };

  function expectResent(r: { headers: Record<string, unknown> }, withAuth: boolean) {
    expect(r.headers['accept']).toBe(original.accept);
    expect(r.headers['content-type']).toBe(original['content-type']);
    expect(r.headers['x-custom']).toBe('kept');
    expect(r.headers['user-agent']).toBe('objects-client-test');
    expect(r.headers['authorization']).toBe(withAuth ? original.authorization : undefined);
  }

  it('resends all original headers, Authorization included, to the same scheme, host and port', async () => {
    let port = 0;
    const s = await serve(
      routes({
        '/a': redirect(301, '/b'), // relative
        '/b': (_q, res) => redirect(307, `http://127.0.0.1:${port}/c`)(_q, res, 0), // absolute, same origin
        '/c': reply(200),
      }),
    );
    port = s.port;
    const { f } = client();
    const res = await f(`${s.origin}/a`, { headers: original });
    expect(res.status).toBe(200);
    expect(s.requests).toHaveLength(3);
    for (const r of s.requests) expectResent(r, true);
  });

  it('drops Authorization for another port, keeping the other headers', async () => {
    const other = await serve(reply(200, 'other'));
    const s = await serve(routes({ '/a': redirect(302, `${other.origin}/b`) }));
    const { f } = client();
    const res = await f(`${s.origin}/a`, { headers: original });
    expect(await res.text()).toBe('other');
    expectResent(s.requests[0]!, true);
    expect(other.requests).toHaveLength(1);
    expectResent(other.requests[0]!, false);
  });

  it('drops Authorization for another host on the same port (127.0.0.1 → localhost)', async () => {
    let port = 0;
    const s = await serve(
      routes({
        '/a': (q, res) => redirect(302, `http://localhost:${port}/b`)(q, res, 0),
        '/b': reply(200, 'b'),
      }),
    );
    port = s.port;
    const { f } = client();
    const res = await f(`${s.origin}/a`, { headers: original });
    expect(await res.text()).toBe('b');
    expect(s.requests.map((r) => r.host)).toEqual([`127.0.0.1:${port}`, `localhost:${port}`]);
    expectResent(s.requests[0]!, true);
    expectResent(s.requests[1]!, false);
  });

  it('sends Authorization again when a later hop comes back to the original origin', async () => {
    const home = await serve(routes({ '/a': (q, res) => redirect(302, `${away.origin}/b`)(q, res, 0), '/c': reply(200) }));
    const away = await serve(routes({ '/b': redirect(302, `${home.origin}/c`) }));
    const { f } = client();
    await f(`${home.origin}/a`, { headers: original });
    expect(home.requests.map((r) => r.headers['authorization'])).toEqual([original.authorization, original.authorization]);
    expect(away.requests.map((r) => r.headers['authorization'])).toEqual([undefined]);
  });

  it.each([
    ['a Headers object', () => new Headers(original)],
    ['an array of pairs', () => Object.entries(original)],
    ['a record', () => ({ ...original })],
  ])('keeps headers given as %s', async (_name, make) => {
    const s = await serve(routes({ '/a': redirect(303, '/b'), '/b': reply(200) }));
    const { f } = client();
    await f(`${s.origin}/a`, { headers: make() });
    expect(s.requests).toHaveLength(2);
    for (const r of s.requests) expectResent(r, true);
  });

  it('accepts a Request object, with its method, headers and body', async () => {
    const s = await serve(routes({ '/objects': redirect(307, '/objects2'), '/objects2': reply(202) }));
    const { f } = client();
    const res = await f(new Request(`${s.origin}/objects`, { method: 'POST', headers: original, body: OBJECT }));
    expect(res.status).toBe(202);
    expect(s.requests.map((r) => `${r.method} ${r.path} ${r.body.toString()}`)).toEqual([
      `POST /objects ${OBJECT}`,
      `POST /objects2 ${OBJECT}`,
    ]);
    for (const r of s.requests) expectResent(r, true);
  });

  it('lets init override a Request, as fetch does', async () => {
    const s = await serve(reply(200));
    const { f } = client();
    await f(new Request(`${s.origin}/x`, { method: 'POST', body: 'from request', headers: { 'x-a': '1' } }), {
      body: 'from init',
      headers: { 'x-b': '2' },
    });
    expect(s.requests[0]!.method).toBe('POST');
    expect(s.requests[0]!.body.toString()).toBe('from init');
    expect(s.requests[0]!.headers['x-a']).toBeUndefined();
    expect(s.requests[0]!.headers['x-b']).toBe('2');
  });
});

describe('resendable bodies', () => {
  const bytes = new TextEncoder().encode('binary \u00e9 content');
  it.each([
    ['string', () => 'plain text'],
    ['Buffer', () => Buffer.from(bytes)],
    ['Uint8Array', () => bytes.slice()],
    ['ArrayBuffer', () => bytes.slice().buffer],
    ['Blob', () => new Blob([bytes], { type: 'application/octet-stream' })],
    ['URLSearchParams', () => new URLSearchParams({ oid: 'abc', size: '12' })],
    [
      'FormData',
      () => {
        const fd = new FormData();
        fd.set('oid', 'abc');
        fd.set('file', new Blob([bytes]), 'f.bin');
        return fd;
      },
    ],
  ])('resends a %s body byte for byte, with the same content type', async (_name, make) => {
    const s = await serve(routes({ '/a': redirect(307, '/b'), '/b': flaky(503, 1) }));
    const { f } = client();
    const res = await f(`${s.origin}/a`, { method: 'POST', body: make() });
    expect(res.status).toBe(200);
    expect(s.requests.map((r) => r.path)).toEqual(['/a', '/b', '/b']);
    const [first, ...others] = s.requests;
    expect(first!.body.length).toBeGreaterThan(0);
    for (const r of others) {
      expect(r.body.equals(first!.body)).toBe(true);
      expect(r.headers['content-type']).toBe(first!.headers['content-type']);
    }
  });
});

describe('retries', () => {
  it.each([500, 502, 503, 504])('retries %i with backoff, then returns the success', async (status) => {
    const s = await serve(flaky(status, 2));
    const { f, sleeps } = client();
    const res = await f(`${s.origin}/objects`, { method: 'POST', body: OBJECT });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok after 3');
    expect(s.requests).toHaveLength(3);
    for (const r of s.requests) expect(r.body.toString()).toBe(OBJECT);
    expect(sleeps).toEqual([200, 400]);
  });

  it('gives up after maxRetries and returns the last response', async () => {
    const s = await serve(flaky(503, Infinity));
    const { f, sleeps } = client();
    const res = await f(`${s.origin}/objects/x`);
    expect(res.status).toBe(503);
    expect(await res.text()).toBe('attempt 4');
    expect(s.requests).toHaveLength(4);
    expect(sleeps).toEqual([200, 400, 800]);
  });

  it('caps the default backoff at 5000 ms and honours maxRetries', async () => {
    const s = await serve(flaky(500, Infinity));
    const { f, sleeps } = client({ maxRetries: 7 });
    const res = await f(`${s.origin}/x`);
    expect(res.status).toBe(500);
    expect(s.requests).toHaveLength(8);
    expect(sleeps).toEqual([200, 400, 800, 1600, 3200, 5000, 5000]);
  });

  it('uses a custom backoffMs, given the 1-based attempt', async () => {
    const s = await serve(flaky(502, 2));
    const { f, sleeps } = client({ backoffMs: (attempt) => attempt * 7 });
    await f(`${s.origin}/x`);
    expect(sleeps).toEqual([7, 14]);
  });

  it('does not retry other errors', async () => {
    const s = await serve(flaky(501, Infinity));
    const { f, sleeps } = client();
    const res = await f(`${s.origin}/x`);
    expect(res.status).toBe(501);
    expect(s.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('waits a Retry-After in seconds on 429', async () => {
    const s = await serve(flaky(429, 1, { 'retry-after': '1' }));
    const { f, sleeps } = client();
    const res = await f(`${s.origin}/x`);
    expect(res.status).toBe(200);
    expect(s.requests).toHaveLength(2);
    expect(sleeps).toEqual([1000]);
  });

  it('waits a Retry-After given as an HTTP date on 429', async () => {
    const s = await serve((_q, res) => {
      if (s.requests.length === 1) {
        res.writeHead(429, { 'retry-after': new Date(Date.now() + 30_000).toUTCString() });
        res.end();
      } else reply(200)(_q, res, 0);
    });
    const { f, sleeps } = client();
    const res = await f(`${s.origin}/x`);
    expect(res.status).toBe(200);
    expect(s.requests).toHaveLength(2);
    expect(sleeps).toHaveLength(1);
    // The date has whole seconds, so the wait is a little under 30 s.
    expect(sleeps[0]).toBeGreaterThan(20_000);
    expect(sleeps[0]).toBeLessThanOrEqual(30_000);
  });

  it('uses the backoff on a 429 without Retry-After', async () => {
    const s = await serve(flaky(429, 2));
    const { f, sleeps } = client();
    const res = await f(`${s.origin}/x`);
    expect(res.status).toBe(200);
    expect(sleeps).toEqual([200, 400]);
  });

  it.each([
    ['seconds', () => '61'],
    ['an HTTP date', () => new Date(Date.now() + 3_600_000).toUTCString()],
  ])('returns a 429 whose Retry-After (%s) is longer than maxRetryAfterSeconds', async (_name, value) => {
    const s = await serve((q, res) => reply(429, 'slow down', { 'retry-after': value() })(q, res, 0));
    const { f, sleeps } = client();
    const res = await f(`${s.origin}/x`);
    expect(res.status).toBe(429);
    expect(await res.text()).toBe('slow down');
    expect(s.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('honours a custom maxRetryAfterSeconds', async () => {
    const s = await serve(flaky(429, 1, { 'retry-after': '90' }));
    const { f, sleeps } = client({ maxRetryAfterSeconds: 120 });
    const res = await f(`${s.origin}/x`);
    expect(res.status).toBe(200);
    expect(sleeps).toEqual([90_000]);
  });

  it('shares one retry budget between 5xx and 429', async () => {
    let n = 0;
    const s = await serve((_q, res) => {
      n++;
      res.writeHead(n % 2 === 1 ? 503 : 429, { 'retry-after': '2' });
      res.end();
    });
    const { f, sleeps } = client({ maxRetries: 3 });
    const res = await f(`${s.origin}/x`);
    expect(res.status).toBe(429);
    expect(s.requests).toHaveLength(4);
    expect(sleeps).toEqual([200, 2000, 800]);
  });

  it('cuts the default sleep short when the request is aborted', async () => {
    const controller = new AbortController();
    const s = await serve((_q, res) => {
      res.writeHead(503);
      res.end();
      setTimeout(() => controller.abort(new Error('caller gave up')), 20);
    });
    // A real (not injected) sleep of a minute: only the abort can end this test in time.
    const f = createObjectsFetch({ backoffMs: () => 60_000 });
    await expect(f(`${s.origin}/x`, { signal: controller.signal })).rejects.toThrow(/caller gave up|abort/i);
    expect(s.requests).toHaveLength(1);
  });

  it('retries after a redirect, at the new location', async () => {
    let n = 0;
    const s = await serve(
      routes({
        '/a': redirect(307, '/b'),
        '/b': (_q, res) => {
          n++;
          res.writeHead(n === 1 ? 504 : 200);
          res.end();
        },
      }),
    );
    const { f } = client();
    const res = await f(`${s.origin}/a`, { method: 'POST', body: OBJECT });
    expect(res.status).toBe(200);
    expect(s.requests.map((r) => `${r.method} ${r.path} ${r.body.toString()}`)).toEqual([
      `POST /a ${OBJECT}`,
      `POST /b ${OBJECT}`,
      `POST /b ${OBJECT}`,
    ]);
  });
});

describe('stream bodies', () => {
  const stream = () =>
    new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('streamed '));
        c.enqueue(new TextEncoder().encode('content'));
        c.close();
      },
    });

  it('sends a stream body once and does not retry it', async () => {
    const s = await serve(flaky(503, Infinity));
    const { f, sleeps } = client();
    const res = await f(`${s.origin}/upload`, { method: 'PUT', body: stream() });
    expect(res.status).toBe(503);
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]!.body.toString()).toBe('streamed content');
    expect(sleeps).toEqual([]);
  });

  it('returns a 307 instead of following it with a spent stream', async () => {
    const s = await serve(routes({ '/a': redirect(307, '/b'), '/b': reply(200) }));
    const { f } = client();
    const res = await f(`${s.origin}/a`, { method: 'POST', body: stream() });
    expect(res.status).toBe(307);
    expect(s.requests.map((r) => r.path)).toEqual(['/a']);
  });

  it('succeeds with a stream body when no retry is needed', async () => {
    const s = await serve(reply(200, 'stored'));
    const { f } = client();
    const res = await f(`${s.origin}/upload`, { method: 'PUT', body: stream() });
    expect(await res.text()).toBe('stored');
    expect(s.requests[0]!.body.toString()).toBe('streamed content');
  });
});

describe('expectOk', () => {
  const errorBody = {
    message: `Object ${'5'.repeat(64)} does not exist`,
    documentation_url: 'http://127.0.0.1:8080/#object-api-errors',
    request_id: '01JDQ3V8K2M5N7P9R1S3T5V7X9',
  };

  it('resolves to the response itself when it is 2xx', async () => {
    const s = await serve(reply(202, '{}'));
    const res = await createObjectsFetch()(`${s.origin}/objects`, { method: 'POST', body: OBJECT });
    await expect(expectOk(res)).resolves.toBe(res);
    expect(await res.text()).toBe('{}'); // body still unread
  });

  it('turns {message, documentation_url, request_id} into the message and fields', async () => {
    const s = await serve(reply(404, JSON.stringify(errorBody), { 'content-type': MEDIA }));
    const res = await createObjectsFetch()(`${s.origin}/objects/x`);
    const err = await expectOk(res).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ObjectsApiError);
    const e = err as ObjectsApiError;
    expect(e.message).toBe(
      `${errorBody.message} (see ${errorBody.documentation_url}) [request id ${errorBody.request_id}]`,
    );
    expect(e.status).toBe(404);
    expect(e.documentationUrl).toBe(errorBody.documentation_url);
    expect(e.requestId).toBe(errorBody.request_id);
    expect(e.body).toEqual(errorBody);
    expect(e.name).toBe('ObjectsApiError');
  });

  it('shows only the message when the optional fields are absent', async () => {
    const s = await serve(reply(410, JSON.stringify({ message: 'Deleted for a DMCA notice' })));
    const e = (await expectOk(await fetch(s.origin)).catch((x: unknown) => x)) as ObjectsApiError;
    expect(e.message).toBe('Deleted for a DMCA notice');
    expect(e.status).toBe(410);
    expect(e.documentationUrl).toBeUndefined();
    expect(e.requestId).toBeUndefined();
  });

  it('falls back to the status text for a non-JSON body', async () => {
    const s = await serve(reply(502, '<html>Bad gateway</html>', { 'content-type': 'text/html' }));
    const e = (await expectOk(await fetch(s.origin)).catch((x: unknown) => x)) as ObjectsApiError;
    expect(e).toBeInstanceOf(ObjectsApiError);
    expect(e.message).toBe('Bad Gateway');
    expect(e.status).toBe(502);
    expect(e.body).toBe('<html>Bad gateway</html>');
    expect(e.documentationUrl).toBeUndefined();
  });

  it('falls back to the status text for JSON without a message, and for an empty body', async () => {
    const s = await serve((_q, res, i) => (i === 0 ? reply(403, '{"error":"nope"}') : reply(401))(_q, res, i));
    const e1 = (await expectOk(await fetch(s.origin)).catch((x: unknown) => x)) as ObjectsApiError;
    expect(e1.message).toBe('Forbidden');
    expect(e1.body).toEqual({ error: 'nope' });
    const e2 = (await expectOk(await fetch(s.origin)).catch((x: unknown) => x)) as ObjectsApiError;
    expect(e2.message).toBe('Unauthorized');
    expect(e2.body).toBeUndefined();
  });

  it('throws for a 308 the client returned', async () => {
    const s = await serve(redirect(308, '/elsewhere'));
    const res = await createObjectsFetch()(s.origin);
    await expect(expectOk(res)).rejects.toMatchObject({ status: 308, message: 'Permanent Redirect' });
  });
});

describe('parseRetryAfterMs', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  it('reads seconds, HTTP dates, past dates and rubbish', () => {
    expect(parseRetryAfterMs('1', now)).toBe(1000);
    expect(parseRetryAfterMs(' 0 ', now)).toBe(0);
    expect(parseRetryAfterMs('Wed, 01 Jan 2025 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfterMs('Tue, 31 Dec 2024 23:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfterMs('Sunday, 01-Jan-25 00:00:10 GMT', now)).toBe(10_000); // RFC 850 form
    expect(parseRetryAfterMs('soon', now)).toBeUndefined();
    expect(parseRetryAfterMs('1.5', now)).toBeUndefined();
    expect(parseRetryAfterMs('-3', now)).toBeUndefined();
    expect(parseRetryAfterMs(null, now)).toBeUndefined();
  });
});
