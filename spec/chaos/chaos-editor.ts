/**
 * The chaos suite's editor: raw JSON-RPC over a transport, keeping a ledger of every request
 * it sent and every response that came back, so that "settled exactly once" is checked on
 * the wire (a duplicate or unsolicited response is seen, not hidden by a connection that
 * drops it). Session updates are kept per session: they are what the host acknowledged,
 * and the journal must still have them after any recovery.
 */
import { allowOnce } from '../../src/acp/permission-choice.js';
import type { JsonRpcId, Transport } from '../../src/jsonrpc/index.js';

/** One request the editor sent, and what came back for it. */
export interface LedgerEntry {
  readonly id: number;
  readonly method: string;
  readonly sessionId: string | undefined;
  /** Responses received with this id: exactly one once settled. */
  responses: number;
  outcome: { readonly result: unknown } | { readonly error: { code: number; message: string; data?: unknown } } | undefined;
  readonly settled: Promise<void>;
}

/** A permission request from the agent, waiting for the editor's answer. */
export interface PermissionAsk {
  readonly id: JsonRpcId;
  readonly sessionId: string;
  readonly options: ReadonlyArray<{ optionId: string; kind: string }>;
}

export class ChaosEditor {
  readonly ledger = new Map<number, LedgerEntry>();
  /** Responses whose id the editor never sent (must stay empty). */
  readonly unsolicited: unknown[] = [];
  readonly updates = new Map<string, unknown[]>();
  /** Per session, the journal seq of each update received (`_meta["acp-warden/seq"]`; undefined: none), in order. */
  readonly seqs = new Map<string, Array<number | undefined>>();
  /** Permission requests held unanswered (sessions in `holdPermissions`). */
  readonly heldPermissions: PermissionAsk[] = [];
  /** Sessions whose permission requests wait for the test instead of being allowed at once. */
  readonly holdPermissions = new Set<string>();
  permissionsAsked = 0;
  closed = false;
  #nextId = 1;
  #resolvers = new Map<number, () => void>();
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
    transport.start({
      message: (value) => this.#receive(value as Record<string, unknown>),
      malformed: (preview) => this.unsolicited.push({ malformed: preview }),
      closed: () => {
        this.closed = true;
      },
    });
  }

  /** Sends a request; the returned entry settles when its (first) response arrives. */
  send(method: string, params: Record<string, unknown>): LedgerEntry {
    const id = this.#nextId++;
    let resolve!: () => void;
    const settled = new Promise<void>((done) => (resolve = done));
    const entry: LedgerEntry = { id, method, sessionId: typeof params.sessionId === 'string' ? params.sessionId : undefined, responses: 0, outcome: undefined, settled };
    this.ledger.set(id, entry);
    this.#resolvers.set(id, resolve);
    this.#transport.send({ jsonrpc: '2.0', id, method, params });
    return entry;
  }

  /** Sends a request and waits for its result; rejects with the JSON-RPC error. */
  async request(method: string, params: Record<string, unknown>): Promise<unknown> {
    const entry = this.send(method, params);
    await entry.settled;
    if (entry.outcome && 'error' in entry.outcome) throw Object.assign(new Error(`${method}: ${entry.outcome.error.message}`), { rpc: entry.outcome.error });
    return entry.outcome?.result;
  }

  notify(method: string, params: Record<string, unknown>): void {
    this.#transport.send({ jsonrpc: '2.0', method, params });
  }

  /** Answers a held permission request with its allow_once option (by kind: Claude and Codex list allow_always first), else cancelled. */
  allow(ask: PermissionAsk): void {
    this.#transport.send({ jsonrpc: '2.0', id: ask.id, result: { outcome: allowOnce(ask.options) } });
  }

  releasePermissions(sessionId?: string): void {
    for (const ask of [...this.heldPermissions]) {
      if (sessionId !== undefined && ask.sessionId !== sessionId) continue;
      this.heldPermissions.splice(this.heldPermissions.indexOf(ask), 1);
      this.allow(ask);
    }
  }

  pending(): LedgerEntry[] {
    return [...this.ledger.values()].filter((entry) => entry.responses === 0);
  }

  close(): void {
    this.#transport.close();
  }

  #receive(message: Record<string, unknown>): void {
    if (typeof message.method === 'string') {
      const params = (message.params ?? {}) as Record<string, unknown>;
      if (message.id === undefined) {
        if (message.method === 'session/update' && typeof params.sessionId === 'string') {
          const list = this.updates.get(params.sessionId) ?? [];
          list.push(params.update);
          this.updates.set(params.sessionId, list);
          const seq = (params._meta as Record<string, unknown> | undefined)?.['acp-warden/seq'];
          const seqs = this.seqs.get(params.sessionId) ?? [];
          seqs.push(typeof seq === 'number' ? seq : undefined);
          this.seqs.set(params.sessionId, seqs);
        }
        return;
      }
      if (message.method === 'session/request_permission') {
        this.permissionsAsked++;
        const ask: PermissionAsk = { id: message.id as JsonRpcId, sessionId: String(params.sessionId), options: (params.options ?? []) as PermissionAsk['options'] };
        if (this.holdPermissions.has(ask.sessionId)) this.heldPermissions.push(ask);
        else this.allow(ask);
        return;
      }
      this.#transport.send({ jsonrpc: '2.0', id: message.id as JsonRpcId, error: { code: -32601, message: `the chaos editor does not serve ${message.method}` } });
      return;
    }
    const entry = typeof message.id === 'number' ? this.ledger.get(message.id) : undefined;
    if (!entry) {
      this.unsolicited.push(message);
      return;
    }
    entry.responses++;
    if (entry.responses === 1) {
      entry.outcome = 'error' in message ? { error: message.error as { code: number; message: string } } : { result: message.result };
      this.#resolvers.get(entry.id)?.();
      this.#resolvers.delete(entry.id);
    }
  }
}
