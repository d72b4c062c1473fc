/**
 * The passthrough's live handles, kept out of its snapshot (as XState keeps an
 * AbortController): the agent's ACP client, the promises of the agent's
 * requests to the editor, and what may carry credentials (the options' env, each session's
 * MCP servers). Keyed by the passthrough actor.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import type { CancellableChildren, SubagentParents } from '../../session/subagent-tree.js';
import type { AnyActorRef } from 'xstate';
import type { TurnActivity } from '../turn-activity.js';
import type { TurnTools } from '../cut-turn.js';
import type { AcpPassthroughOptions } from './options.js';

/** A request of the agent to the editor, waiting for the editor's answer. */
export interface PendingRelay {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** What a running passthrough holds that is not state. */
export interface PassthroughHandles {
  readonly options: AcpPassthroughOptions;
  /** The ACP client of the current agent process, while it runs. */
  client: AnyActorRef | undefined;
  /** Relays by key, as in the machine's `relays`. */
  readonly relays: Map<string, PendingRelay>;
  /**
   * Delivers the agent's updates gathered so far (see `agent.updates`): called before any
   * other report reaches the machine, so that nothing overtakes an update that came first.
   */
  flushUpdates: () => void;
  /** Each open session's MCP servers (given again on re-attach), by session id. */
  readonly mcpServers: Map<string, unknown[]>;
  /**
   * The tool calls running in each session's turn (turn-activity.ts), followed for the
   * watchdog hint as the agent's client sees each update (update-route.ts): a plain tracker,
   * so that an update is no event to the machine; the machine forgets a session's when its
   * turn starts or ends, and all of them when the client ends.
   */
  readonly tools: Map<string, TurnActivity>;
  /**
   * The tool calls of each session's turn as warden saw them (cut-turn.ts), for a continuation
   * after a crash: kept across the agent's death, forgotten when the session's next turn starts.
   */
  readonly turnTools: Map<string, TurnTools>;
  /** Tells the port the hint again (the agent process sets it): the tools changed. */
  toolsChanged: () => void;
  /** Hands an update of a session the host does not take from the client itself to the machine (the agent process sets it). */
  relayUpdate: (sessionId: string, update: SessionUpdate) => void;
  /** The host's watchers of sessions' updates (`SessionRoute.watchUpdates`), by session id. */
  readonly watchers: Map<string, (actor: AnyActorRef | undefined) => void>;
  /** The sessions whose updates the host takes from the client itself now (the machine is ready): the machine does not see them. */
  readonly direct: Set<string>;
  /** Subagent children the agent announced (`subagent_update`): a child's updates take its top parent's way (direct or not). */
  readonly subagents: SubagentParents;
  /** The children among them whose work a client may cancel (their latest capabilities say `cancel`). */
  readonly cancellableChildren: CancellableChildren;
}

const handles = new WeakMap<AnyActorRef, PassthroughHandles>();

/** Creates the handles of a passthrough actor. */
export function createHandles(owner: AnyActorRef, options: AcpPassthroughOptions): PassthroughHandles {
  const created: PassthroughHandles = {
    options,
    client: undefined,
    relays: new Map(),
    flushUpdates: () => {},
    mcpServers: new Map(),
    tools: new Map(),
    turnTools: new Map(),
    toolsChanged: () => {},
    relayUpdate: () => {},
    watchers: new Map(),
    direct: new Set(),
    subagents: new Map(),
    cancellableChildren: new Set(),
  };
  handles.set(owner, created);
  return created;
}

/** The handles of a passthrough actor (created with it). */
export function handlesOf(owner: AnyActorRef): PassthroughHandles {
  const found = handles.get(owner);
  if (!found) throw new Error(`No passthrough handles for actor "${owner.id}": handlesOf takes the passthrough actor itself.`);
  return found;
}
