/**
 * Client runtime for the Git LFS object APIs (legacy v0.5 and batch v1.3).
 *
 * `createObjectsFetch()` returns a drop-in `fetch` that applies the APIs'
 * client rules itself instead of leaving them to the platform's fetch:
 *
 * - Redirects: GET and HEAD follow 301, 302, 303 and 307; every other method
 *   follows only 307 (same method and body). 308 is never followed: the 308
 *   response is returned as is. More than `maxRedirects` hops throws
 *   `TooManyRedirectsError`.
 * - Every hop resends all of the caller's headers; Authorization only goes to
 *   a location with the same scheme, host and port as the original URL.
 * - 500, 502, 503 and 504 are retried after `backoffMs(attempt)`; 429 after
 *   its Retry-After (seconds or HTTP date), or the backoff when it has none.
 *   A Retry-After longer than `maxRetryAfterSeconds` is not waited out: the
 *   429 is returned. All retries of one call share the `maxRetries` budget;
 *   when it is spent the last response is returned.
 * - Bodies given as string, Buffer/Uint8Array (any ArrayBufferView),
 *   ArrayBuffer, Blob, URLSearchParams or FormData are read once into bytes
 *   and can be resent. A ReadableStream (or async iterable) body is sent as
 *   is and cannot be replayed, so a 307 or a retryable status is then
 *   returned to the caller instead of followed or retried.
 * - A `Request` input has its body read into memory (so it is resendable);
 *   to stream an upload, pass the ReadableStream as `init.body` instead.
 * - The caller's `redirect` option is ignored: the rules above replace it.
 *
 * `expectOk()` turns a non-2xx response into an `ObjectsApiError` whose
 * message shows the server's message, documentation_url and request_id, as
 * the specification requires them to be displayed to the user.
 */

type FetchInput = Parameters<typeof fetch>[0];
type FetchInit = NonNullable<Parameters<typeof fetch>[1]>;

export interface ObjectsFetchOptions {
  /** Underlying fetch (default globalThis.fetch). It is always called with `redirect: 'manual'`. */
  fetch?: typeof fetch;
  /** Redirect hops allowed per call (default 5). */
  maxRedirects?: number;
  /** Retries allowed per call, 5xx and 429 together (default 3). */
  maxRetries?: number;
  /** Wait before retry number `attempt` (1-based); default 200 * 2^(attempt-1) ms, capped at 5000. */
  backoffMs?: (attempt: number) => number;
  /** Injectable for tests; default is a timer that an aborted request signal cuts short. */
  sleep?: (ms: number) => Promise<void>;
  /** A longer Retry-After is returned to the caller as the 429 instead of waited out (default 60). */
  maxRetryAfterSeconds?: number;
}

export class TooManyRedirectsError extends Error {
  constructor(
    readonly url: string,
    readonly maxRedirects: number,
  ) {
    super(`Too many redirects: more than ${maxRedirects} while fetching ${url}`);
    this.name = 'TooManyRedirectsError';
  }
}

export class ObjectsApiError extends Error {
  readonly status: number;
  readonly documentationUrl?: string;
  readonly requestId?: string;
  /** The parsed JSON error body, or the raw text when it is not JSON; undefined when empty. */
  readonly body?: unknown;

  constructor(init: { message: string; status: number; documentationUrl?: string; requestId?: string; body?: unknown }) {
    let message = init.message;
    if (init.documentationUrl !== undefined) message += ` (see ${init.documentationUrl})`;
    if (init.requestId !== undefined) message += ` [request id ${init.requestId}]`;
    super(message);
    this.name = 'ObjectsApiError';
    this.status = init.status;
    if (init.documentationUrl !== undefined) this.documentationUrl = init.documentationUrl;
    if (init.requestId !== undefined) this.requestId = init.requestId;
    if (init.body !== undefined) this.body = init.body;
  }
}

const RETRYABLE_5XX = new Set([500, 502, 503, 504]);
const REDIRECTS_GET_HEAD = new Set([301, 302, 303, 307]);

export const defaultBackoffMs = (attempt: number): number => Math.min(200 * 2 ** (attempt - 1), 5000);

type PreparedBody =
  | { kind: 'none' }
  | { kind: 'bytes'; bytes: Uint8Array<ArrayBuffer> }
  // Sent once as given; never replayed.
  | { kind: 'once'; body: NonNullable<FetchInit['body']> };

interface PreparedRequest {
  url: URL;
  method: string;
  headers: Headers;
  body: PreparedBody;
  /** Everything else from the caller's init (signal, keepalive, ...), passed through to each hop. */
  rest: FetchInit;
}

export function createObjectsFetch(options: ObjectsFetchOptions = {}): typeof fetch {
  const baseFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const maxRedirects = options.maxRedirects ?? 5;
  const maxRetries = options.maxRetries ?? 3;
  const backoffMs = options.backoffMs ?? defaultBackoffMs;
  const maxRetryAfterMs = (options.maxRetryAfterSeconds ?? 60) * 1000;

  return async function objectsFetch(input: FetchInput, init?: FetchInit): Promise<Response> {
    const req = await prepare(input, init);
    const sleep = options.sleep ?? ((ms: number) => abortableSleep(ms, req.rest.signal ?? undefined));
    const resendable = req.body.kind !== 'once';
    const upperMethod = req.method.toUpperCase();
    const followable = upperMethod === 'GET' || upperMethod === 'HEAD' ? REDIRECTS_GET_HEAD : new Set([307]);

    let url = req.url;
    let redirects = 0;
    let retries = 0;
    for (;;) {
      const headers = new Headers(req.headers);
      // Credentials never leave the original origin (scheme + host + port).
      if (!sameOrigin(url, req.url)) headers.delete('authorization');
      const hopInit: FetchInit = { ...req.rest, method: req.method, headers, redirect: 'manual' };
      if (req.body.kind === 'bytes') hopInit.body = req.body.bytes;
      else if (req.body.kind === 'once') {
        hopInit.body = req.body.body;
        // Node's fetch refuses a streamed body without it.
        (hopInit as FetchInit & { duplex?: 'half' }).duplex ??= 'half';
      }

      const res = await baseFetch(url, hopInit);

      if (followable.has(res.status)) {
        const next = resolveLocation(res, url);
        // No usable Location, or a 307 whose streamed body is already spent: the caller gets the redirect.
        if (next === undefined || (res.status === 307 && !resendable)) return res;
        await discard(res);
        if (redirects >= maxRedirects) throw new TooManyRedirectsError(req.url.href, maxRedirects);
        redirects++;
        url = next;
        continue;
      }

      if (RETRYABLE_5XX.has(res.status) || res.status === 429) {
        if (!resendable || retries >= maxRetries) return res;
        let wait = backoffMs(retries + 1);
        if (res.status === 429) {
          const retryAfter = parseRetryAfterMs(res.headers.get('retry-after'));
          if (retryAfter !== undefined) {
            // Waiting minutes inside a fetch would look like a hang; let the caller decide.
            if (retryAfter > maxRetryAfterMs) return res;
            wait = retryAfter;
          }
        }
        retries++;
        await discard(res);
        await sleep(wait);
        continue;
      }

      return res;
    }
  };
}

/**
 * Resolves to the response when it is OK (2xx); otherwise throws ObjectsApiError built from the
 * server's error body (message, documentation_url, request_id when present), falling back to the
 * status text.
 */
export async function expectOk(res: Response): Promise<Response> {
  if (res.ok) return res;
  let text = '';
  try {
    text = await res.text();
  } catch {
    // An unreadable body still yields an error with the status.
  }
  let body: unknown = text === '' ? undefined : text;
  let message: string | undefined;
  let documentationUrl: string | undefined;
  let requestId: string | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    body = parsed;
    if (parsed !== null && typeof parsed === 'object') {
      const o = parsed as Record<string, unknown>;
      if (typeof o.message === 'string' && o.message !== '') message = o.message;
      if (typeof o.documentation_url === 'string') documentationUrl = o.documentation_url;
      if (typeof o.request_id === 'string') requestId = o.request_id;
    }
  } catch {
    // Not JSON (an HTML error page from a proxy, say): only the status is meaningful.
  }
  throw new ObjectsApiError({
    message: message ?? (res.statusText || `HTTP ${res.status}`),
    status: res.status,
    ...(documentationUrl !== undefined && { documentationUrl }),
    ...(requestId !== undefined && { requestId }),
    ...(body !== undefined && { body }),
  });
}

async function prepare(input: FetchInput, init: FetchInit | undefined): Promise<PreparedRequest> {
  let url: URL;
  let method = 'GET';
  let headers = new Headers();
  let body: PreparedBody = { kind: 'none' };
  let rest: FetchInit = {};

  if (input instanceof Request) {
    url = new URL(input.url);
    method = input.method;
    headers = new Headers(input.headers);
    rest = { signal: input.signal, keepalive: input.keepalive, cache: input.cache, credentials: input.credentials };
    // Read only when init does not replace it, as fetch(request, init) does.
    if (input.body !== null && init?.body === undefined) {
      body = { kind: 'bytes', bytes: new Uint8Array(await input.arrayBuffer()) };
    }
  } else {
    url = new URL(input);
  }

  if (init !== undefined) {
    const { method: m, headers: h, body: b, redirect: _ignored, ...others } = init;
    rest = { ...rest, ...others };
    if (m !== undefined) method = m;
    if (h !== undefined) headers = new Headers(h);
    if (b !== undefined && b !== null) body = await prepareBody(b, headers);
    else if (b === null) body = { kind: 'none' };
  }
  return { url, method, headers, body, rest };
}

/** Reads a replayable body once into bytes; keeps the content type fetch would have set for it. */
async function prepareBody(body: NonNullable<FetchInit['body']>, headers: Headers): Promise<PreparedBody> {
  const replayable =
    typeof body === 'string' ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    body instanceof Blob ||
    body instanceof URLSearchParams ||
    body instanceof FormData;
  if (!replayable) return { kind: 'once', body };
  // Response does the same encoding fetch would, including the FormData boundary, which must match
  // the bytes on every resend.
  const encoded = new Response(body as BodyInit);
  const contentType = encoded.headers.get('content-type');
  if (contentType !== null && !headers.has('content-type')) headers.set('content-type', contentType);
  return { kind: 'bytes', bytes: new Uint8Array(await encoded.arrayBuffer()) };
}

function resolveLocation(res: Response, current: URL): URL | undefined {
  const location = res.headers.get('location');
  if (location === null) return undefined;
  try {
    return new URL(location, current);
  } catch {
    return undefined;
  }
}

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

function sameOrigin(a: URL, b: URL): boolean {
  const port = (u: URL) => u.port || DEFAULT_PORTS[u.protocol] || '';
  return a.protocol === b.protocol && a.hostname === b.hostname && port(a) === port(b);
}

const HTTP_DATE_MONTH = /\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\b/i;

/** Retry-After as milliseconds from now: delta-seconds or an HTTP date; undefined when absent or invalid. */
export function parseRetryAfterMs(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  // Date.parse is lenient ('-3' parses as a year): insist on a month name, as every HTTP date form has.
  if (!HTTP_DATE_MONTH.test(v)) return undefined;
  const date = Date.parse(v);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Frees the connection of a response the caller will never see. */
async function discard(res: Response): Promise<void> {
  try {
    await res.body?.cancel();
  } catch {
    // Already closed or errored: nothing to free.
  }
}

function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
