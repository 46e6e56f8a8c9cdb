/**
 * Traces, when OTEL_EXPORTER_OTLP_ENDPOINT is set: the OpenTelemetry SDK (tracing-otel.ts) is
 * imported then, and only then, so a server without tracing loads none of it and its idle memory
 * does not grow. Everything here is a no-op until startTracing has run.
 *
 * Spans: the HTTP operation (named by its operationId, continuing a client's W3C traceparent),
 * the MCP tool (joining the trace context of the request's `params._meta` when it carries one), database queries, storage calls, and a scan (a trace of its own) with its pages. The trace context goes out
 * only on calls to connected services (injectTraceContext); scanned sites never receive it.
 */
import type { IncomingHttpHeaders } from 'node:http';

import type { Attributes, SpanHandle, SpanOptions, TraceCarrier, Tracing } from './tracing-types.js';

export type { Attributes, SpanHandle, SpanOptions, TraceCarrier, Tracing };

const NO_SPAN: SpanHandle = { setName() {}, setAttributes() {}, fail() {}, end() {} };

let tracing: Tracing | null = null;
let users = 0;

export const tracingOn = () => tracing !== null;

/** Starts the SDK (once per process; each server that starts it stops it). */
export async function startTracing(endpoint: string, serviceVersion: string): Promise<void> {
  users++;
  if (tracing) return;
  const { openTelemetry } = await import('./tracing-otel.js');
  tracing = openTelemetry(endpoint, serviceVersion);
}

/** Sends what is left and stops, once the last server that started it stops. */
export async function stopTracing(): Promise<void> {
  if (!tracing || --users > 0) return;
  const t = tracing;
  tracing = null;
  await t.shutdown();
}

export function inSpan<T>(name: string, attributes: Attributes, fn: (span: SpanHandle) => Promise<T>, options?: SpanOptions): Promise<T> {
  return tracing ? tracing.inSpan(name, attributes, fn, options) : fn(NO_SPAN);
}

export function serverSpan(headers: IncomingHttpHeaders, name: string, attributes: Attributes) {
  return tracing?.serverSpan(headers, name, attributes) ?? null;
}

export function startSpan(name: string, attributes: Attributes): SpanHandle {
  return tracing ? tracing.startSpan(name, attributes) : NO_SPAN;
}

/** Adds traceparent (and tracestate) of the current span to an outbound request's headers. */
export function injectTraceContext(headers: Headers): void {
  tracing?.inject(headers);
}

/**
 * `target` with each of `methods` (those returning promises) run in a span `${prefix} ${method}`.
 * Returned as is when tracing is off.
 */
export function traced<T extends object>(target: T, prefix: string, methods: readonly (keyof T & string)[], attributes: Attributes = {}): T {
  if (!tracing) return target;
  const copy = { ...target };
  for (const m of methods) {
    const original = target[m];
    if (typeof original !== 'function') continue;
    (copy as Record<string, unknown>)[m] = (...args: unknown[]) => inSpan(`${prefix} ${m}`, attributes, () => Promise.resolve((original as (...a: unknown[]) => unknown).apply(target, args)));
  }
  return copy;
}
