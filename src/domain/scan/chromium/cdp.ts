/**
 * The Chrome DevTools Protocol over the pipe Chromium opens with --remote-debugging-pipe: JSON
 * messages separated by NUL bytes, commands written to the browser's fd 3, answers and events read
 * from its fd 4. Sessions are "flat": a message for a page or a frame carries its sessionId.
 *
 * Why our own and not playwright-core or puppeteer-core: importing playwright-core costs the server
 * about 85 MB resident (two 3.5 MB bundles and what parsing them leaves behind), most of the gap to
 * the 600 MB for server plus browser; the engine needs a dozen CDP commands.
 */
import type { Readable, Writable } from 'node:stream';

export type CdpParams = Record<string, unknown>;
type Listener = (params: CdpParams) => void;

interface Pending { resolve(value: CdpParams): void; reject(err: Error): void; method: string }

/** A command the browser refused, or one that could not be answered because the target went away. */
export class CdpError extends Error {}

export class CdpConnection {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly sessions = new Map<string, CdpSession>();
  private closedWith: Error | null = null;
  private buffered: Buffer[] = [];
  /** The browser itself (no sessionId). */
  readonly browser: CdpSession;
  private readonly closeListeners: (() => void)[] = [];

  constructor(private readonly out: Writable, input: Readable) {
    this.browser = new CdpSession(this, '');
    input.on('data', (chunk: Buffer) => this.receive(chunk));
    input.on('close', () => this.close(new CdpError('The browser closed its connection')));
    input.on('error', () => this.close(new CdpError('The browser connection failed')));
    out.on('error', () => this.close(new CdpError('The browser connection failed')));
  }

  get closed(): boolean {
    return this.closedWith !== null;
  }

  onClose(listener: () => void): void {
    if (this.closedWith) listener();
    else this.closeListeners.push(listener);
  }

  send(method: string, params: CdpParams, sessionId: string): Promise<CdpParams> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = this.nextId++;
    const message = JSON.stringify(sessionId ? { id, method, params, sessionId } : { id, method, params });
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      this.out.write(`${message}\0`);
    });
  }

  session(sessionId: string): CdpSession {
    let session = this.sessions.get(sessionId);
    if (!session) {
      session = new CdpSession(this, sessionId);
      this.sessions.set(sessionId, session);
    }
    return session;
  }

  close(reason: Error): void {
    if (this.closedWith) return;
    this.closedWith = reason;
    for (const p of this.pending.values()) p.reject(reason);
    this.pending.clear();
    for (const s of this.sessions.values()) s.detached();
    this.sessions.clear();
    this.browser.detached();
    for (const listener of this.closeListeners.splice(0)) listener();
  }

  private receive(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(0); end !== -1; end = chunk.indexOf(0, start)) {
      const part = chunk.subarray(start, end);
      const whole = this.buffered.length ? Buffer.concat([...this.buffered, part]) : part;
      this.buffered = [];
      start = end + 1;
      this.dispatch(whole.toString('utf8'));
    }
    if (start < chunk.length) this.buffered.push(chunk.subarray(start));
  }

  private dispatch(text: string): void {
    let message: { id?: number; method?: string; params?: CdpParams; result?: CdpParams; error?: { message: string }; sessionId?: string };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return; // not ours to crash on: the browser writes only JSON here
    }
    if (message.id !== undefined) {
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.pending.delete(message.id);
      if (message.error) pending.reject(new CdpError(`${pending.method}: ${message.error.message}`));
      else pending.resolve(message.result ?? {});
      return;
    }
    if (!message.method) return;
    const session = message.sessionId ? this.sessions.get(message.sessionId) : this.browser;
    session?.emit(message.method, message.params ?? {});
    if (message.method === 'Target.detachedFromTarget') {
      const gone = this.sessions.get(message.params?.sessionId as string);
      this.sessions.delete(message.params?.sessionId as string);
      gone?.detached();
    }
  }
}

/** The browser's session or one attached target's (a page, an out-of-process frame, a worker). */
export class CdpSession {
  private readonly listeners = new Map<string, Listener[]>();
  private readonly detachListeners: (() => void)[] = [];
  private gone = false;

  constructor(
    private readonly connection: CdpConnection,
    readonly id: string,
  ) {}

  get isDetached(): boolean {
    return this.gone;
  }

  send<T = CdpParams>(method: string, params: CdpParams = {}): Promise<T> {
    // After the browser went, its reason; after only this target went, that.
    if (this.gone && !this.connection.closed) return Promise.reject(new CdpError(`${method}: the target is gone`));
    return this.connection.send(method, params, this.id) as Promise<T>;
  }

  on(event: string, listener: Listener): void {
    const list = this.listeners.get(event);
    if (list) list.push(listener);
    else this.listeners.set(event, [listener]);
  }

  off(event: string, listener: Listener): void {
    const list = this.listeners.get(event);
    if (list) list.splice(list.indexOf(listener) >>> 0, 1);
  }

  onDetach(listener: () => void): void {
    if (this.gone) listener();
    else this.detachListeners.push(listener);
  }

  session(sessionId: string): CdpSession {
    return this.connection.session(sessionId);
  }

  emit(event: string, params: CdpParams): void {
    for (const listener of this.listeners.get(event) ?? []) listener(params);
  }

  detached(): void {
    if (this.gone) return;
    this.gone = true;
    for (const listener of this.detachListeners.splice(0)) listener();
    this.listeners.clear();
  }
}
