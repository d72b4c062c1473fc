/**
 * A `warden serve --agent demo` for the serve benches: spawned from a build in a process group
 * of its own, resolved once it said where it listens and where its token file is; and a raw
 * `ws` client of it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { WebSocket } from 'ws';
import { withDeadline } from './measure.js';

/** Starts `node MAIN serve --listen LISTEN --agent demo ARGS` (default `127.0.0.1:0`); resolves with its URL and token file once it listens. */
export async function startServeDaemon(main: string, env: NodeJS.ProcessEnv, args: readonly string[], listen = '127.0.0.1:0'): Promise<{ url: string; tokenFile: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [main, 'serve', '--listen', listen, '--agent', 'demo', ...args], { stdio: ['ignore', 'ignore', 'pipe'], detached: true, env });
  let stderr = '';
  const url = await withDeadline(
    new Promise<string>((resolve, reject) => {
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
        // Both lines: the token file is written before the second one.
        const found = /token file \S+\n/.test(stderr) ? /listening on (\S+)/.exec(stderr)?.[1] : undefined;
        if (found) resolve(found);
      });
      child.once('exit', () => reject(new Error(`warden serve exited: ${stderr}`)));
    }),
    'warden serve to listen',
  );
  return { url, tokenFile: /token file (\S+)\n/.exec(stderr)?.[1] as string, child };
}

/** Kills a process group started by a bench; a group already gone is no error. */
export function killGroup(child: ChildProcess | undefined): void {
  try {
    if (child?.pid) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // gone
  }
}

/** A frame a bench client of the daemon reads. */
export interface ServeFrame {
  readonly id?: number;
  readonly method?: string;
  readonly params?: { readonly sessionId?: string; readonly update?: { readonly _meta?: Record<string, unknown> }; readonly _meta?: Record<string, unknown> };
  readonly result?: Record<string, unknown>;
  readonly error?: unknown;
}

/** A WebSocket client of the daemon (raw `ws`): requests by id, every frame handed to `listeners`. */
export interface ServeClient {
  readonly socket: WebSocket;
  readonly listeners: Set<(frame: ServeFrame) => void>;
  request(method: string, params: unknown): Promise<ServeFrame>;
  send(message: object): void;
}

/** Opens a {@link ServeClient} on `url` with the bearer `token`. */
export async function serveClient(url: string, token: string): Promise<ServeClient> {
  const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } });
  await withDeadline(once(socket, 'open'), 'the WebSocket to open');
  const listeners = new Set<(frame: ServeFrame) => void>();
  let next = 1;
  socket.on('message', (data: Buffer) => {
    const frame = JSON.parse(data.toString('utf8')) as ServeFrame;
    for (const listener of listeners) listener(frame);
  });
  const send = (message: object) => socket.send(JSON.stringify({ jsonrpc: '2.0', ...message }));
  return {
    socket,
    listeners,
    send,
    request(method, params) {
      const id = next++;
      return withDeadline(
        new Promise<ServeFrame>((resolve) => {
          const listener = (frame: ServeFrame) => {
            if (frame.id !== id || frame.method !== undefined) return;
            listeners.delete(listener);
            resolve(frame);
          };
          listeners.add(listener);
          send({ id, method, params });
        }),
        method,
      );
    },
  };
}
