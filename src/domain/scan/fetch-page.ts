/**
 * Fetching pages of user-supplied sites safely: only http(s), no credentials in URLs, no private
 * addresses (unless allowed), redirects followed by hand with the same checks on every hop, a
 * deadline over the whole fetch, a cap on the body, and only the content types asked for.
 */
import { isIP } from 'node:net';
import { pipeline, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { undici } from './undici.js';
import { describeRange, refusedRange, type AddressPolicy } from './address-policy.js';
import { agentFor, BlockedAddressError } from './guarded-agent.js';

export interface FetchOptions {
  /** Let scans reach private, loopback and other internal addresses (trusted deployments only). */
  allowPrivateNetworks: boolean;
  /** Exact IP addresses allowed even when private networks are not. */
  allowedAddresses?: readonly string[];
  /** Deadline for the whole fetch, redirects and body included. Default 15000. */
  timeoutMs?: number;
  /** Largest body accepted, after decompression. Default 5 MiB. */
  maxBytes?: number;
  /** Default 5. */
  maxRedirects?: number;
  userAgent?: string;
  signal?: AbortSignal;
}

export interface FetchedPage {
  /** The final URL, after redirects. */
  url: string;
  status: number;
  contentType: string;
  html: string;
}

export interface FetchedText {
  url: string;
  status: number;
  contentType: string;
  text: string;
}

export type ScanFetchErrorCode =
  | 'blocked-address'
  | 'bad-url'
  | 'timeout'
  | 'too-large'
  | 'not-html'
  | 'http-status'
  | 'network'
  | 'too-many-redirects';

/** Why a URL could not be fetched, in words the person who entered the URL can act on. */
export class ScanFetchError extends Error {
  constructor(readonly code: ScanFetchErrorCode, message: string, readonly status?: number) {
    super(message);
    this.name = 'ScanFetchError';
  }
}

export const FETCH_DEFAULTS = {
  timeoutMs: 15_000,
  maxBytes: 5 * 1024 * 1024,
  maxRedirects: 5,
  userAgent: 'PactumAccessibilityScanner/1.0 (+axe-core)',
} as const;

const PAGE_TYPES: ReadonlySet<string> = new Set(['text/html', 'application/xhtml+xml']);
const TEXT_TYPES: ReadonlySet<string> = new Set(['text/xml', 'application/xml', 'text/plain']);
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

interface Settings {
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  userAgent: string;
  policy: AddressPolicy;
}

interface Wanted {
  types: ReadonlySet<string>;
  accept: string;
  /** Words for the not-html error: "an HTML page", "a text or XML document". */
  noun: string;
}

const PAGE: Wanted = { types: PAGE_TYPES, accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1', noun: 'an HTML page' };
const TEXT: Wanted = { types: TEXT_TYPES, accept: 'application/xml,text/xml;q=0.9,text/plain;q=0.8,*/*;q=0.1', noun: 'an XML or text document' };

/** Fetches an HTML page (text/html or application/xhtml+xml). */
export async function fetchPage(url: string, opts: FetchOptions): Promise<FetchedPage> {
  const got = await fetchResource(url, opts, PAGE);
  return { url: got.url, status: got.status, contentType: got.contentType, html: got.text };
}

/** Fetches an XML or plain-text document, such as sitemap.xml. */
export function fetchText(url: string, opts: FetchOptions): Promise<FetchedText> {
  return fetchResource(url, opts, TEXT);
}

function settingsOf(opts: FetchOptions): Settings {
  return {
    timeoutMs: opts.timeoutMs ?? FETCH_DEFAULTS.timeoutMs,
    maxBytes: opts.maxBytes ?? FETCH_DEFAULTS.maxBytes,
    maxRedirects: opts.maxRedirects ?? FETCH_DEFAULTS.maxRedirects,
    userAgent: opts.userAgent ?? FETCH_DEFAULTS.userAgent,
    policy: { allowPrivateNetworks: opts.allowPrivateNetworks, allowedAddresses: opts.allowedAddresses },
  };
}

async function fetchResource(url: string, opts: FetchOptions, wanted: Wanted): Promise<FetchedText> {
  opts.signal?.throwIfAborted();
  const settings = settingsOf(opts);
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), settings.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline.signal]) : deadline.signal;
  try {
    return await followRedirects(checkedTarget(url, settings.policy), settings, wanted, signal);
  } catch (err) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    if (deadline.signal.aborted && !(err instanceof ScanFetchError)) {
      throw new ScanFetchError('timeout', `${url} did not load within ${seconds(settings.timeoutMs)}; the site may be slow or unreachable.`);
    }
    throw asScanFetchError(err, url);
  } finally {
    clearTimeout(timer);
  }
}

async function followRedirects(start: URL, settings: Settings, wanted: Wanted, signal: AbortSignal): Promise<FetchedText> {
  let target = start;
  for (let redirects = 0; ; redirects++) {
    const outcome = await fetchHop(target, settings, wanted, signal).catch((err: unknown) => {
      // Aborts are classified by the caller (deadline or the caller's own signal); the rest name this hop's URL.
      throw signal.aborted ? err : asScanFetchError(err, target.href);
    });
    if ('text' in outcome) return outcome;
    if (redirects >= settings.maxRedirects) {
      throw new ScanFetchError('too-many-redirects', `${start.href} redirected more than ${settings.maxRedirects} times (last to ${outcome.location}); check for a redirect loop.`);
    }
    try {
      target = checkedTarget(resolveLocation(outcome.location, target), settings.policy);
    } catch (err) {
      if (err instanceof ScanFetchError) err.message = `${start.href} redirects elsewhere. ${err.message}`;
      throw err;
    }
  }
}

/** One request: either the document or where it redirects to. */
async function fetchHop(target: URL, settings: Settings, wanted: Wanted, signal: AbortSignal): Promise<FetchedText | { location: string }> {
  const { statusCode: status, headers, body } = await undici().request(target, {
    method: 'GET',
    dispatcher: agentFor(settings.policy),
    headers: { 'user-agent': settings.userAgent, accept: wanted.accept, 'accept-encoding': 'gzip, deflate, br' },
    signal,
    headersTimeout: settings.timeoutMs,
    bodyTimeout: settings.timeoutMs,
  });
  if (REDIRECT_STATUSES.has(status)) {
    await body.dump({ limit: 64 * 1024, signal }).catch(() => undefined);
    const location = header(headers, 'location');
    if (!location) throw new ScanFetchError('http-status', `${target.href} answered ${status} (a redirect) without saying where to.`, status);
    return { location };
  }
  if (status < 200 || status > 299) {
    discard(body);
    throw new ScanFetchError('http-status', `${target.href} answered HTTP ${status}${statusHint(status)}.`, status);
  }
  const contentType = header(headers, 'content-type') ?? '';
  const mime = contentType.split(';')[0]!.trim().toLowerCase();
  if (mime !== '' && !wanted.types.has(mime)) {
    discard(body);
    throw new ScanFetchError('not-html', `${target.href} is not ${wanted.noun} (its Content-Type is ${mime}).`);
  }
  const bytes = await readCapped(body, header(headers, 'content-encoding'), header(headers, 'content-length'), settings.maxBytes, target);
  const text = decode(bytes, charsetOf(contentType));
  // Without a Content-Type, only something that starts like markup passes as a page.
  if (mime === '' && wanted === PAGE && !/^\s*</.test(text)) {
    throw new ScanFetchError('not-html', `${target.href} is not ${wanted.noun} (it has no Content-Type and does not look like HTML).`);
  }
  return { url: target.href, status, contentType, text };
}

/** Parses a URL and refuses what the scanner must never fetch; literal IPs skip DNS, so they are checked here. */
export function checkedTarget(raw: string, policy: AddressPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ScanFetchError('bad-url', `"${raw}" is not a valid URL; enter a full address such as https://www.example.com/.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ScanFetchError('bad-url', `${url.href} uses ${url.protocol.slice(0, -1)}:, but only http and https addresses can be scanned.`);
  }
  if (url.username || url.password) {
    throw new ScanFetchError('bad-url', `${url.protocol}//${url.host}${url.pathname} contains a user name or password; remove the credentials from the address.`);
  }
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host)) {
    const range = refusedRange(host, policy);
    if (range) throw blocked(url.href, `${host} is ${describeRange(range)}`);
  }
  url.hash = '';
  return url;
}

function resolveLocation(location: string, base: URL): string {
  try {
    return new URL(location, base).href;
  } catch {
    throw new ScanFetchError('bad-url', `${base.href} redirects to "${location}", which is not a valid URL.`);
  }
}

function blocked(url: string, why: string): ScanFetchError {
  return new ScanFetchError('blocked-address', `Refused to fetch ${url}: ${why}. This server does not scan private or internal networks (an operator can allow them with SCAN_ALLOW_PRIVATE_NETWORKS=true).`);
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

async function readCapped(body: Readable, encoding: string | undefined, length: string | undefined, maxBytes: number, url: URL): Promise<Buffer> {
  const tooLarge = () => new ScanFetchError('too-large', `${url.href} is larger than ${megabytes(maxBytes)}, the most the scanner reads of one page.`);
  const decoder = decompressorFor(encoding, url);
  if (!decoder && length !== undefined && Number(length) > maxBytes) {
    discard(body);
    throw tooLarge();
  }
  const stream: Readable = decoder ? pipeline(body, decoder, () => undefined) : body;
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) {
      discard(stream);
      discard(body);
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

/** Stops reading a body; undici reports a destroyed body as an AbortError, which nobody needs to hear. */
function discard(stream: Readable): void {
  stream.on('error', () => undefined);
  stream.destroy();
}

function decompressorFor(encoding: string | undefined, url: URL) {
  switch (encoding?.trim().toLowerCase()) {
    case undefined: case '': case 'identity': return null;
    case 'gzip': case 'x-gzip': return createGunzip();
    case 'deflate': return createInflate();
    case 'br': return createBrotliDecompress();
    default: throw new ScanFetchError('network', `${url.href} was sent with an unsupported compression (${encoding}).`);
  }
}

function charsetOf(contentType: string): string | null {
  return /charset\s*=\s*"?([\w.:-]+)"?/i.exec(contentType)?.[1] ?? null;
}

/** A BOM wins, then the header's charset, then a <meta charset> or XML declaration, then UTF-8. */
export function decode(bytes: Buffer, headerCharset: string | null): string {
  const label = bomCharset(bytes) ?? headerCharset ?? declaredCharset(bytes) ?? 'utf-8';
  try {
    return new TextDecoder(label).decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes); // an unknown label: UTF-8 is the web's default
  }
}

function bomCharset(bytes: Buffer): string | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return null;
}

function declaredCharset(bytes: Buffer): string | null {
  const head = bytes.subarray(0, 1024).toString('latin1');
  return /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1] ?? /<\?xml[^>]+encoding\s*=\s*["']([\w.:-]+)/i.exec(head)?.[1] ?? null;
}

/** Maps undici and socket failures to the error a user sees. */
function asScanFetchError(err: unknown, url: string): ScanFetchError {
  if (err instanceof ScanFetchError) return err;
  const cause = findCause(err);
  if (cause instanceof BlockedAddressError) return blocked(url, cause.message);
  const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? '';
  const host = hostOf(url);
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new ScanFetchError('timeout', `${url} did not respond in time; the site may be slow or unreachable.`);
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') {
    return new ScanFetchError('network', `The host ${host} could not be found; check the address for typos.`);
  }
  if (code === 'ECONNREFUSED') return new ScanFetchError('network', `${host} refused the connection; is the site up?`);
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') {
    return new ScanFetchError('network', `${host} closed the connection before the page arrived.`);
  }
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) {
    return new ScanFetchError('network', `The HTTPS certificate of ${host} could not be verified (${code}).`);
  }
  const message = cause instanceof Error ? cause.message : String(err);
  return new ScanFetchError('network', `Could not fetch ${url}: ${message}`);
}

/** The most specific error in the chain: undici and fetch wrap socket errors in `cause`. */
function findCause(err: unknown): unknown {
  let found = err;
  let current = err;
  for (let depth = 0; depth < 5 && current; depth++) {
    if (current instanceof BlockedAddressError) return current;
    if ((current as { code?: unknown }).code) found = current;
    current = (current as { cause?: unknown }).cause;
  }
  return found;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function statusHint(status: number): string {
  if (status === 401 || status === 403) return ' (the page needs a login or blocks scanners)';
  if (status === 404 || status === 410) return ' (the page does not exist)';
  if (status === 429) return ' (the site is rate-limiting requests; try again later)';
  if (status >= 500) return ' (a server error on the site)';
  return '';
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

function megabytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB` : `${bytes} bytes`;
}
