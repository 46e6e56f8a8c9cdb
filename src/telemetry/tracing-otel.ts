/**
 * The OpenTelemetry SDK behind telemetry/tracing.ts, imported only when OTEL_EXPORTER_OTLP_ENDPOINT is
 * set: spans batched and exported over OTLP/HTTP (JSON) to `${endpoint}/v1/traces`, the context
 * carried through async calls by AsyncLocalStorage, W3C trace context read and written.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { SpanKind, SpanStatusCode, context, propagation, trace, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { Attributes, SpanHandle, Tracing } from './tracing-types.js';

const clean = (a: Attributes) => Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined)) as Record<string, string | number | boolean>;

function handle(span: Span): SpanHandle {
  return {
    setName: (name) => void span.updateName(name),
    setAttributes: (a) => void span.setAttributes(clean(a)),
    fail: (err) => {
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute('error.type', err instanceof Error ? err.name : typeof err);
    },
    end: () => span.end(),
  };
}

export function openTelemetry(endpoint: string, serviceVersion: string): Tracing {
  const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/$/, '')}/v1/traces` });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME || 'pactum', 'service.version': serviceVersion }),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: 1000 })],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer('pactum', serviceVersion);

  return {
    inSpan: (name, attributes, fn, options) =>
      tracer.startActiveSpan(
        name,
        { attributes: clean(attributes), root: options?.root },
        options?.parent?.traceparent ? propagation.extract(context.active(), options.parent) : context.active(),
        async (span) => {
          const h = handle(span);
          try {
            return await fn(h);
          } catch (err) {
            h.fail(err);
            throw err;
          } finally {
            span.end();
          }
        },
      ),
    serverSpan(headers: IncomingHttpHeaders, name, attributes) {
      const parent = propagation.extract(context.active(), headers);
      const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes: clean(attributes) }, parent);
      const active = trace.setSpan(parent, span);
      return { ...handle(span), run: (fn) => context.with(active, fn) };
    },
    startSpan: (name, attributes) => handle(tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes: clean(attributes) })),
    inject(headers: Headers) {
      propagation.inject(context.active(), headers, { set: (carrier, key, value) => carrier.set(key, value) });
    },
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
