/**
 * How an agent server renders the core's version-neutral output for an editor that speaks
 * ACP v2 (its state: v2-connection.ts): updates as v2 upserts with their message ids
 * (v2-message-ids.ts), a prompt acknowledged with its `messageId` when the host journals it
 * (`session.turnJournaled`: the prompt is inserted), the turn's progress and end as
 * `state_update` (v2-turn-state.ts). The core answers a prompt when its turn ends (v1's
 * answer): for a v2 editor that answer becomes the turn's `idle` (with `stopReason`, or with
 * `error` and the typed failure that cut it), never a second answer. Every `state_update`
 * carries the session's background work (v2-background.ts).
 */
import type { ContentBlock, SessionUpdate, StopReason } from '@agentclientprotocol/sdk';
import type * as V2 from '@agentclientprotocol/sdk/experimental/v2';
import { respond, sendNotification } from '../jsonrpc/connection.js';
import { RpcError, type ErrorObject } from '../jsonrpc/rpc-error.js';
import { AGENT_METHODS, CLIENT_METHODS } from '../protocol/methods.js';
import { PROMPT_SEQ_META, type TurnEntry } from '../protocol/native-agent.js';
import { type Live, SEQ_META_KEY, requestOf, requestsHandedOn, settled } from './server-live.js';
import { checkDrained } from './server-draining.js';
import { turnMessageIds, userMessageId } from './v2-message-ids.js';
import { idleState, requiresActionState, runningState, type TurnEnd } from './v2-turn-state.js';
import { TURN_END_META_KEY } from '../session/cursor.js';
import { updateToV2 } from './v2-updates.js';
import { announcedChild } from '../session/subagent-tree.js';
import type { V2Edge } from './v2-connection.js';
import { backgroundOf, noteWork, withBackground, workLost } from './v2-background.js';

/** Sends one v2 update of `sessionId` (`seq`: its journal entry's, as `_meta["acp-warden/seq"]`). */
function send(live: Live, sessionId: string, update: V2.SessionUpdate, seq?: number): void {
  sendNotification(live.connection, CLIENT_METHODS.session_update, seq === undefined ? { sessionId, update } : { sessionId, update, _meta: { [SEQ_META_KEY]: seq } });
}

/**
 * A core update for a v2 editor. A replayed prompt (`user_message_chunk` with its entry's
 * seq) starts its turn, so that what follows gets that turn's ids, as it did live.
 */
export function relayV2Update(live: Live, edge: V2Edge, sessionId: string, update: SessionUpdate, seq: number | undefined): void {
  if (update.sessionUpdate === 'user_message_chunk' && seq !== undefined) edge.turnOf.set(sessionId, seq);
  const child = announcedChild(update);
  if (child !== undefined && child !== sessionId) edge.children.set(sessionId, (edge.children.get(sessionId) ?? new Set()).add(child));
  // A turn's end shown from the journal (a hub's catch-up or replay of another connection's turn): v2's `idle`.
  const ended = turnEndOf(update);
  if (ended) {
    edge.observing.delete(sessionId);
    return sendState(live, edge, sessionId, idleState(ended), seq);
  }
  for (const v2 of updateToV2(update, turnMessageIds(edge.turnOf.get(sessionId) ?? 0))) send(live, sessionId, v2, seq);
  // Background work that ended while the session is idle: a new snapshot (after the update that
  // ended it); not within a replay or a resume, which end with their own snapshot.
  if (noteWork(edge.work, sessionId, update, edge.turnOf.get(sessionId) ?? 0) && !running(edge, sessionId) && !attaching(live, sessionId)) {
    sendState(live, edge, sessionId, { sessionUpdate: 'state_update', state: 'idle' } as V2.SessionUpdate);
  }
}

/** Whether a `session/resume` (a replay or not) of `sessionId` is under way on this connection. */
function attaching(live: Live, sessionId: string): boolean {
  return requestsHandedOn(live).some((request) => request.sessionId === sessionId && (request.method === AGENT_METHODS.session_resume || request.method === AGENT_METHODS.session_load));
}

/** A `state_update` of `sessionId`, with its background work (v2-background.ts). */
function sendState(live: Live, edge: V2Edge, sessionId: string, state: V2.SessionUpdate, seq?: number): void {
  send(live, sessionId, withBackground(state, backgroundOf(edge.work, sessionId, running(edge, sessionId) ? edge.turnOf.get(sessionId) : undefined)), seq);
}

/** The turn's end a hub's turn-end update carries (cursor.ts `turnEndUpdate`), if it is one. */
function turnEndOf(update: SessionUpdate): TurnEnd | undefined {
  if (update.sessionUpdate !== 'session_info_update') return undefined;
  const ended = update._meta?.[TURN_END_META_KEY] as { stopReason?: StopReason; error?: ErrorObject } | undefined;
  if (!ended) return undefined;
  return ended.error ? { kind: 'error', error: ended.error } : { kind: 'stop', stopReason: ended.stopReason ?? 'end_turn' };
}

/**
 * Another connection's turn, live (a hub's observer): its prompt as the `user_message` upsert
 * and `running`, its end as `idle` (with the typed failure of a cut turn), as the prompt's own
 * v2 connection sees them.
 */
export function v2TurnObserved(live: Live, edge: V2Edge, sessionId: string, seq: number, entry: TurnEntry): void {
  if (entry.kind === 'prompt') {
    edge.observing.add(sessionId);
    return showPrompt(live, edge, sessionId, seq, entry.prompt);
  }
  edge.observing.delete(sessionId);
  sendState(live, edge, sessionId, idleState(entry.kind === 'stop' ? { kind: 'stop', stopReason: entry.stopReason } : { kind: 'error', error: entry.error }), seq);
}

/** A turn's prompt, inserted at `seq`: the user's message upsert, then `running` (the turn's updates are its from now on). */
function showPrompt(live: Live, edge: V2Edge, sessionId: string, seq: number, prompt: readonly ContentBlock[]): void {
  edge.turnOf.set(sessionId, seq);
  send(live, sessionId, { sessionUpdate: 'user_message', messageId: userMessageId(seq), content: [...prompt] } as V2.SessionUpdate, seq);
  sendState(live, edge, sessionId, runningState());
}

/**
 * The host journaled a turn's entry. Its prompt: the editor's `session/prompt` is inserted, so
 * it is answered now with the user's message id, after that message and `running`.
 */
export function onV2TurnJournaled(live: Live, edge: V2Edge, sessionId: string, requestId: string, seq: number, entry: TurnEntry): void {
  if (entry.kind !== 'prompt') return;
  const request = requestOf(live, requestId);
  if (!request || request.method !== AGENT_METHODS.session_prompt) return;
  edge.inserted.set(requestId, sessionId);
  showPrompt(live, edge, sessionId, seq, entry.prompt);
  settled(live, request);
  respond(live.connection, request.rpcId, { messageId: userMessageId(seq) });
  checkDrained(live);
}

/** What becomes of the core's answer to a request of a v2 editor. */
export type V2Answer =
  /** It ended an inserted prompt's turn (shown as `idle`), or was answered here (a keyed retry's acknowledgement): nothing more to answer. */
  | { readonly kind: 'turnEnded' }
  /** A prompt cancelled before it was inserted: answered -32800 (v2). */
  | { readonly kind: 'refused'; readonly error: RpcError }
  /** Any other answer: as the server answers it. */
  | { readonly kind: 'answer' };

/** The core's answer (`result`, or `error`) to request `key`, for a v2 editor (see {@link V2Answer}). */
export function v2Answer(live: Live, edge: V2Edge, key: string, outcome: { readonly result: unknown } | { readonly error: ErrorObject }): V2Answer {
  const sessionId = edge.inserted.get(key);
  if (sessionId === undefined) {
    const request = requestOf(live, key);
    // A retry of a keyed prompt inserted before (idempotent-prompts.ts): acknowledged with the original's message id.
    const promptSeq = 'result' in outcome ? ((outcome.result as { _meta?: Record<string, unknown> } | undefined)?._meta?.[PROMPT_SEQ_META] as unknown) : undefined;
    if (request?.method === AGENT_METHODS.session_prompt && typeof promptSeq === 'number') {
      settled(live, request);
      respond(live.connection, request.rpcId, { messageId: userMessageId(promptSeq) });
      checkDrained(live);
      return { kind: 'turnEnded' };
    }
    const cancelled = 'result' in outcome && (outcome.result as { stopReason?: unknown } | undefined)?.stopReason === 'cancelled';
    return request?.method === AGENT_METHODS.session_prompt && cancelled ? { kind: 'refused', error: RpcError.requestCancelled() } : { kind: 'answer' };
  }
  edge.inserted.delete(key);
  const stopReason = (outcome as { result?: { stopReason?: StopReason } }).result?.stopReason ?? 'end_turn';
  // A turn cut by warden (crash, hang, host lost): its work is gone with it.
  if ('error' in outcome) workLost(edge.work, sessionId);
  sendState(live, edge, sessionId, idleState('error' in outcome ? { kind: 'error', error: outcome.error } : { kind: 'stop', stopReason }));
  checkDrained(live);
  return { kind: 'turnEnded' };
}

/** Whether a turn of `sessionId` runs (inserted, not ended; or another connection's, seen started). */
function running(edge: V2Edge, sessionId: string): boolean {
  if (edge.observing.has(sessionId)) return true;
  for (const session of edge.inserted.values()) if (session === sessionId) return true;
  return false;
}

/** A permission request goes to the editor: the turn `requires_action`. */
export function v2PermissionAsked(live: Live, edge: V2Edge, sessionId: string): void {
  edge.asking.set(sessionId, (edge.asking.get(sessionId) ?? 0) + 1);
  sendState(live, edge, sessionId, requiresActionState());
}

/** The editor answered a permission request: once none waits, the turn is `running` again. */
export function v2PermissionAnswered(live: Live, edge: V2Edge, sessionId: string): void {
  const left = (edge.asking.get(sessionId) ?? 1) - 1;
  if (left > 0) {
    edge.asking.set(sessionId, left);
    return;
  }
  edge.asking.delete(sessionId);
  if (running(edge, sessionId)) sendState(live, edge, sessionId, runningState());
}

/**
 * A replay (`session/resume` with `replayFrom`) delivered the whole history, up to journal entry
 * `seq`: v2's `replay_complete` (RFD "session-replay-complete"), after the last replayed update
 * and before the state snapshot and the answer; never for a replay cut short. Each subagent
 * child the history announced to this editor gets its own marker, on its own `sessionId`, just
 * before its parent's.
 */
export function v2ReplayComplete(live: Live, edge: V2Edge, sessionId: string, seq: number): void {
  // Each subagent child the history announced gets its own marker, on its own id, before its parent's (RFD: a child announced during the request is marked too).
  const marked = new Set<string>([sessionId]);
  const markChildren = (parent: string) => {
    for (const child of edge.children.get(parent) ?? []) {
      if (marked.has(child)) continue;
      marked.add(child);
      markChildren(child);
      send(live, child, { sessionUpdate: 'replay_complete' } as unknown as V2.SessionUpdate, seq);
    }
  };
  markChildren(sessionId);
  send(live, sessionId, { sessionUpdate: 'replay_complete' } as unknown as V2.SessionUpdate, seq);
}

/** The session's current state, as v2 wants it before `session/resume` is answered. */
export function v2StateSnapshot(live: Live, edge: V2Edge, sessionId: string): void {
  if (!running(edge, sessionId)) sendState(live, edge, sessionId, { sessionUpdate: 'state_update', state: 'idle' } as V2.SessionUpdate);
  else sendState(live, edge, sessionId, edge.asking.has(sessionId) ? requiresActionState() : runningState());
}
