/**
 * Routing (docs/cluster.md, "Routing"): a client connected to a host that does not own its
 * session is served by the owner through this host. One {@link Forwarding} per client
 * connection keeps a link (peer-link.ts) per owner host it forwards to, opened at the first
 * `session/load` or `session/resume` refused here because a live host owns the session (or the
 * first `session/new` placed on another host: placement.ts), and relays that session's traffic
 * both ways:
 *
 * - the client's requests for the session (`session/prompt`, set mode or config, close, the
 *   hub's extensions naming it, a later resume), `session/cancel` and `$/cancel_request`, and its
 *   answers to the agent's requests, go to the owner as they came;
 * - the owner's answers, `session/update` notifications (their `_meta["acp-warden/seq"]`
 *   unchanged: seqs are the journal's, valid on every host) and the agent's requests to the
 *   client (permission, fs, terminal) come back on the client's connection.
 *
 * The client sees one connection, as if connected to the owner (its role, its cursor, its
 * replay are the owner's hub's). An ACP v2 client's link speaks v1 with the relay mark
 * (src/acp/relay-link.ts): the owner sends the core's own output, and the client's own
 * connection renders it in v2. When a link ends (the owner died, closed, or stopped answering
 * pings), the requests it carried are answered `-32603` (`data.reason: "peer_lost"`, or
 * `"session_owned"` when the owner could not be reached at all), each session it carried gets a
 * notice (no seq: it is not the journal's), and the session is no longer relayed: the client's
 * next `session/resume` is this host's again (the owner's lease may have run out: then this
 * host, or another, takes the session over).
 */
import type { AgentEventContext, AgentHandlerOutput, AgentRequestEvent } from '../protocol/native-agent.js';
import { AGENT_METHODS, CLIENT_METHODS, UNSTABLE_AGENT_METHODS } from '../protocol/methods.js';
import { SEQ_META_KEY } from '../acp/agent-server.js';
import { RELAY_META_KEY, RELAYED_METHOD, relayedOutputOf } from '../acp/relay-link.js';
import { V2_PROTOCOL_VERSION } from '../protocol/methods-v2.js';
import type { ReadGate } from '../port/read-gate.js';
import { RpcError, type ErrorObject } from '../jsonrpc/rpc-error.js';
import { noticeUpdate } from '../session/cursor.js';
import { openPeerLink, type PeerLink, type PeerLinkFailure } from './peer-link.js';
import { defaultLoadLimit, PLACED_META_KEY, placeSession, type PlacementSelf, type PlacementTarget } from './placement.js';
import type { SessionLocation } from './routing-table.js';
import type { PostgresStore } from '../journal/postgres-store.js';

/** What a hub needs to route (HubOptions.routing): where sessions are, the shared token, a forwarding per connection. */
export interface HubRouting {
  /** Where `sessionId` is served now (routing-table.ts). */
  locate(sessionId: string): Promise<SessionLocation>;
  /** Where a new session of this host (`self`) is made (placement.ts's policy over the live hosts). */
  place(self: PlacementSelf): Promise<PlacementTarget>;
  /** A forwarding for one client connection. */
  forwarding(input: ForwardingInput): Forwarding;
  /** Closes the routing table (the hub stops). */
  close(): Promise<void>;
}

/** What a {@link Forwarding} serves: one client connection. */
export interface ForwardingInput {
  /** Hands an output to the client (the hub's line to the connection's agent server). */
  readonly deliver: (output: AgentHandlerOutput) => void;
  /** The connection's delivery gate: while it is closed (the client's transport backed up), the links are not read. */
  readonly gate: ReadGate;
}

/** A session relayed to an owner host. */
interface Owner {
  readonly hostId: string;
  readonly url: string;
}

/** A link to one owner host and the sessions it carries. */
interface Link {
  readonly owner: Owner;
  readonly link: PeerLink;
  readonly sessions: Set<string>;
}

/** A request forwarded and not answered: for its error if the link ends, and a failed attach. */
interface InFlight {
  readonly hostId: string;
  readonly sessionId: string;
  readonly method: string;
  /** The load or resume that began the session's relay: refused, the session is not relayed. */
  readonly first: boolean;
  /** A `session/new` placed on that host: made here instead when the host could not be reached. */
  readonly fallback?: () => void;
}

/** Errors of the owner that say the session is no longer its own: the session is not relayed any more (the client's next resume finds where it is). */
const notTheOwners = new Set<unknown>(['session_owned', 'session_moved']);

/** One client connection's forwarding (see the module's doc). Its calls run in the hub's turns; its links report from their sockets' callbacks, touching only its own state and the client's connection. */
export class Forwarding {
  readonly #input: ForwardingInput;
  readonly #token: string;
  readonly #pingIntervalMs: number | undefined;
  /** Links by owner host id. */
  readonly #links = new Map<string, Link>();
  /** The owner host of each session relayed. */
  readonly #sessions = new Map<string, string>();
  readonly #inFlight = new Map<string, InFlight>();
  /** The agent's requests given to the client: the client's key → the link and the peer's id. */
  readonly #asked = new Map<string, { readonly hostId: string; readonly id: string | number }>();
  #nextAsked = 1;
  readonly #unsubscribe: () => void;
  #closed = false;

  constructor(input: ForwardingInput, options: { readonly token: string; readonly pingIntervalMs?: number }) {
    this.#input = input;
    this.#token = options.token;
    this.#pingIntervalMs = options.pingIntervalMs;
    this.#unsubscribe = input.gate.subscribe((open) => {
      for (const { link } of this.#links.values()) link.hold(!open);
    });
  }

  /** Whether the session is relayed to its owner on this connection. */
  relays(sessionId: string): boolean {
    return this.#sessions.has(sessionId);
  }

  /**
   * Attaches the session on its owner: the client's own `session/load` or `session/resume`
   * (its params, cursor included) goes there; its answer (after the owner's replay) comes back.
   */
  attach(request: AgentRequestEvent, sessionId: string, owner: Owner): void {
    const link = this.#linkTo(owner, request.context);
    this.#sessions.set(sessionId, owner.hostId);
    link.sessions.add(sessionId);
    this.#send(link, request, sessionId, true);
  }

  /**
   * Places a new session on another host: the client's `session/new` goes there (marked
   * {@link PLACED_META_KEY}), and the session it makes is relayed from then on. When that host
   * cannot be reached at all, `fallback` is called instead of answering (the session is made
   * where the client is); any answer of that host, an error included, is the client's.
   */
  place(request: AgentRequestEvent, host: Owner, fallback: () => void): void {
    const link = this.#linkTo(host, request.context);
    const meta = request.params._meta as Record<string, unknown> | undefined;
    this.#inFlight.set(request.requestId, { hostId: host.hostId, sessionId: '', method: request.method, first: true, fallback });
    link.link.request(request.requestId, request.method, { ...request.params, _meta: { ...meta, [PLACED_META_KEY]: true } });
  }

  /**
   * Sends one request about a session that is not relayed (a close of a session owned there) to
   * its owner; its answer is the client's, and the link closes once it carries nothing else.
   */
  forwardOnce(request: AgentRequestEvent, sessionId: string, owner: Owner): void {
    this.#send(this.#linkTo(owner, request.context), request, sessionId, false);
  }

  /** Forwards a request for a relayed session (false: not relayed here). */
  request(request: AgentRequestEvent, sessionId: string): boolean {
    const link = this.#linkOf(sessionId);
    if (!link) return false;
    this.#send(link, request, sessionId, false);
    return true;
  }

  /** Forwards a cancel (`requestId` '': `session/cancel`, else the prompt a `$/cancel_request` named); false: not relayed here. */
  cancel(sessionId: string, requestId: string): boolean {
    const link = this.#linkOf(sessionId);
    if (!link) return false;
    if (requestId === '') link.link.notify(AGENT_METHODS.session_cancel, { sessionId });
    else link.link.cancelRequest(requestId);
    return true;
  }

  /** Forwards the client's answer to one of the agent's requests it relayed (false: not one of them). */
  answer(key: string, answer: { readonly result: unknown } | { readonly error: ErrorObject }): boolean {
    const asked = this.#asked.get(key);
    if (!asked) return false;
    this.#asked.delete(key);
    this.#links.get(asked.hostId)?.link.reply(asked.id, answer);
    return true;
  }

  /** Closes every link (the client's connection closed, or the hub stops); idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
    for (const { link } of [...this.#links.values()]) link.close();
  }

  /** Closes the link to `hostId` when it carries no session and no request any more. */
  #closeIfIdle(hostId: string, entry: Link | undefined): void {
    if (entry && entry.sessions.size === 0 && ![...this.#inFlight.values()].some((one) => one.hostId === hostId)) entry.link.close();
  }

  #linkOf(sessionId: string): Link | undefined {
    const hostId = this.#sessions.get(sessionId);
    return hostId === undefined ? undefined : this.#links.get(hostId);
  }

  #send(link: Link, request: AgentRequestEvent, sessionId: string, first: boolean): void {
    this.#inFlight.set(request.requestId, { hostId: link.owner.hostId, sessionId, method: request.method, first });
    link.link.request(request.requestId, request.method, request.params);
  }

  /** The link to `owner`, opened now if there is none (or the one there goes to another address). */
  #linkTo(owner: Owner, client: AgentEventContext): Link {
    const known = this.#links.get(owner.hostId);
    if (known && known.owner.url === owner.url) return known;
    known?.link.close();
    const { hostId } = owner;
    let entry: Link | undefined;
    const link = openPeerLink({
      url: owner.url,
      token: this.#token,
      initialize: linkInitialize(client),
      ...(this.#pingIntervalMs !== undefined ? { pingIntervalMs: this.#pingIntervalMs } : {}),
      sink: {
        answered: (key, answer) => {
          const inFlight = this.#inFlight.get(key);
          this.#inFlight.delete(key);
          // The first load or resume refused, or the session is the owner's no more: it is not relayed (the client's next resume is this host's again).
          const dropped = 'error' in answer && (inFlight?.first || notTheOwners.has((answer.error.data as { reason?: unknown } | undefined)?.reason));
          if (inFlight && dropped && this.#sessions.get(inFlight.sessionId) === hostId) {
            this.#sessions.delete(inFlight.sessionId);
            entry?.sessions.delete(inFlight.sessionId);
          }
          // A fork of a forwarded session, or a session placed there, is made on that host, attached to this link there: it is forwarded too.
          const madeThere = inFlight !== undefined && (inFlight.method === UNSTABLE_AGENT_METHODS.session_fork || inFlight.fallback !== undefined);
          const made = madeThere && 'result' in answer ? (answer.result as { sessionId?: unknown } | undefined)?.sessionId : undefined;
          if (typeof made === 'string' && entry && this.#links.get(hostId) === entry) {
            this.#sessions.set(made, hostId);
            entry.sessions.add(made);
          }
          this.#input.deliver('error' in answer ? { type: 'acp.error', requestId: key, error: answer.error } : { type: 'acp.respond', requestId: key, result: answer.result });
          // A link that carries nothing any more (its only resume refused) is closed.
          this.#closeIfIdle(hostId, entry);
        },
        notified: (method, params) => {
          // A relay link's turn entries, joined retries and replay ends (relay-link.ts), named by this connection's keys.
          const relayed = method === RELAYED_METHOD ? relayedOutputOf(params, (id) => entry?.link.keyOf(id)) : undefined;
          this.#input.deliver(relayed ?? notificationOf(method, params));
        },
        asked: (id, method, params) => {
          const key = `r${this.#nextAsked++}`;
          this.#asked.set(key, { hostId, id });
          this.#input.deliver({ type: 'acp.clientRequest', key, method, params });
        },
        lost: (key, failure, opened) => {
          const inFlight = this.#inFlight.get(key);
          if (inFlight?.fallback && !opened) {
            // A placed session/new whose host was never reached: made where the client is instead, never answered from here.
            this.#inFlight.delete(key);
            inFlight.fallback();
            return undefined;
          }
          return lostError(owner, inFlight?.sessionId, inFlight?.method, failure, opened);
        },
        closed: (failure, opened) => {
          if (this.#links.get(hostId) === entry) this.#links.delete(hostId);
          for (const [key, asked] of this.#asked) if (asked.hostId === hostId) this.#asked.delete(key);
          for (const sessionId of entry?.sessions ?? []) {
            if (this.#sessions.get(sessionId) !== hostId) continue;
            this.#sessions.delete(sessionId);
            if (opened && failure.kind !== 'closed_here') this.#input.deliver({ type: 'acp.update', sessionId, update: noticeUpdate('warning', 'The host that runs this session went away', `${describeFailure(failure)}. This connection no longer follows the session: session/resume it (from the last seq seen) to go on; once that host's lease ran out another host takes the session over.`) });
          }
        },
      },
    });
    entry = { owner, link, sessions: new Set() };
    this.#links.set(hostId, entry);
    if (!this.#input.gate.open) link.hold(true);
    return entry;
  }
}

/**
 * The link's `initialize`: the client's own (its version, capabilities, info). An ACP v2
 * client's link speaks v1 with the relay mark (src/acp/relay-link.ts): it carries the core's
 * requests its connection made, and gets the core's output back for that connection to render.
 */
function linkInitialize(client: AgentEventContext): Record<string, unknown> {
  const info = client.clientInfo ? { clientInfo: client.clientInfo } : {};
  if (client.protocolVersion >= V2_PROTOCOL_VERSION) return { protocolVersion: 1, clientCapabilities: client.clientCapabilities, ...info, _meta: { [RELAY_META_KEY]: true } };
  return { protocolVersion: client.protocolVersion, clientCapabilities: client.clientCapabilities, ...info };
}

/** What a notification of the owner is for the client: a session update keeps its journal seq. */
function notificationOf(method: string, params: unknown): AgentHandlerOutput {
  if (method === CLIENT_METHODS.session_update && typeof params === 'object' && params !== null) {
    const { sessionId, update, _meta } = params as { sessionId?: unknown; update?: unknown; _meta?: Record<string, unknown> };
    const seq = _meta?.[SEQ_META_KEY];
    if (typeof sessionId === 'string' && typeof update === 'object' && update !== null) {
      return { type: 'acp.update', sessionId, update: update as never, ...(typeof seq === 'number' ? { seq } : {}) };
    }
  }
  return { type: 'acp.notify', method, params };
}

/** The error a forwarded request gets when its link ends. */
function lostError(owner: Owner, sessionId: string | undefined, method: string | undefined, failure: PeerLinkFailure, opened: boolean): ErrorObject {
  const what = method ?? 'a request';
  const session = sessionId ?? '(none)';
  if (!opened) {
    return RpcError.because('session_owned', `session ${session} is owned by host ${owner.hostId} (live), which could not be reached at ${owner.url} to forward ${what}: ${describeFailure(failure)}; try again (once its lease ran out, another host takes the session over)`, { sessionId: sessionId ?? null, owner: owner.hostId, url: owner.url, failure }).toErrorObject();
  }
  return RpcError.because('peer_lost', `the host that owns session ${session} (${owner.hostId}, ${owner.url}) went away while ${what} was forwarded to it: ${describeFailure(failure)}; session/resume the session again (once that host's lease ran out, another host takes it over)`, { sessionId: sessionId ?? null, owner: owner.hostId, exit: failure }).toErrorObject();
}

/** A link's failure in words. */
function describeFailure(failure: PeerLinkFailure): string {
  switch (failure.kind) {
    case 'unreachable':
      return `nothing answers there (${failure.code}: ${failure.message})`;
    case 'refused':
      return failure.status === 401
        ? 'it refused the token (HTTP 401): the hosts of a cluster must share one token (the same --token-file content)'
        : `it refused the connection (HTTP ${failure.status})`;
    case 'closed':
      return `its connection closed (code ${failure.code}${failure.reason ? `: ${failure.reason}` : ''})`;
    case 'unanswered':
      return `it answered no ping for ${2 * failure.pingIntervalMs} ms`;
    case 'initialize_refused':
      return `it refused initialize (${failure.error.message})`;
    case 'closed_here':
      return 'this host closed the link';
  }
}

/** Options of {@link clusterRouting}. */
export interface ClusterRoutingOptions {
  /** The cluster's database: the host's store (its pool shared), or a `postgres://…` URL (a connection of the routing table's own). */
  readonly store: string | PostgresStore | Promise<PostgresStore>;
  /** The cluster's shared bearer token: it opens the links to the other hosts. */
  readonly token: string;
  /** The links' keepalive (default 10 000 ms). */
  readonly pingIntervalMs?: number;
  /** Sessions this host owns before it places new ones on other hosts (placement.ts; default {@link defaultLoadLimit}). */
  readonly loadLimit?: number;
}

/** A hub's routing over the cluster's database at `store`, with the cluster's shared `token` (the routing table is opened at the first look-up). */
export function clusterRouting(options: ClusterRoutingOptions): HubRouting {
  let table: Promise<import('./routing-table.js').RoutingTable> | undefined;
  // pg is loaded only when a session is first refused here, or first placed elsewhere.
  const tableOf = () => (table ??= import('./routing-table.js').then(async ({ openRoutingTable }) => openRoutingTable(await options.store)));
  const loadLimit = options.loadLimit ?? defaultLoadLimit;
  return {
    locate: async (sessionId) => (await tableOf()).locate(sessionId),
    async place(self) {
      // Below the limit, no look at the other hosts (the common case costs nothing).
      if (self.load < loadLimit) return { where: 'local' };
      const hosts = await (await tableOf()).routableHosts(self.hostId);
      const placed = placeSession(self.hostId, self.load, hosts, loadLimit);
      const there = placed.where === 'remote' ? hosts.find((host) => host.hostId === placed.hostId) : undefined;
      return there ? { where: 'remote', hostId: there.hostId, url: there.url } : { where: 'local' };
    },
    forwarding: (input) => new Forwarding(input, options),
    async close() {
      if (table) await (await table).close();
    },
  };
}
