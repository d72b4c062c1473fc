/**
 * The passthrough's live handles, kept out of its snapshot (as XState keeps an
 * AbortController): the agent's ACP client, the promises of the agent's
 * requests to the editor, and what may carry credentials (the options' env, each session's
 * MCP servers). Keyed by the passthrough actor.
 */
import type { AnyActorRef } from 'xstate';
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
}

const handles = new WeakMap<AnyActorRef, PassthroughHandles>();

/** Creates the handles of a passthrough actor. */
export function createHandles(owner: AnyActorRef, options: AcpPassthroughOptions): PassthroughHandles {
  const created: PassthroughHandles = { options, client: undefined, relays: new Map(), flushUpdates: () => {}, mcpServers: new Map() };
  handles.set(owner, created);
  return created;
}

/** The handles of a passthrough actor (created with it). */
export function handlesOf(owner: AnyActorRef): PassthroughHandles {
  const found = handles.get(owner);
  if (!found) throw new Error(`No passthrough handles for actor "${owner.id}": handlesOf takes the passthrough actor itself.`);
  return found;
}
