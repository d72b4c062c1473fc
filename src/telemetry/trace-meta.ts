/**
 * W3C trace context in ACP's `_meta` (`_meta.traceparent`, `_meta.tracestate`, as OpenTelemetry
 * writes them in HTTP headers) and in an agent's environment (`TRACEPARENT`, `TRACESTATE`),
 * through the propagator the SDK registered.
 */
import { propagation, ROOT_CONTEXT, trace, isSpanContextValid, type Context } from '@opentelemetry/api';

/** The context `meta` carries, or `undefined` when it has no valid `traceparent`. */
export function contextFromMeta(meta: unknown): Context | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined;
  const carrier = meta as Record<string, unknown>;
  if (typeof carrier.traceparent !== 'string') return undefined;
  const strings: Record<string, string> = { traceparent: carrier.traceparent };
  if (typeof carrier.tracestate === 'string') strings.tracestate = carrier.tracestate;
  const context = propagation.extract(ROOT_CONTEXT, strings);
  const span = trace.getSpanContext(context);
  return span && isSpanContextValid(span) ? context : undefined;
}

/** `{ traceparent, tracestate? }` of `context`'s span (empty when it has none). */
export function traceHeadersOf(context: Context): { traceparent?: string; tracestate?: string } {
  const carrier: Record<string, string> = {};
  propagation.inject(context, carrier);
  return { ...(carrier.traceparent ? { traceparent: carrier.traceparent } : {}), ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}) };
}

/** `TRACEPARENT` / `TRACESTATE` for a process started in `context` (the variables OpenTelemetry's environment carrier uses). */
export function traceEnvironmentOf(context: Context): Record<string, string> | undefined {
  const { traceparent, tracestate } = traceHeadersOf(context);
  if (!traceparent) return undefined;
  return { TRACEPARENT: traceparent, ...(tracestate ? { TRACESTATE: tracestate } : {}) };
}
