/**
 * The contract of an ACP agent client actor: what it runs on and what it does with the
 * agent's requests ({@link ClientHandler}), the facts its snapshot shows, and the events it
 * accepts and emits.
 */
import type {
  ClientCapabilities,
  CreateElicitationRequest,
  CreateElicitationResponse,
  Implementation,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionUpdate,
} from '@agentclientprotocol/sdk';
import type { Snapshot } from 'xstate';
import type { TimeoutPolicy } from '../jsonrpc/connection.js';
import type { PeerLost, Transport } from '../jsonrpc/transport.js';
import type { SHUTDOWN_EVENT } from '../supervision/events.js';
import type { TerminalLimits } from './terminals.js';
import type { FileReadLimits } from './bounded-read.js';
import type { FileReadOptions } from './workspace-fs.js';

/** What the client does with the agent's requests. */
export interface ClientHandler {
  /**
   * Decides a permission request. Default: the first `reject_once` option (nothing runs
   * without a policy that says so). Return `{ outcome: 'cancelled' }` to cancel.
   */
  readonly permission?: (request: RequestPermissionRequest) => RequestPermissionResponse['outcome'] | Promise<RequestPermissionResponse['outcome']>;
  /**
   * Serve `fs/*` inside each session's cwd and additional directories. Default `true`;
   * `{ limits }` bounds what one `fs/read_text_file` may answer (default 64 MiB);
   * `linkStores` names the package stores whose hard links may be read (a file with other
   * names is refused otherwise; see {@link FileReadOptions}).
   */
  readonly fs?: boolean | { readonly limits?: FileReadLimits; readonly linkStores?: readonly string[] };
  /**
   * Run `terminal/*` as supervised ports. Default `true`, with an isolated environment
   * (the baseline variables plus the ones the agent passes); `{ env: 'inherit' }` gives
   * terminals the host's environment (agent API keys still removed); `limits` caps the
   * output an agent may ask to keep and the terminals a session may hold.
   */
  readonly terminals?: boolean | { readonly env?: 'isolated' | 'inherit'; readonly limits?: TerminalLimits };
  /**
   * Advertise `session.notices`: the agent sends its notices as `notice` updates, apart from
   * its messages (a client without it gets them as signed agent messages). Default `false`.
   */
  readonly notices?: boolean;
  /** Answer `elicitation/create` (form mode); advertised only when given. */
  readonly elicitation?: (request: CreateElicitationRequest) => CreateElicitationResponse | Promise<CreateElicitationResponse>;
  /**
   * A proxy's mode: every request of the agent is handed to `relay` (say, passed on to the
   * editor), and `capabilities` is what is advertised (the editor's own), instead of the
   * policies above.
   */
  readonly relay?: (method: string, params: unknown) => Promise<unknown>;
  /** What to advertise; default: derived from the policies above. */
  readonly capabilities?: ClientCapabilities;
}

/** What an agent client runs on. */
export interface AgentClientInput {
  /** The agent's side: `portTransport(port)` for a subprocess, a memory pair in tests. */
  readonly transport: Transport;
  readonly clientInfo?: Implementation;
  readonly handler?: ClientHandler;
  readonly timeouts?: TimeoutPolicy;
  /**
   * Sees each session update first, in the client's own step, before it is emitted as
   * `acp.update`: a plain call (its owner's bookkeeping, say what the turn's tool calls do),
   * not a listener; it must not throw.
   */
  readonly onUpdate?: (sessionId: string, update: SessionUpdate) => void;
  /**
   * The ACP version offered the agent: `v1` (the default: a v1 `initialize`, as always),
   * `v2` or `auto` (`initialize` offering 2 in both shapes: src/acp/v2-agent-initialize.ts).
   * An answer of 2 makes the connection v2 (v2 method names; a prompt ends at the session's
   * `idle`; v2 updates and permission requests mapped to v1's shapes, which is all the
   * client's callers see); an answer of 1 goes on in v1 (the SDK's router serving only v1
   * then gives the agent no client fs or terminal). `auto` also retries with a v1
   * `initialize` when the agent refuses version 2 (-32022).
   */
  readonly protocol?: AgentProtocol;
}

/** The ACP version an agent client offers its agent ({@link AgentClientInput.protocol}). */
export type AgentProtocol = 'v1' | 'v2' | 'auto';

/** The phase of an agent client. */
export type AgentClientPhase = 'connected' | 'ready' | 'closed';

/** Plain facts about an agent client. */
export interface AgentClientContext {
  readonly agentInfo: Implementation | undefined;
  readonly protocolVersion: number | undefined;
  readonly sessions: number;
  readonly terminals: number;
}

/** The snapshot of an agent client; its output is why the agent went away. */
export type AgentClientSnapshot = Snapshot<PeerLost> & { readonly value: AgentClientPhase; readonly context: AgentClientContext };

/** Events of an agent client (internal). */
export type AgentClientEvent =
  | { readonly type: 'client.closed'; readonly reason: PeerLost }
  | { readonly type: 'client.sync' }
  | { readonly type: typeof SHUTDOWN_EVENT }
  | { readonly type: `xstate.${string}` };

/** Events an agent client emits: every session update, and the agent going away. */
export type AgentClientEmitted =
  | { readonly type: 'acp.update'; readonly sessionId: string; readonly update: SessionUpdate }
  | { readonly type: 'acp.notification'; readonly method: string; readonly params: unknown }
  | { readonly type: 'acp.closed'; readonly reason: PeerLost };
