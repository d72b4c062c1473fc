/**
 * Where `warden serve` listens, as given to `--listen`: a TCP host and port, or a Unix socket.
 * Only loopback is served by default; a wider address has to be written out, and whether an
 * address is loopback is decided here, once.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { resolve as resolvePath } from 'node:path';

/** A parsed `--listen` value. */
export type ListenAddress =
  | {
      readonly kind: 'tcp';
      /** As `net.Server.listen` takes it: an IPv6 address without its brackets. */
      readonly host: string;
      /** 0 asks the system for any free port. */
      readonly port: number;
      /** 127.0.0.0/8, ::1 (also IPv4-mapped) or `localhost`: reachable from this machine only. */
      readonly loopback: boolean;
    }
  | { readonly kind: 'unix'; readonly path: string };

/** The port `warden serve` listens on when `--listen` is not given (8765 is AnkiConnect's). */
export const defaultServePort = 8767;

/** The `--listen` value used when none is given. */
export const defaultListen = `127.0.0.1:${defaultServePort}`;

const forms = `127.0.0.1:PORT, [::1]:PORT, localhost:PORT, HOST:PORT (e.g. 0.0.0.0:${defaultServePort}) or unix:PATH, PORT from 0 (any free port) to 65535`;

// sun_path holds 108 bytes on Linux and 104 on macOS and the BSDs, the final NUL included.
const unixPathMaxBytes = process.platform === 'linux' ? 107 : 103;

/**
 * Parses a `--listen` value. Throws a TypeError naming the value and the forms accepted.
 *
 * @example
 * ```ts
 * parseListenAddress('[::1]:8767'); // { kind: 'tcp', host: '::1', port: 8767, loopback: true }
 * parseListenAddress('unix:/run/user/1000/warden.sock'); // { kind: 'unix', path: '/run/user/1000/warden.sock' }
 * ```
 */
export function parseListenAddress(value: string): ListenAddress {
  const refuse = (why: string): never => {
    throw new TypeError(`--listen ${JSON.stringify(value)}: ${why}; expected ${forms}`);
  };
  if (value.startsWith('unix:')) {
    const path = value.slice('unix:'.length);
    if (path === '') refuse('no socket path after unix:');
    if (path.includes('\0')) refuse('the socket path holds a NUL character');
    if (Buffer.byteLength(path) > unixPathMaxBytes) refuse(`the socket path is ${Buffer.byteLength(path)} bytes, longer than the ${unixPathMaxBytes} a Unix socket address holds here`);
    return { kind: 'unix', path };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) refuse('a listen address has no scheme (write HOST:PORT)');
  const colon = value.lastIndexOf(':');
  if (colon < 0) refuse(/^\d+$/.test(value) ? `no host (write 127.0.0.1:${value} for loopback)` : 'no port');
  const hostText = value.slice(0, colon);
  const portText = value.slice(colon + 1);
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) refuse(portText === '' ? 'no port after the colon' : `port ${JSON.stringify(portText)} is not a number from 0 to 65535`);
  const port = Number(portText);
  if (hostText.startsWith('[') || hostText.endsWith(']')) {
    const inner = hostText.startsWith('[') && hostText.endsWith(']') ? hostText.slice(1, -1) : '';
    if (!isIPv6(inner)) refuse(`${hostText} is not a bracketed IPv6 address`);
    return { kind: 'tcp', host: inner, port, loopback: isLoopback(inner) };
  }
  if (hostText.includes(':')) refuse('an IPv6 address goes in brackets, as in [::1]:PORT');
  if (hostText === '') refuse('no host before the port (write 127.0.0.1:PORT for loopback, 0.0.0.0:PORT for every interface)');
  if (!isIPv4(hostText) && !isHostName(hostText)) refuse(`${JSON.stringify(hostText)} is neither an IP address nor a host name`);
  return { kind: 'tcp', host: hostText, port, loopback: isLoopback(hostText) };
}

/**
 * The URL a client connects to at `address`: `ws://HOST:PORT/acp` (an IPv6 address in
 * brackets), or `ws+unix:///abs/path:/acp`, the form the `ws` package takes for a Unix socket.
 */
export function listenUrl(address: ListenAddress): string {
  if (address.kind === 'unix') return `ws+unix://${resolvePath(address.path)}:/acp`;
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return `ws://${host}:${address.port}/acp`;
}

/** Whether `host` (an IP address without brackets, or a name) reaches this machine only. */
export function isLoopback(host: string): boolean {
  const lower = host.toLowerCase();
  if (lower === 'localhost' || lower === 'localhost.') return true;
  if (isIPv4(lower)) return lower.startsWith('127.');
  if (!isIPv6(lower)) return false;
  // The URL parser writes an IPv6 address in its one canonical form (`0:0::1` is `::1`,
  // `::ffff:127.0.0.1` is `::ffff:7f00:1`).
  const canonical = new URL(`http://[${lower}]/`).hostname.slice(1, -1);
  return canonical === '::1' || /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(canonical);
}

/** RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens. */
function isHostName(text: string): boolean {
  const name = text.endsWith('.') ? text.slice(0, -1) : text;
  return name.length > 0 && name.length <= 253 && name.split('.').every((label) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i.test(label));
}
