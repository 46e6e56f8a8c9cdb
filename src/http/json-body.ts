/**
 * Reads a JSON request body as text, judging it while it arrives: its size against a cap (at
 * once from Content-Length, else as bytes come), and its nesting depth, counted by a scanner
 * that follows strings and escapes without building anything. A body nested deeper than the
 * limit is refused at the chunk where it goes too deep, before the rest is read and before any
 * parse: `[[[[…` costs the server a scan of what it has received, never a tree of it.
 */
import type { IncomingMessage } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { freeNow } from './transient-buffers.js';

/** No field of any operation nests this deep; the JSON-RPC envelope and a tool's arguments included. */
export const MAX_JSON_DEPTH = 32;

export type BodyRefusal = 'too-large' | 'too-deep' | 'length-mismatch' | 'aborted';

export class JsonBodyError extends Error {
  constructor(readonly reason: BodyRefusal, message: string) {
    super(message);
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * Nesting depth of JSON fed in pieces of UTF-8 bytes; `push` returns false once it exceeds `max`.
 * Bytes, not text: every byte of a multi-byte character (or of a malformed one) is 0x80 or more,
 * so none is taken for a quote, a backslash or a bracket, and the bytes need no decoding first.
 */
export class DepthScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  constructor(private readonly max: number) {}

  push(bytes: Uint8Array): boolean {
    // The state in locals, and a string's plain bytes passed over in a loop of their own: this
    // runs over every byte of every JSON body, most of them inside strings.
    let { depth, inString, escaped } = this;
    const max = this.max;
    const n = bytes.length;
    let i = 0;
    if (escaped && n > 0) {
      escaped = false;
      i++;
    }
    while (i < n) {
      if (inString) {
        let c = bytes[i]!;
        while (c !== QUOTE && c !== BACKSLASH && ++i < n) c = bytes[i]!;
        if (i === n) break;
        if (c === BACKSLASH) {
          // The escaped byte is passed over, in the next piece if it is not in this one.
          if (++i === n) escaped = true;
          else i++;
          continue;
        }
        inString = false;
        i++;
        continue;
      }
      const c = bytes[i++]!;
      if (c === QUOTE) inString = true;
      else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        if (++depth > max) return false;
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    return true;
  }
}

export interface JsonBodyLimits {
  /** Largest body in bytes. */
  limit: number;
  maxDepth?: number;
}

/**
 * One body being read. Its listeners are module functions that find it on the request (`this`
 * of an event is the request), so that reading a body allocates no closures; it runs for every
 * request with a JSON body.
 */
class BodyReader {
  received = 0;
  /**
   * A body that arrives in one piece (the common case) is decoded once, whole, at its end; from
   * a second piece on, pieces are decoded as they come, so that no more than one is held undecoded.
   */
  first: Buffer | null = null;
  decoder: StringDecoder | null = null;
  parts: string[] = [];
  readonly scanner: DepthScanner;
  constructor(
    readonly req: IncomingMessage,
    readonly limit: number,
    readonly maxDepth: number,
    readonly declared: number | null,
    readonly resolve: (text: string) => void,
    readonly reject: (err: JsonBodyError) => void,
  ) {
    this.scanner = new DepthScanner(maxDepth);
  }

  data(chunk: Buffer) {
    this.received += chunk.length;
    if (this.received > this.limit) return this.finish(chunk, new JsonBodyError('too-large', `larger than ${this.limit} bytes`));
    if (!this.scanner.push(chunk)) return this.finish(chunk, new JsonBodyError('too-deep', `nests deeper than ${this.maxDepth} levels`));
    if (!this.decoder) {
      if (!this.first) return void (this.first = chunk);
      this.decoder = new StringDecoder('utf8');
      this.parts.push(this.decoder.write(this.first));
      this.release();
    }
    this.parts.push(this.decoder.write(chunk));
    // A piece of the body is ours alone and spent once decoded (the decoder copies what it
    // keeps): its memory goes back now rather than at a collection, which under a flood of
    // bodies comes only after tens of MB of them (http/transient-buffers.ts).
    freeNow(chunk);
  }

  end() {
    const { declared, received } = this;
    if (declared !== null && received !== declared) return this.finish(null, new JsonBodyError('length-mismatch', `${received} bytes arrived of the ${declared} Content-Length announced`));
    const text = this.decoder ? this.parts.join('') + this.decoder.end() : (this.first?.toString('utf8') ?? '');
    this.finish(null, null, text);
  }

  /** Frees the piece held undecoded, if any. */
  release() {
    if (this.first) freeNow(this.first);
    this.first = null;
  }

  finish(chunk: Buffer | null, err: JsonBodyError | null, text?: string) {
    const req = this.req;
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onError);
    req.off('aborted', onAborted);
    (req as Reading)[READER] = undefined;
    if (chunk) freeNow(chunk);
    this.release();
    // What is left of a refused body is discarded once the answer is sent (http/slow-clients.ts).
    if (err) {
      req.pause();
      this.reject(err);
    } else this.resolve(text!);
  }
}

const READER = Symbol('JSON body reader');
type Reading = IncomingMessage & { [READER]?: BodyReader };

function onData(this: Reading, chunk: Buffer) {
  this[READER]?.data(chunk);
}
function onEnd(this: Reading) {
  this[READER]?.end();
}
function onError(this: Reading, err: Error) {
  this[READER]?.finish(null, new JsonBodyError('aborted', err.message));
}
function onAborted(this: Reading) {
  this[READER]?.finish(null, new JsonBodyError('aborted', 'the client went away'));
}

/** The body as UTF-8 text, or a JsonBodyError saying why it was refused. */
export function readJsonText(req: IncomingMessage, { limit, maxDepth = MAX_JSON_DEPTH }: JsonBodyLimits): Promise<string> {
  const declared = req.headers['content-length'] === undefined ? null : Number(req.headers['content-length']);
  if (declared !== null && declared > limit) return Promise.reject(new JsonBodyError('too-large', `larger than ${limit} bytes`));
  if (req.readableEnded) return Promise.reject(new JsonBodyError('aborted', 'the body was already read'));
  const reading = req as Reading;
  if (reading[READER]) return Promise.reject(new JsonBodyError('aborted', 'the body is already being read'));
  return new Promise((resolve, reject) => {
    reading[READER] = new BodyReader(req, limit, maxDepth, declared, resolve, reject);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}
