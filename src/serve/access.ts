/**
 * Who may open a WebSocket on `warden serve`: decided on the HTTP upgrade request, before any
 * ACP message is read. The path must be `/acp`; a browser page's `Origin` must be one the user
 * listed (`--allow-origin`), checked before the token so that a page learns nothing about it;
 * then `Authorization: Bearer <token>` must match the daemon's token.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

/** The WebSocket endpoint's path (the ACP transport RFD's single `/acp`). */
export const acpPath = '/acp';

/** What an upgrade is checked against. */
export interface AccessPolicy {
  /** The daemon's bearer token. */
  readonly token: string;
  /** Browser origins allowed (`--allow-origin`), e.g. `https://editor.example`; requests without `Origin` need none. */
  readonly allowOrigins: readonly string[];
}

/** An upgrade refused: the HTTP response to answer it with. */
export interface AccessRefusal {
  readonly ok: false;
  readonly status: 401 | 403 | 404;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The verdict on an upgrade request. */
export type AccessResult = { readonly ok: true } | AccessRefusal;

const bearerChallenge = 'Bearer realm="acp-warden"';
const howToAuthorize = 'send the header "Authorization: Bearer <token>" with the content of the daemon\'s token file (warden serve prints its path; --token-file)\n';

/**
 * Checks an upgrade request's path, origin and bearer token against `policy`. The token is
 * compared in constant time, whatever the length of the one sent.
 *
 * @example
 * ```ts
 * server.on('upgrade', (request, socket, head) => {
 *   const access = checkUpgrade(request, { token, allowOrigins });
 *   if (!access.ok) return rejectUpgrade(socket, access);
 *   sockets.handleUpgrade(request, socket, head, (ws) => accept(ws));
 * });
 * ```
 */
export function checkUpgrade(request: IncomingMessage, policy: AccessPolicy): AccessResult {
  const path = new URL(request.url ?? '/', 'http://warden.invalid').pathname;
  if (path !== acpPath) return refusal(404, {}, `not found: warden serve takes WebSocket connections at ${acpPath} only\n`);
  const origin = request.headers.origin;
  if (origin !== undefined && !policy.allowOrigins.some((allowed) => sameOrigin(allowed, origin))) {
    return refusal(403, {}, `origin ${origin} is not allowed: browser pages are refused unless warden serve is started with --allow-origin ${origin}\n`);
  }
  const sent = bearerToken(request.headers.authorization);
  if (sent === undefined) return refusal(401, { 'WWW-Authenticate': bearerChallenge }, `unauthorized: no bearer token; ${howToAuthorize}`);
  if (!tokensMatch(sent, policy.token)) return refusal(401, { 'WWW-Authenticate': `${bearerChallenge}, error="invalid_token"` }, `unauthorized: the bearer token does not match; ${howToAuthorize}`);
  return { ok: true };
}

/**
 * Answers a refused upgrade on its raw socket (there is no `ServerResponse` in an `'upgrade'`
 * handler) and closes the connection once the answer is written.
 */
export function rejectUpgrade(socket: Duplex, refused: AccessRefusal): void {
  socket.on('error', () => socket.destroy()); // a peer gone before the answer is no error of ours
  if (!socket.writable) return void socket.destroy();
  const headers = {
    Connection: 'close',
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(refused.body)),
    ...refused.headers,
  };
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.once('finish', () => socket.destroy());
  socket.end(`HTTP/1.1 ${refused.status} ${STATUS_CODES[refused.status]}\r\n${head}\r\n${refused.body}`);
}

function refusal(status: AccessRefusal['status'], headers: Record<string, string>, body: string): AccessRefusal {
  return { ok: false, status, headers, body };
}

/** The token of an `Authorization: Bearer <token>` header (the scheme is case-insensitive, RFC 9110). */
function bearerToken(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header);
  return match?.[1];
}

/** Equal digests of equal length: the time taken says nothing of where, or whether, they differ. */
function tokensMatch(sent: string, token: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(sent), digest(token));
}

/** Origins compare as the browser serializes them: scheme, host and port, lower case, no path. */
function sameOrigin(allowed: string, origin: string): boolean {
  return serializedOrigin(allowed) === serializedOrigin(origin);
}

function serializedOrigin(text: string): string {
  try {
    const origin = new URL(text.trim()).origin;
    if (origin !== 'null') return origin;
  } catch {
    // not a URL: compared as written
  }
  return text.trim().toLowerCase();
}
