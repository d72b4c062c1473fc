/** A port for a server that must know its address before it listens (a cluster host advertising itself, PostgreSQL's `-p`). */
import { createServer } from 'node:net';

/** A port free on 127.0.0.1 a moment ago (another process may take it before it is used: callers that can, retry). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
