/**
 * How long a client waits for the opening handshake of a WebSocket: the one default of the
 * client transport (websocket-transport.ts) and of the daemon's socket (bridge-socket.ts, which
 * loads nothing else of this folder: the bridge must start fast).
 */

/** How long the opening handshake of a WebSocket may take by default: 10 s, then the connection fails as a timeout. */
export const defaultHandshakeTimeoutMs = 10_000;
