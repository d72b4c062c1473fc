/**
 * CORS for the Streamable HTTP endpoint: what lets a page from an origin the user listed
 * (`--allow-origin`) use `/acp` with `fetch`, as it may open a WebSocket. A browser sends a
 * preflight (`OPTIONS`, no credentials) before a request with `Authorization` or the `Acp-*`
 * headers, and shows a page only the answers that name its origin. Other origins get nothing
 * of this: their requests are refused 403 before any header is added (access.ts).
 */
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';

/** How long a browser may keep a preflight's answer, in seconds. */
const preflightMaxAgeSeconds = 600;

/** The headers that let the page of an allowed `Origin` read an answer (none for a request without `Origin`). */
export function corsHeaders(request: IncomingMessage): OutgoingHttpHeaders {
  const origin = request.headers.origin;
  if (origin === undefined) return {};
  return {
    'Access-Control-Allow-Origin': origin,
    // The SDK's client sends cookies (`credentials: 'include'`): the browser then wants this, and the origin named, never `*`.
    'Access-Control-Allow-Credentials': 'true',
    'Access-Control-Expose-Headers': 'Acp-Connection-Id',
    Vary: 'Origin',
  };
}

/** The answer to the preflight of an allowed origin: which methods and headers `/acp` takes. */
export function preflightHeaders(request: IncomingMessage): OutgoingHttpHeaders {
  return {
    ...corsHeaders(request),
    'Access-Control-Allow-Methods': 'GET, POST, DELETE',
    'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept, Acp-Connection-Id, Acp-Session-Id',
    'Access-Control-Max-Age': String(preflightMaxAgeSeconds),
  };
}

/** Whether `request` is a browser's preflight (an `OPTIONS` with `Origin` and `Access-Control-Request-Method`). */
export function isPreflight(request: IncomingMessage): boolean {
  return request.method === 'OPTIONS' && request.headers.origin !== undefined && request.headers['access-control-request-method'] !== undefined;
}
