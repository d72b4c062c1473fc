/**
 * The host's agent: the native agent the editor (or the embedding API) talks to. It sits
 * between the ACP agent server and the real agents (adapters, passthroughs, the demo agent)
 * and adds what makes sessions survive:
 *
 * - the **journal**: the prompt, every update, permission answers, stop reasons, restarts,
 *   appended before the editor hears of them (an append is durable when it returns);
 * - `session/list` and `session/load` from the journal, so that a host that was restarted
 *   (even after SIGKILL) lists every session, replays it, and resumes it on the agent side
 *   (the journaled resume state goes back to the agent in `session/resume`);
 * - the agents' own sessions: after the journal's, `session/list` shows what each agent that
 *   can list (`sessionCapabilities.list`: Codex's threads) keeps and the journal does not map,
 *   and `session/load` / `session/resume` of one of those journals it and resumes it there;
 * - **recovery notices**: when an agent process dies and restarts, the editor is told what
 *   happened and the restart count (a `notice`, journaled as a `notice` entry, never as
 *   conversation; the server signs it as acp-warden's message for clients without
 *   `session.notices`);
 * - `session/fork` (when the agent forks: journaled with a copy of the source's history) and
 *   `session/delete` (the session leaves the journal); `session/load` / `session/resume` of a
 *   live session answer its current modes and config options (kept in its state chart);
 * - one **session state chart** per session (src/session/session-machine.ts), a child actor
 *   fed with the facts, for the inspector and `host.tree()`; it holds the session's state (the
 *   modes, config options, title, commands and resume handle the agent reported, what the user
 *   chose);
 * - **journaled choices**: a mode or config option the user set (once the agent answered) or
 *   the agent switched to, and each new resume handle, is a journal entry (`mode`, `config`,
 *   `resume`: never conversation); a new agent process (after a restart, or a warden restart's
 *   load or resume) gets them again (src/session/reapply.ts) before the next prompt reaches it;
 * - several agents at once: `session/new` picks one with `_meta["acp-warden/agent"]`
 *   (the embedding API does), else the default.
 *
 * Each real agent is a child actor (`agent:<name>`) started on first use; its own sessions
 * supervisor holds the session supervisors and their ports.
 *
 * This file is the actor and its accessors; its parts live in ./agent/, one concept a file:
 * `live.ts` (the live record), `from-editor.ts` / `from-agents.ts` (dispatch), `delivery.ts`,
 * `attach.ts` (load, resume, adopt), `listing.ts`, `fork-delete.ts`, `session-record.ts`,
 * `turns.ts` (what the host lends a session's machine to carry out its turns), `session-settings.ts`, `notices.ts`, `journal-writes.ts`.
 */
import type { ActorLogic, ActorSystem, AnyActorRef } from 'xstate';
import type { AgentHandlerEvent, AgentHandlerOutput, AgentRequestEvent, NativeAgent, SessionRoute } from '../protocol/native-agent.js';
import type { Subscriber } from '../session/subscriber.js';
import { type CatchUp, type Continue, type LeaseEvent, type ReleaseAgent, type HostAgentContext, type HostAgentOptions, type HostAgentEvent, type HostInput, type HostSession, type HostSnapshot, type InnerAgent, type InnerOutput, type Live, type Scope } from './agent/live.js';
import { lives } from './agent/live.js';
import { subscriberOf } from './agent/delivery.js';
import { createJournalQueue } from './agent/journal-queue.js';
import { refusedWrite } from './agent/journal-writes.js';
import { later } from './agent/continuation.js';
import { hostJournalOf } from '../journal/host-journal.js';
import { readGateOf } from '../port/read-gate.js';

/** The default bound on unacknowledged journal writes of a journal that answers later (see `HostAgentOptions.maxPendingWriteBytes`). */
const defaultMaxPendingWriteBytes = 8 * 1024 * 1024;
import { movedAway, movedByFence } from './agent/moved-away.js';
import { leaseChanged } from './agent/lease-fencing.js';
import { releaseAgent, releasedDown, unwatchUpdates, withHostCapabilities } from './agent/inner-agents.js';
import { onEditorEvent } from './agent/from-editor.js';
import { releaseOwnership } from './agent/ownership.js';
import { onInnerOutput } from './agent/from-agents.js';
import { currentSetup } from './agent/session-record.js';
import { cancelCame, promptCame } from './agent/turns.js';
import { defaultCancelGraceMs } from '../supervision/cancel-grace.js';

export { AGENT_META_KEY, SKIPPED_META_KEY, TAKEOVER_META_KEY, type HostAgentContext, type HostAgentOptions, type HostSessionEvent } from './agent/live.js';
export type { SessionMachineEvent } from '../session/session-machine.js';

/** A native agent that serves `options.defaultAgent` (and any other agent by name) with a journal. */
export function createHostAgent(options: HostAgentOptions): NativeAgent {
  const base = options.resolve(options.defaultAgent);
  return {
    logic: hostAgentLogic,
    input: { ...options, base },
    // The editor shows the agent it asked for; the title says who keeps it alive.
    agentInfo: options.agentInfo ?? { ...base.agentInfo, title: `${base.agentInfo.title ?? base.agentInfo.name} (acp-warden)` },
    capabilities: withHostCapabilities(base.capabilities ?? {}),
    authMethods: base.authMethods ?? [],
    // The host's editor edge maps ACP v2 onto its version-neutral core (src/acp/v2-edge.ts), whatever its agents speak.
    protocolVersions: [1, 2],
    ...(base.extensions ? { extensions: base.extensions } : {}),
    ...(base.delegateInitialize ? { delegateInitialize: true } : {}),
    cancelGraceMs: base.cancelGraceMs ?? defaultCancelGraceMs,
    // A slow editor pauses this connection's subscriber, never the agents: the journal is the buffer.
    deliversFromJournal: true,
    // Each session's machine queues its prompts, cancels them and keeps the cancel grace.
    ownsTurns: true,
    // Every agent's supervisors, in start order: the server shuts them down gracefully on close.
    supervisors: (host) => [...innerAgentsOf(host).values()].flatMap((inner) => inner.agent.supervisors?.(inner.ref) ?? []),
    // A session's prompts and cancels go straight to its machine: this agent routes them, it is not on their path.
    routeSession: sessionRoute,
  };
}

/**
 * The line to a session's machine, by session id: a synchronous lookup that sends a prompt or a
 * cancel of a session running here straight to its machine (which keeps the prompt and decides
 * its turn), so that the host agent's mailbox is not on each prompt's path. `false` for
 * anything else, or a session not running here: the host agent answers it as usual.
 */
function sessionRoute(host: AnyActorRef, sessionId: string): SessionRoute {
  return {
    send(event) {
      const live = lives.get(host);
      const session = live?.sessions.get(sessionId);
      if (!live || !session) return false;
      if (event.type === 'session.prompt') {
        promptCame(live, session, event as AgentRequestEvent);
        return true;
      }
      if (event.type === 'session.cancel') {
        // A `requestId` is a $/cancel_request of that prompt; session/cancel has none (the server gives '').
        cancelCame(live, session, event.requestId || undefined);
        return true;
      }
      return false;
    },
  };
}

/** Actor logic of the host agent (see `createHostAgent`). */
export const hostAgentLogic = {
  config: { name: 'hostAgent' },
  getInitialSnapshot(scope: Scope, input: HostInput): HostSnapshot {
    const journal = hostJournalOf(input.journal);
    const live: Live = { scope, input, journal, writes: undefined as unknown as Live['writes'], inner: new Map(), sessions: new Map(), pending: new Map(), clientCalls: new Map(), failed: new Map(), moved: new Map(), lease: { standing: 'held', checking: new Set() }, listed: new Map(), closed: new Set(), unshown: new Set(), context: undefined, initialized: false, nextKey: 1, journalErrors: 0, sessionLost: (sessionId, fenced) => movedAway(live, sessionId, movedByFence(fenced)), subscriber: undefined as unknown as Subscriber, requestSessions: new Map(), held: new Map(), subagents: new Map(), attaching: new Map(), opening: new Map(), releasing: new Set() };
    (live as { writes: Live['writes'] }).writes = createJournalQueue({
      journal,
      write: (delivery) => live.subscriber.deliver(delivery.sessionId, delivery.output, delivery.seq),
      failed: (sessionId, error, unshown) => refusedWrite(live, sessionId, error, unshown),
      later: (run) => later(live, run),
      maxPendingBytes: input.maxPendingWriteBytes ?? defaultMaxPendingWriteBytes,
      // The journal is behind: the agents' output waits in their pipes, not in memory.
      pressure: (full) => (full ? readGateOf(scope.system).hold(live) : readGateOf(scope.system).release(live)),
    });
    (live as { subscriber: Subscriber }).subscriber = subscriberOf(live);
    lives.set(scope.self, live);
    return { status: 'active', output: undefined, error: undefined, context: summary(live) };
  },
  transition(snapshot: HostSnapshot, event: HostAgentEvent, scope: Scope): HostSnapshot {
    if (snapshot.status !== 'active') return snapshot;
    const live = lives.get(scope.self) as Live;
    if (event.type === 'xstate.stop') {
      for (const inner of live.inner.values()) {
        inner.subscription.unsubscribe();
        if (inner.ref.getSnapshot().status === 'active') scope.stopChild(inner.ref);
      }
      for (const ref of live.releasing) if (ref.getSnapshot().status === 'active') scope.stopChild(ref);
      for (const session of live.sessions.values()) {
        if (session.machine.getSnapshot().status === 'active') scope.stopChild(session.machine);
        unwatchUpdates(session);
        releaseOwnership(live, session.sessionId);
      }
      live.subscriber.close();
      return { ...snapshot, status: 'stopped', context: summary(live) } as HostSnapshot;
    }
    if (event.type === 'host.continue') (event as Continue).run();
    else if (event.type === 'host.lease') leaseChanged(live, (event as LeaseEvent).standing);
    else if (event.type === 'host.inner') onInnerOutput(live, (event as InnerOutput).agent, (event as InnerOutput).output);
    else if (event.type === 'host.catchUp') live.subscriber.step((event as CatchUp).sessionId);
    else if (event.type === 'host.releaseAgent') releaseAgent(live, (event as Extract<ReleaseAgent, { type: 'host.releaseAgent' }>).agent);
    else if (event.type === 'host.releasedDown') releasedDown(live, (event as Extract<ReleaseAgent, { type: 'host.releasedDown' }>).ref);
    else if (!event.type.startsWith('xstate.')) onEditorEvent(live, event as AgentHandlerEvent);
    // One transition per streamed update: the snapshot is kept while its summary is (no copy, no array per update).
    return unchanged(snapshot.context, live) ? snapshot : { ...snapshot, context: summary(live) };
  },
  getPersistedSnapshot(snapshot: HostSnapshot): HostSnapshot {
    return snapshot;
  },
} as unknown as ActorLogic<HostSnapshot, AgentHandlerEvent, HostInput, ActorSystem<any>, AgentHandlerOutput>;

/** Whether `context` still summarises `live` (see {@link summary}). */
function unchanged(context: HostAgentContext, live: Live): boolean {
  if (context.sessions !== live.sessions.size || context.journalErrors !== live.journalErrors || context.agents.length !== live.inner.size) return false;
  let index = 0;
  for (const name of live.inner.keys()) if (context.agents[index++] !== name) return false;
  return true;
}

function summary(live: Live): HostAgentContext {
  return { agents: [...live.inner.keys()], sessions: live.sessions.size, journalErrors: live.journalErrors };
}

/** The real agents a host agent runs, by name, with their actors (for the tree and for shutdown). */
export function innerAgentsOf(host: AnyActorRef): ReadonlyMap<string, { readonly agent: NativeAgent; readonly ref: AnyActorRef }> {
  const live = lives.get(host);
  return new Map([...(live?.inner ?? new Map<string, InnerAgent>())].map(([name, inner]) => [name, { agent: inner.agent, ref: inner.ref }]));
}

/** Commits the host agent's open group of journaled updates, so that a reader of its journal sees them (and they went out). */
export function settleJournal(host: AnyActorRef): void {
  const live = lives.get(host);
  live?.writes.flush();
}

/** Resolves once no journal call of the host agent is in flight (the journal may be closed then; a stopped agent settles nothing more). */
export function journalWritesSettled(host: AnyActorRef): Promise<void> {
  return lives.get(host)?.writes.callsSettled() ?? Promise.resolve();
}

/** Whether `ref` is a host agent (not a hub connection's handler, which runs no agents). */
export function isHostAgent(ref: AnyActorRef): boolean {
  return lives.has(ref);
}

/** The agent of a session this host runs now (`undefined`: not running here). */
export function runningSessionAgent(host: AnyActorRef, sessionId: string): string | undefined {
  return lives.get(host)?.sessions.get(sessionId)?.agent;
}

/**
 * Which of the host agent's own records hold request `requestId` (its key from the agent
 * server): `pending` (a request routed to an agent, its answer awaited) and `requestSessions`
 * (the session its answer is ordered with). Read-only; for inspection and specs.
 */
export function hostRecordsOf(host: AnyActorRef, requestId: string): readonly string[] {
  const live = lives.get(host);
  if (!live) return [];
  return [...(live.pending.has(requestId) ? ['pending'] : []), ...(live.requestSessions.has(requestId) ? ['requestSessions'] : [])];
}

/** The session state charts, by session id. */
export function sessionMachinesOf(host: AnyActorRef): ReadonlyMap<string, AnyActorRef> {
  const live = lives.get(host);
  return new Map([...(live?.sessions ?? new Map<string, HostSession>())].map(([id, session]) => [id, session.machine]));
}

/**
 * What `session/load` or `session/resume` of `sessionId` answers when this host runs the
 * session now and nothing opens, closes or deletes it meanwhile: its current modes and config
 * options, as the host itself answers such a request at once. `undefined` otherwise (a session
 * only in the journal, one being opened, closed or deleted, one that failed): the host agent
 * must be asked. Lets a hub attach another connection to a running session without a round
 * trip through the host agent.
 */
export function runningSessionSetup(host: AnyActorRef, sessionId: string): ReturnType<typeof currentSetup> | undefined {
  const live = lives.get(host);
  const session = live?.sessions.get(sessionId);
  if (!live || !session || live.opening.has(sessionId) || live.attaching.has(sessionId) || live.failed.has(sessionId) || live.closed.has(sessionId)) return undefined;
  return currentSetup(session);
}
