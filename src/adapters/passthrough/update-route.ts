/**
 * Where a native agent's session updates go. While the passthrough is ready, a session whose
 * host watches its updates (`SessionRoute.watchUpdates`) takes them from the agent's ACP client
 * itself, so that neither the passthrough machine nor the agent's outputs are on an update's
 * path; any other session's, and every session's while the agent starts, restarts or
 * re-attaches (a re-attached session's replay is hidden from the editor: machine.ts), come out
 * of the machine as before. Either way the client's `onUpdate` call sees each update first
 * (`updateSeen`): the tool calls of each turn are followed there, in a plain tracker, for the
 * port's watchdog hint.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { carried, noteAnnouncement, noteChildCapabilities } from '../../session/subagent-tree.js';
import type { AnyActorRef } from 'xstate';
import type { SessionRoute } from '../../protocol/native-agent.js';
import { activityAfter, quietTurn } from '../turn-activity.js';
import { noTurnTools, toolsAfterOutput } from '../cut-turn.js';
import type { PassthroughContext } from './context.js';
import { handlesOf } from './handles.js';

type PassthroughSnapshot = { status: string; context: PassthroughContext; matches(state: string): boolean };

/** Whether the host may take the passthrough's sessions' updates from its client now: it is ready, with a client. */
function directNow(agent: AnyActorRef): boolean {
  const snapshot = agent.getSnapshot() as PassthroughSnapshot;
  return snapshot.status === 'active' && snapshot.matches('ready') && handlesOf(agent).client !== undefined;
}

/** Tells one watcher where its session's updates come from now: the client (`direct`) or the machine (`undefined`). */
function bind(agent: AnyActorRef, sessionId: string, direct: boolean): void {
  const handles = handlesOf(agent);
  const watcher = handles.watchers.get(sessionId);
  if (!watcher) return;
  if (direct && handles.client) {
    handles.direct.add(sessionId);
    watcher(handles.client);
  } else {
    handles.direct.delete(sessionId);
    watcher(undefined);
  }
}

/**
 * Tells every watcher where its session's updates come from: the machine entered its ready
 * state (`direct`: the client's) or left it (the machine's: a restart, a re-attach's replay).
 */
export function rebindUpdateWatchers(agent: AnyActorRef, direct: boolean): void {
  for (const sessionId of [...handlesOf(agent).watchers.keys()]) bind(agent, sessionId, direct);
}

/** `SessionRoute.watchUpdates` of session `sessionId` of the passthrough `agent`. */
export function watchSessionUpdates(agent: AnyActorRef, sessionId: string): NonNullable<SessionRoute['watchUpdates']> {
  return (onActor) => {
    const { watchers, direct } = handlesOf(agent);
    if (watchers.has(sessionId)) return undefined;
    watchers.set(sessionId, onActor);
    bind(agent, sessionId, directNow(agent));
    return {
      unwatch() {
        if (watchers.get(sessionId) !== onActor) return;
        watchers.delete(sessionId);
        direct.delete(sessionId);
      },
    };
  };
}

/**
 * The client's `onUpdate` of passthrough `agent`: follows the turn's tool calls (not in the
 * replay of a session being re-attached) and hands the update to the machine unless the host
 * takes it from the client itself.
 */
export function updateSeen(agent: AnyActorRef, sessionId: string, update: SessionUpdate): void {
  const handles = handlesOf(agent);
  const { reattaching } = (agent.getSnapshot() as PassthroughSnapshot).context;
  // A replay's tool calls ran before the restart (the state updates it lets through start none).
  if (reattaching !== sessionId) {
    const before = handles.tools.get(sessionId) ?? quietTurn;
    const after = activityAfter(before, update);
    if (after !== before) {
      handles.tools.set(sessionId, after);
      handles.toolsChanged();
    }
    const seen = handles.turnTools.get(sessionId) ?? noTurnTools;
    const now = toolsAfterOutput(seen, { type: 'acp.update', sessionId, update });
    if (now !== seen) handles.turnTools.set(sessionId, now);
  }
  // A subagent child's update takes its top parent's way, tagged with the child (src/session/subagent-tree.ts).
  noteAnnouncement(handles.subagents, sessionId, update);
  noteChildCapabilities(handles.cancellableChildren, update);
  const way = carried(handles.subagents, sessionId, update);
  if (!handles.direct.has(way.sessionId)) handles.relayUpdate(way.sessionId, way.update);
}

/** The turn of `sessionId` started or ended (every session's, without one): none of its tool calls runs. */
export function forgetTools(agent: AnyActorRef, sessionId?: string): void {
  const { tools } = handlesOf(agent);
  if (sessionId === undefined) tools.clear();
  else tools.delete(sessionId);
}
