/**
 * A raw TCP WebSocket peer that answers the upgrade and sends frames in the SAME write as its
 * `101`, so that the client reads them together every time (ws then hands them over as the
 * upgrade's head, parsed on the next tick): what a client must not lose before it listens.
 */
import { createHash } from 'node:crypto';
import { createServer, type AddressInfo, type Server } from 'node:net';

/** An unmasked text frame (a server's), FIN set. */
function textFrame(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  const header = payload.length < 126 ? Buffer.from([0x81, payload.length]) : Buffer.from([0x81, 126, payload.length >> 8, payload.length & 0xff]);
  return Buffer.concat([header, payload]);
}

/** A TCP peer that answers the upgrade and sends `frames` in the same write; it answers a close frame with one. */
export async function eagerPeer(frames: readonly string[]): Promise<{ url: string; server: Server }> {
  const server = createServer((socket) => {
    let request = '';
    let upgraded = false;
    socket.on('data', (chunk: Buffer) => {
      if (upgraded) {
        // The bridge sends nothing but its close (no stdin lines, no pings): answer it, end.
        if (((chunk[0] ?? 0) & 0x0f) === 0x08) socket.end(Buffer.from([0x88, 0x02, 0x03, 0xe8]));
        return;
      }
      request += chunk.toString('latin1');
      if (!request.includes('\r\n\r\n')) return;
      upgraded = true;
      const key = /^sec-websocket-key:\s*(\S+)/imu.exec(request)?.[1] ?? '';
      const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
      const answer = `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`;
      socket.write(Buffer.concat([Buffer.from(answer, 'latin1'), ...frames.map(textFrame)]));
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/acp`, server };
}
