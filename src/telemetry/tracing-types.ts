/** What telemetry/tracing.ts exposes and telemetry/tracing-otel.ts implements. */
import type { IncomingHttpHeaders } from 'node:http';

export type Attributes = Record<string, string | number | boolean | undefined>;

export interface SpanHandle {
  setName(name: string): void;
  setAttributes(attributes: Attributes): void;
  /** Marks the span failed (its status ERROR, the error's type; never its message, which may carry values). */
  fail(err: unknown): void;
  end(): void;
}

/** A W3C trace context as carried in a message (an MCP request's `params._meta`). */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

export interface SpanOptions {
  /** A trace of its own rather than a child of the current span (work that outlives the request that started it). */
  root?: boolean;
  /**
   * The trace context a message carries: the span joins it (as a child of its parent) instead of
   * the current span. A missing or malformed `traceparent` leaves the current span the parent.
   */
  parent?: TraceCarrier;
}

export interface Tracing {
  inSpan<T>(name: string, attributes: Attributes, fn: (span: SpanHandle) => Promise<T>, options?: SpanOptions): Promise<T>;
  /** A server span continuing the caller's traceparent; `run` runs code inside it. */
  serverSpan(headers: IncomingHttpHeaders, name: string, attributes: Attributes): SpanHandle & { run<T>(fn: () => T): T };
  /** A span in the current context, not made current (ended by whoever holds it). */
  startSpan(name: string, attributes: Attributes): SpanHandle;
  inject(headers: Headers): void;
  shutdown(): Promise<void>;
}
