/**
 * A real OTLP/HTTP receiver on 127.0.0.1 for the telemetry specs: it takes what an exporter
 * POSTs to /v1/traces and /v1/metrics (OTLP JSON, what @opentelemetry/exporter-*-otlp-http
 * send), answers 200 as a collector does, and decodes the spans and the metric points.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An OTLP JSON attribute value. */
type AnyValue = { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean };
type KeyValue = { key: string; value: AnyValue };

/** A span as received, its attributes as plain values. */
export interface ReceivedSpan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly attributes: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly links: ReadonlyArray<{ traceId: string; spanId: string }>;
  readonly status: { code?: number; message?: string };
  readonly service: string | undefined;
}

/** One data point of a metric, as received. */
export interface ReceivedPoint {
  readonly metric: string;
  readonly attributes: Readonly<Record<string, string | number | boolean | undefined>>;
  /** A sum's value. */
  readonly value: number | undefined;
  /** A histogram's count and sum. */
  readonly count: number | undefined;
  readonly sum: number | undefined;
}

/** The receiver. */
export interface OtlpReceiver {
  /** `http://127.0.0.1:PORT`: the value of OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  /** Every metric export's points, in arrival order (cumulative: the last export has the totals). */
  readonly exports: ReceivedPoint[][];
  /** Paths and content types of every request received. */
  readonly requests: Array<{ path: string; contentType: string | undefined }>;
  close(): Promise<void>;
}

const valueOf = (value: AnyValue | undefined) =>
  value?.stringValue ?? (value?.intValue !== undefined ? Number(value.intValue) : undefined) ?? value?.doubleValue ?? value?.boolValue;
const attributesOf = (list: KeyValue[] | undefined) => Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));

/** Starts a receiver on a free port of 127.0.0.1. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const exports: ReceivedPoint[][] = [];
  const requests: Array<{ path: string; contentType: string | undefined }> = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({ path: request.url ?? '', contentType: request.headers['content-type'] });
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      if (request.url === '/v1/traces') spans.push(...decodeSpans(body));
      else if (request.url === '/v1/metrics') exports.push(decodePoints(body));
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    exports,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface JsonSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes?: KeyValue[];
  links?: Array<{ traceId: string; spanId: string }>;
  status?: { code?: number; message?: string };
}

function decodeSpans(body: Record<string, unknown>): ReceivedSpan[] {
  const found: ReceivedSpan[] = [];
  for (const resourceSpans of (body.resourceSpans ?? []) as Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ spans?: JsonSpan[] }> }>) {
    const service = attributesOf(resourceSpans.resource?.attributes)['service.name'];
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        found.push({
          name: span.name,
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId || undefined,
          attributes: attributesOf(span.attributes),
          links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
          status: span.status ?? {},
          service: typeof service === 'string' ? service : undefined,
        });
      }
    }
  }
  return found;
}

interface JsonPoint {
  attributes?: KeyValue[];
  asInt?: number | string;
  asDouble?: number;
  count?: number | string;
  sum?: number;
}

function decodePoints(body: Record<string, unknown>): ReceivedPoint[] {
  const found: ReceivedPoint[] = [];
  for (const resourceMetrics of (body.resourceMetrics ?? []) as Array<{ scopeMetrics?: Array<{ metrics?: Array<{ name: string; sum?: { dataPoints?: JsonPoint[] }; histogram?: { dataPoints?: JsonPoint[] } }> }> }>) {
    for (const scope of resourceMetrics.scopeMetrics ?? []) {
      for (const metric of scope.metrics ?? []) {
        for (const point of metric.sum?.dataPoints ?? []) {
          found.push({ metric: metric.name, attributes: attributesOf(point.attributes), value: point.asInt !== undefined ? Number(point.asInt) : point.asDouble, count: undefined, sum: undefined });
        }
        for (const point of metric.histogram?.dataPoints ?? []) {
          found.push({ metric: metric.name, attributes: attributesOf(point.attributes), value: undefined, count: Number(point.count ?? 0), sum: point.sum });
        }
      }
    }
  }
  return found;
}
