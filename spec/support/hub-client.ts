/**
 * A client of a host's hub for tests: our own JSON-RPC connection over an in-memory pair,
 * attached with `hub.attach`, recording every update (with its seq) and every request the agent
 * sends it. `close()` drops the connection as a client that goes away would.
 */
import { createActor } from 'xstate';
import {
  connectionLogic,
  createMemoryTransportPair,
  respond,
  sendNotification,
  sendRequest,
  type ConnectionEmitted,
} from '../../src/jsonrpc/index.js';
import type { ServeHub } from '../../src/runtime/host.js';

export interface HubUpdate {
  readonly sessionId: string;
  readonly seq: number | undefined;
  readonly update: { sessionUpdate: string; [key: string]: unknown };
}

export interface HubClient {
  request(method: string, params?: unknown): Promise<unknown>;
  notify(method: string, params?: unknown): void;
  readonly updates: HubUpdate[];
  readonly clientRequests: Array<{ id: string | number; method: string; params: unknown }>;
  answerClient(id: string | number, result: unknown): void;
  /** Resolves once `check` holds (polled on every message, and every 20 ms), rejects after `ms`. */
  until(check: () => boolean | Promise<boolean>, what: string, ms?: number): Promise<void>;
  close(): void;
  readonly server: ReturnType<ServeHub['attach']>;
}

export async function attachClient(hub: ServeHub, name = 'test-client'): Promise<HubClient> {
  const [clientSide, hubSide] = createMemoryTransportPair();
  const server = hub.attach(hubSide, { peer: name });
  const connection = createActor(connectionLogic, { input: { transport: clientSide } }).start();
  const updates: HubUpdate[] = [];
  const clientRequests: HubClient['clientRequests'] = [];
  connection.on('rpc.notification', (event: Extract<ConnectionEmitted, { type: 'rpc.notification' }>) => {
    if (event.method !== 'session/update') return;
    const params = event.params as { sessionId: string; update: HubUpdate['update']; _meta?: Record<string, unknown> };
    const seq = params._meta?.['acp-warden/seq'];
    updates.push({ sessionId: params.sessionId, update: params.update, seq: typeof seq === 'number' ? seq : undefined });
  });
  connection.on('rpc.request', (event: Extract<ConnectionEmitted, { type: 'rpc.request' }>) => clientRequests.push({ id: event.id, method: event.method, params: event.params }));
  const client: HubClient = {
    server,
    updates,
    clientRequests,
    request: (method, params = {}) => sendRequest(connection, method, params),
    notify: (method, params = {}) => sendNotification(connection, method, params),
    answerClient: (id, result) => respond(connection, id, result),
    until: (check, what, ms = 15_000) =>
      new Promise<void>((resolve, reject) => {
        const started = Date.now();
        const poll = async () => {
          if (await check()) return resolve();
          if (Date.now() - started > ms) return reject(new Error(`timed out waiting for ${what}`));
          setTimeout(() => void poll().catch(reject), 20);
        };
        void poll().catch(reject);
      }),
    close: () => {
      // As a socket that drops: the hub's side sees its peer gone.
      clientSide.close();
      connection.stop();
    },
  };
  await client.request('initialize', { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } }, clientInfo: { name, version: '0' } });
  return client;
}
