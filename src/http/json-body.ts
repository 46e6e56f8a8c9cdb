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

/** Nesting depth of JSON text fed in pieces; `push` returns false once it exceeds `max`. */
export class DepthScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  constructor(private readonly max: number) {}

  push(text: string): boolean {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === BACKSLASH) this.escaped = true;
        else if (c === QUOTE) this.inString = false;
      } else if (c === QUOTE) this.inString = true;
      else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        if (++this.depth > this.max) return false;
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) this.depth--;
    }
    return true;
  }
}

export interface JsonBodyLimits {
  /** Largest body in bytes. */
  limit: number;
  maxDepth?: number;
}

/** The body as UTF-8 text, or a JsonBodyError saying why it was refused. */
export function readJsonText(req: IncomingMessage, { limit, maxDepth = MAX_JSON_DEPTH }: JsonBodyLimits): Promise<string> {
  const declared = req.headers['content-length'] === undefined ? null : Number(req.headers['content-length']);
  if (declared !== null && declared > limit) return Promise.reject(new JsonBodyError('too-large', `larger than ${limit} bytes`));
  if (req.readableEnded) return Promise.reject(new JsonBodyError('aborted', 'the body was already read'));
  return new Promise((resolve, reject) => {
    const decoder = new StringDecoder('utf8');
    const scanner = new DepthScanner(maxDepth);
    const parts: string[] = [];
    let received = 0;
    const finish = (err: JsonBodyError | null, text?: string) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      // What is left of a refused body is discarded once the answer is sent (http/slow-clients.ts).
      if (err) {
        req.pause();
        reject(err);
      } else resolve(text!);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      const text = received > limit ? null : decoder.write(chunk);
      // A piece of the body is ours alone and spent once decoded (the decoder copies what it
      // keeps): its memory goes back now rather than at a collection, which under a flood of
      // bodies comes only after tens of MB of them (http/transient-buffers.ts).
      freeNow(chunk);
      if (text === null) return finish(new JsonBodyError('too-large', `larger than ${limit} bytes`));
      if (!scanner.push(text)) return finish(new JsonBodyError('too-deep', `nests deeper than ${maxDepth} levels`));
      parts.push(text);
    };
    const onEnd = () => {
      if (declared !== null && received !== declared) return finish(new JsonBodyError('length-mismatch', `${received} bytes arrived of the ${declared} Content-Length announced`));
      const rest = decoder.end();
      if (!scanner.push(rest)) return finish(new JsonBodyError('too-deep', `nests deeper than ${maxDepth} levels`));
      parts.push(rest);
      finish(null, parts.join(''));
    };
    const onError = (err: Error) => finish(new JsonBodyError('aborted', err.message));
    const onAborted = () => finish(new JsonBodyError('aborted', 'the client went away'));
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
    req.once('aborted', onAborted);
  });
}
