/**
 * Headless Chromium driven over CDP (cdp.ts): a browser, its contexts (one per scan, each its own
 * cookies and storage) and their pages. Only what the engine uses: intercept every request, run a
 * script in every new document (axe-core), navigate and wait for load, evaluate, press keys, resize.
 *
 * Out-of-process frames are attached as they appear and set up like the page before they run
 * (interception, the init script, dialogs), so a cross-site iframe neither escapes the address
 * policy nor misses axe-core. A page's requests, its frames' included, reach one handler.
 *
 * Only pages and their frames run. Everything else a page starts (a worker, a shared or service
 * worker, a worklet with a target) is attached paused like them and stopped before its first line
 * (REFUSED_TARGETS): a scan needs none of them, and each is a thread that could keep a core busy.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { CdpConnection, CdpError, type CdpParams, type CdpSession } from './cdp.js';

export interface Viewport { width: number; height: number }

/** A request the page made, held until the handler fulfils or fails it. */
export interface PausedRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** The page's own document (not an iframe's, not a subresource). */
  isPageDocument: boolean;
  page: Page;
  fulfill(response: { status: number; headers: Record<string, string>; body: Buffer | string }): Promise<void>;
  fail(reason: 'BlockedByClient' | 'Failed' | 'Aborted'): Promise<void>;
}

export interface ContextOptions {
  viewport: Viewport;
  userAgent: string;
  /** A script run in every document before the page's own. */
  initScript: string;
  onRequest(request: PausedRequest): Promise<void>;
  /** A worker (or another target that is not a page or a frame) one of the context's pages started was stopped. */
  onRefused?(type: string): void;
}

/**
 * Targets a page may start that never run during a scan. Dedicated workers are attached to the
 * page (or frame) that starts them; shared and service workers to the browser.
 */
export const REFUSED_TARGETS: ReadonlySet<string> = new Set(['worker', 'shared_worker', 'service_worker', 'worklet', 'shared_storage_worklet', 'auction_worklet']);

export interface Browser {
  readonly pid: number;
  /** Its product and version as it reports them (Browser.getVersion), e.g. Chrome/143.0.7499.169. */
  readonly version: string;
  isConnected(): boolean;
  onDisconnected(listener: () => void): void;
  newContext(options: ContextOptions): Promise<BrowserContext>;
  close(): Promise<void>;
}

export interface BrowserContext {
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** Keys the checks press, as Chromium's input layer takes them. */
const KEYS = {
  Tab: { key: 'Tab', code: 'Tab', windowsVirtualKeyCode: 9, nativeVirtualKeyCode: 9 },
  Escape: { key: 'Escape', code: 'Escape', windowsVirtualKeyCode: 27, nativeVirtualKeyCode: 27 },
  Shift: { key: 'Shift', code: 'ShiftLeft', windowsVirtualKeyCode: 16, nativeVirtualKeyCode: 16 },
} as const;
const SHIFT = 8;

export type Key = 'Tab' | 'Shift+Tab' | 'Escape';
export type Modifier = 'Alt' | 'Control' | 'Meta' | 'Shift';
/** CDP's modifier bits and each modifier key. */
const MODIFIERS: Record<Modifier, { bit: number; key: { key: string; code: string; windowsVirtualKeyCode: number; nativeVirtualKeyCode: number } }> = {
  Alt: { bit: 1, key: { key: 'Alt', code: 'AltLeft', windowsVirtualKeyCode: 18, nativeVirtualKeyCode: 18 } },
  Control: { bit: 2, key: { key: 'Control', code: 'ControlLeft', windowsVirtualKeyCode: 17, nativeVirtualKeyCode: 17 } },
  Meta: { bit: 4, key: { key: 'Meta', code: 'MetaLeft', windowsVirtualKeyCode: 91, nativeVirtualKeyCode: 91 } },
  Shift: { bit: 8, key: { key: 'Shift', code: 'ShiftLeft', windowsVirtualKeyCode: 16, nativeVirtualKeyCode: 16 } },
};

export class Page {
  private requests = 0;
  /** The navigation being waited for, and loads that were seen before their wait began. */
  private loading: { loaderId: string; done(err?: Error): void } | null = null;
  private readonly loaded = new Set<string>();
  private closed = false;
  /** Its out-of-process frames' sessions (their renderers' CPU is the page's too). */
  readonly frames = new Set<CdpSession>();

  constructor(
    readonly targetId: string,
    private readonly session: CdpSession,
    private readonly browserSession: CdpSession,
  ) {
    session.on('Page.lifecycleEvent', (e) => {
      if (e.name !== 'load' || e.frameId !== targetId) return;
      const loaderId = e.loaderId as string;
      if (this.loading?.loaderId === loaderId) this.loading.done();
      else this.loaded.add(loaderId);
    });
    session.onDetach(() => this.loading?.done(new CdpError('The page closed while loading')));
  }

  /**
   * CPU time the page's renderer process has used since it started (seconds, every thread: the
   * document's, workers', worklets', media's), plus its out-of-process frames' renderers'. Chromium
   * answers this within milliseconds while a script spins, where an evaluation waits for the script.
   */
  async cpuSeconds(): Promise<number> {
    const times = await Promise.all([this.session, ...this.frames].map((s, i) => processTime(s).catch((err: unknown) => {
      if (i === 0) throw err;
      return 0; // a frame that went meanwhile
    })));
    return times.reduce((a, b) => a + b, 0);
  }

  /** Subresource requests since the last navigation. */
  countRequest(): number {
    return ++this.requests;
  }

  /** Navigates and waits for the load event; rejects if the navigation fails or the page goes. */
  async goto(url: string): Promise<void> {
    this.requests = 0;
    this.loaded.clear();
    const { loaderId, errorText } = await this.session.send<{ loaderId?: string; errorText?: string }>('Page.navigate', { url });
    if (errorText) throw new CdpError(`${errorText} at ${url}`);
    if (!loaderId || this.loaded.has(loaderId)) return; // same-document navigation, or already loaded
    await new Promise<void>((resolve, reject) => {
      this.loading = {
        loaderId,
        done: (err) => {
          this.loading = null;
          if (err) reject(err);
          else resolve();
        },
      };
    });
  }

  /** The value of a JavaScript expression in the page (a promise is awaited); a thrown error rejects. */
  async evaluate<T>(expression: string): Promise<T> {
    const answer = await this.session.send<{ result: { value?: T }; exceptionDetails?: { text: string; exception?: { description?: string } } }>('Runtime.evaluate', {
      expression, returnByValue: true, awaitPromise: true,
    });
    if (answer.exceptionDetails) {
      const d = answer.exceptionDetails;
      throw new Error(d.exception?.description?.split('\n')[0] ?? d.text);
    }
    return answer.result.value as T;
  }

  /** A screenshot of `clip` (document coordinates, CSS px) scaled by clip.scale, as the image's bytes. */
  async screenshot(clip: { x: number; y: number; width: number; height: number; scale: number }, format: 'webp' | 'png', quality: number): Promise<Buffer> {
    const { data } = await this.session.send<{ data: string }>('Page.captureScreenshot', { format, ...(format === 'webp' ? { quality } : {}), clip, fromSurface: true, captureBeyondViewport: false });
    return Buffer.from(data, 'base64');
  }

  /** No script runs in the page's documents from now on. */
  async disableScripts(): Promise<void> {
    await this.session.send('Emulation.setScriptExecutionDisabled', { value: true });
  }

  /** The page as a PDF, as Chromium prints it: A4, backgrounds, tagged (structure for assistive technology) and with an outline of its headings. */
  async printToPdf(): Promise<Buffer> {
    const { data } = await this.session.send<{ data: string }>('Page.printToPDF', {
      paperWidth: 8.27, paperHeight: 11.69, marginTop: 0.6, marginBottom: 0.6, marginLeft: 0.6, marginRight: 0.6,
      printBackground: true, generateTaggedPDF: true, generateDocumentOutline: true, preferCSSPageSize: false,
    });
    return Buffer.from(data, 'base64');
  }

  /** Key down and up together, the way a person's press arrives; each key's events in one round trip. */
  async press(key: Key): Promise<void> {
    const shifted = key === 'Shift+Tab';
    const main = KEYS[shifted ? 'Tab' : key];
    const modifiers = shifted ? SHIFT : 0;
    const events: CdpParams[] = [
      ...(shifted ? [{ type: 'rawKeyDown', ...KEYS.Shift, modifiers: SHIFT }] : []),
      { type: 'rawKeyDown', ...main, modifiers },
      { type: 'keyUp', ...main, modifiers },
      ...(shifted ? [{ type: 'keyUp', ...KEYS.Shift, modifiers: 0 }] : []),
    ];
    await Promise.all(events.map((e) => this.session.send('Input.dispatchKeyEvent', e)));
  }

  /**
   * A key with modifiers held, as a page's help text advertises it ("Ctrl+M", "Alt+F4"): `key` is a
   * letter, a digit, F1–F12 or Escape.
   */
  async pressChord(modifiers: readonly Modifier[], key: string): Promise<void> {
    const bits = modifiers.reduce((sum, m) => sum | MODIFIERS[m].bit, 0);
    const upper = key.toUpperCase();
    const main = /^[A-Z]$/.test(upper) ? { key: bits & ~SHIFT ? key.toLowerCase() : key, code: `Key${upper}`, windowsVirtualKeyCode: upper.charCodeAt(0), nativeVirtualKeyCode: upper.charCodeAt(0) }
      : /^[0-9]$/.test(key) ? { key, code: `Digit${key}`, windowsVirtualKeyCode: key.charCodeAt(0), nativeVirtualKeyCode: key.charCodeAt(0) }
        : /^F([1-9]|1[0-2])$/.test(upper) ? { key: upper, code: upper, windowsVirtualKeyCode: 111 + Number(upper.slice(1)), nativeVirtualKeyCode: 111 + Number(upper.slice(1)) }
          : KEYS.Escape;
    const events: CdpParams[] = [
      ...modifiers.map((m) => ({ type: 'rawKeyDown', ...MODIFIERS[m].key, modifiers: bits })),
      { type: 'rawKeyDown', ...main, modifiers: bits },
      { type: 'keyUp', ...main, modifiers: bits },
      ...modifiers.map((m) => ({ type: 'keyUp', ...MODIFIERS[m].key, modifiers: 0 })),
    ];
    for (const e of events) await this.session.send('Input.dispatchKeyEvent', e);
  }

  async setViewport({ width, height }: Viewport): Promise<void> {
    await this.session.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false });
  }

  /** Closes the page without running its unload handlers; a page stuck in a script goes too. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.browserSession.send('Target.closeTarget', { targetId: this.targetId }).catch(() => undefined);
  }
}

/** A browser that could not be started; `output` is the end of what it printed (why, often). */
export class LaunchError extends Error {
  constructor(message: string, readonly output: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'LaunchError';
  }
}

/** The pipe fds of a child started with --remote-debugging-pipe: 3 for commands, 4 for answers. */
const pipesOf = (child: ChildProcess) => ({ out: child.stdio[3] as Writable, input: child.stdio[4] as Readable });

export async function launchBrowser(options: { executablePath: string; args: readonly string[]; timeoutMs: number }): Promise<Browser> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'pactum-chromium-'));
  const child = spawn(options.executablePath, [...options.args, `--user-data-dir=${userDataDir}`, '--remote-debugging-pipe', '--no-startup-window'], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
    // Its own process group, so that closing it takes its helpers (renderers, zygotes) too.
    detached: true,
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-2000); });
  const { out, input } = pipesOf(child);
  const connection = new CdpConnection(out, input);
  const killGroup = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  // The server's exit takes the browser with it.
  process.once('exit', killGroup);
  // 'exit' once it ran; 'error' alone when it could not be started at all (not found, not executable).
  const exited = new Promise<void>((resolve) => {
    const gone = (err?: Error) => {
      child.off('exit', onExit);
      child.off('error', gone);
      process.off('exit', killGroup);
      connection.close(new CdpError(err ? `could not be started: ${err.message}` : 'The browser exited'));
      killGroup(); // its helpers, if the browser went alone
      rmSync(userDataDir, { recursive: true, force: true });
      resolve();
    };
    const onExit = () => gone();
    child.once('exit', onExit);
    child.once('error', gone);
  });

  let version: string;
  try {
    version = (await withTimeout(connection.browser.send<{ product: string }>('Browser.getVersion'), options.timeoutMs, 'did not answer')).product.replace(/^HeadlessChrome\//, 'Chrome/');
    // Every new page is attached paused, so it is set up before its first document runs.
    await connection.browser.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: true });
  } catch (err) {
    killGroup();
    await exited;
    const why = stderr.trim().split('\n').filter(Boolean).at(-1);
    throw new LaunchError(`${(err as Error).message}${why ? ` (${why})` : ''}`, stderr, { cause: err });
  }

  /**
   * Pages are attached automatically, and the attach may arrive before Target.createTarget's
   * answer: whichever comes second completes the pair. A page the browser opens itself (a popup,
   * which has an opener) is closed: a scan checks the pages it navigates to, nothing else.
   */
  const waiting = new Map<string, (session: CdpSession) => void>();
  const early = new Map<string, CdpSession>();
  const attachedPage = (targetId: string) =>
    new Promise<CdpSession>((resolve) => {
      const session = early.get(targetId);
      if (session) {
        early.delete(targetId);
        resolve(session);
      } else waiting.set(targetId, resolve);
    });
  /** The options of each open context, for the workers its pages start at browser level. */
  const contexts = new Map<string, ContextOptions>();
  connection.browser.on('Target.attachedToTarget', (e) => {
    const info = e.targetInfo as { targetId: string; type: string; openerId?: string; browserContextId?: string };
    const session = connection.session(e.sessionId as string);
    if (REFUSED_TARGETS.has(info.type)) {
      refuse(connection.browser, session, info);
      contexts.get(info.browserContextId ?? '')?.onRefused?.(info.type);
    } else if (info.type === 'page' && !info.openerId) {
      const waiter = waiting.get(info.targetId);
      waiting.delete(info.targetId);
      if (waiter) waiter(session);
      else early.set(info.targetId, session);
      session.onDetach(() => early.delete(info.targetId));
    } else if (info.type === 'page') {
      void connection.browser.send('Target.closeTarget', { targetId: info.targetId }).catch(() => undefined);
    } else {
      // The browser's own targets: left paused, they would wait forever.
      void session.send('Runtime.runIfWaitingForDebugger').catch(() => undefined);
    }
  });

  return {
    pid: child.pid!,
    version,
    isConnected: () => !connection.closed,
    onDisconnected: (listener) => connection.onClose(listener),
    async newContext(ctx) {
      const { browserContextId } = await connection.browser.send<{ browserContextId: string }>('Target.createBrowserContext', { disposeOnDetach: true });
      contexts.set(browserContextId, ctx);
      await connection.browser.send('Browser.setDownloadBehavior', { behavior: 'deny', browserContextId });
      return {
        async newPage() {
          // A window of its own: a key a page leaves unhandled goes to the browser's shortcuts, and
          // Escape there stops the loading of the window's active tab, which in a shared window
          // could be another page of the scan (chromium-pages.test.ts).
          const { targetId } = await connection.browser.send<{ targetId: string }>('Target.createTarget', { url: 'about:blank', browserContextId, newWindow: true });
          const session = await withTimeout(attachedPage(targetId), options.timeoutMs, 'did not attach the new page').finally(() => waiting.delete(targetId));
          const page = new Page(targetId, session, connection.browser);
          await setUpTarget(session, page, ctx, true, connection.browser);
          return page;
        },
        async close() {
          contexts.delete(browserContextId);
          await connection.browser.send('Target.disposeBrowserContext', { browserContextId });
        },
      };
    },
    async close() {
      if (!connection.closed) await withTimeout(connection.browser.send('Browser.close'), 5000, 'did not close').catch(() => undefined);
      killGroup();
      await exited;
    },
  };
}

/**
 * Before a target (the page, or one of its out-of-process frames) runs: requests intercepted, the
 * init script registered, dialogs dismissed, frames of its own attached the same way, and the
 * context's viewport, user agent and focus.
 */
async function setUpTarget(session: CdpSession, page: Page, ctx: ContextOptions, isPage: boolean, browser: CdpSession): Promise<void> {
  session.on('Fetch.requestPaused', (e) => void ctx.onRequest(pausedRequest(session, page, e)).catch(() => undefined));
  session.on('Page.javascriptDialogOpening', () => void session.send('Page.handleJavaScriptDialog', { accept: false }).catch(() => undefined));
  session.on('Target.attachedToTarget', (e) => {
    const info = e.targetInfo as { targetId: string; type: string };
    const child = session.session(e.sessionId as string);
    if (info.type === 'iframe') {
      page.frames.add(child);
      child.onDetach(() => page.frames.delete(child));
      void setUpTarget(child, page, ctx, false, browser).catch(() => undefined);
    } else {
      // Nothing but frames runs inside a page: workers and whatever else it starts are stopped.
      refuse(browser, child, info);
      ctx.onRefused?.(info.type);
    }
  });
  const setUp = [
    // Its CPU time, for the engine's budget (Page.cpuSeconds).
    session.send('Performance.enable'),
    session.send('Page.enable'),
    session.send('Fetch.enable', { patterns: [{ urlPattern: '*', requestStage: 'Request' }] }),
    session.send('Page.addScriptToEvaluateOnNewDocument', { source: ctx.initScript }),
    session.send('Page.setBypassCSP', { enabled: true }),
    session.send('Emulation.setUserAgentOverride', { userAgent: ctx.userAgent }),
    session.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: true }),
  ];
  if (isPage) {
    await Promise.all([
      ...setUp,
      session.send('Page.setLifecycleEventsEnabled', { enabled: true }),
      session.send('Emulation.setDeviceMetricsOverride', { ...ctx.viewport, deviceScaleFactor: 1, mobile: false }),
      // Every page acts as the focused one, as in a window of its own: focus styles and events.
      session.send('Emulation.setFocusEmulationEnabled', { enabled: true }),
    ]);
  } else {
    // A frame goes on even if part of its set-up was refused (it may have gone meanwhile): one
    // left paused would hold its page's load event until the deadline. Requests that escape
    // interception reach the drop-everything proxy.
    await Promise.allSettled(setUp);
  }
  await session.send('Runtime.runIfWaitingForDebugger');
}

/**
 * Stops a target that was attached paused (waiting for the debugger), before its first line runs;
 * it is never resumed. A dedicated worker cannot be closed through the protocol, so it is asked
 * to close itself: its global scope's close(), evaluated before any of its own code, ends it.
 * Others are closed as targets. One that refuses both stays paused, which costs no CPU.
 */
function refuse(browser: CdpSession, session: CdpSession, info: { targetId: string; type: string }): void {
  const closeItself = () => session.send('Runtime.evaluate', { expression: 'close()' });
  const stopped = info.type === 'worker' ? closeItself() : browser.send('Target.closeTarget', { targetId: info.targetId }).catch(closeItself);
  void stopped.catch(() => undefined);
}

/** The ProcessTime metric of a target's renderer (Performance.enable was sent at its set-up). */
async function processTime(session: CdpSession): Promise<number> {
  const { metrics } = await session.send<{ metrics: { name: string; value: number }[] }>('Performance.getMetrics');
  const time = metrics.find((m) => m.name === 'ProcessTime')?.value;
  if (time === undefined) throw new CdpError('Chromium reported no ProcessTime metric');
  return time;
}

function pausedRequest(session: CdpSession, page: Page, e: CdpParams): PausedRequest {
  const request = e.request as { url: string; urlFragment?: string; method: string; headers: Record<string, string> };
  const requestId = e.requestId as string;
  return {
    url: request.url + (request.urlFragment ?? ''),
    method: request.method,
    headers: request.headers,
    isPageDocument: e.resourceType === 'Document' && e.frameId === page.targetId,
    page,
    // The headers are the ones subresources.ts passes on (no length, no encoding): Chromium takes
    // the body's length from the body.
    async fulfill({ status, headers, body }) {
      await session.send('Fetch.fulfillRequest', {
        requestId,
        responseCode: status,
        responseHeaders: Object.entries(headers).map(([name, value]) => ({ name, value })),
        body: (typeof body === 'string' ? Buffer.from(body) : body).toString('base64'),
      });
    },
    async fail(reason) {
      await session.send('Fetch.failRequest', { requestId, errorReason: reason });
    },
  };
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new CdpError(`Chromium ${what} within ${Math.round(ms / 1000)} s`)), ms);
    work.then(
      (v) => { clearTimeout(timer); resolve(v); },
      (err: unknown) => { clearTimeout(timer); reject(err); },
    );
  });
}
