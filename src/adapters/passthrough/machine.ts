/**
 * The ACP passthrough as a state machine: a native agent for our agent server that is an
 * ACP client of the real agent. The agent runs under a supervisor that is this machine's
 * child (agent-supervisor.ts), watched by a callback actor that turns what it does into
 * `agent.*` events (agent-process.ts).
 *
 * idle ─initialize→ booting ─→ ready ⇄ recovering (awaitingRestart → initializing → next ⇄
 * reattaching) ─agent.gaveUp→ failed ─session/new, load, resume→ restarting ─→ ready.
 *
 * Requests go down through another callback actor (requests.ts) and come back as
 * `request.settled`; a prompt the host's line to its session wrote to the agent itself
 * (session-route.ts) is only counted here (`prompt.forwarded`) and answered the same way;
 * updates come up; the agent's requests to the client are relayed to the
 * editor. When the agent process dies, the requests in flight fail naming the crash, the
 * process restarts with backoff, the connection is initialized again and every open session
 * re-attached, one by one (reattach.ts); what arrives meanwhile waits and is served, in
 * order, once it is ready.
 */
import type { InitializeResponse } from '@agentclientprotocol/sdk';
import { enqueueActions, setup, type AnyActorRef } from 'xstate';
import { cancelChild, cancelPrompt } from '../../acp/agent-client.js';
import { AGENT_METHODS } from '../../protocol/methods.js';
import type { AgentHandlerEvent, AgentHandlerOutput, AgentRequestEvent } from '../../protocol/native-agent.js';
import { RpcError } from '../../jsonrpc/rpc-error.js';
import { SHUTDOWN_EVENT } from '../../supervision/events.js';
import { shutdownExit } from '../../supervision/exit-reason.js';
import { AGENT_OWES_TAG, agentProcessLogic } from './agent-process.js';
import { AGENT_SUPERVISOR_ID, agentSupervisorLogic, agentSupervisorOf } from './agent-supervisor.js';
import type { OpenSession, PassthroughContext, PassthroughEvent } from './context.js';
import { createHandles, handlesOf } from './handles.js';
import type { AcpPassthroughOptions } from './options.js';
import { initializeLogic, isAgentLost, reattachLogic } from './reattach.js';
import { agentRequestsLogic, requestFailure } from './requests.js';
import { forgetTools, rebindUpdateWatchers } from './update-route.js';
import { noTurnTools, toolsAfterAnswer, toolsAfterOutput, type TurnTools } from '../cut-turn.js';
import { continuationRequest } from '../continuation-text.js';
import { cutAnswers, cutNotice, cutOfCrash, type PassthroughCut } from './cut-prompts.js';
import { rateLimitedRetryOf, rateLimitRetryId } from './rate-limited-prompts.js';
import { innerCliDeathOf } from '../inner-cli-dead.js';
import { innerCliDeathError, killAgentProcess } from './inner-cli-death.js';

/**
 * Updates that state how the session is now (not its history): passed on while a session is
 * re-attached, since the restarted agent's commands, mode or options are the editor's news.
 */
const stateKinds: ReadonlySet<string> = new Set(['available_commands_update', 'current_mode_update', 'config_option_update', 'session_info_update', 'usage_update']);

/** Why an agent whose supervisor gave up is given up. */
const gaveUp = (name: string) => `${name} kept failing: its restart intensity was exceeded`;

/** An editor's request (not `initialize`, which each state answers its own way). */
const isRequest = (event: PassthroughEvent): event is AgentRequestEvent => event.type !== 'initialize' && 'requestId' in event && 'method' in event && 'params' in event;

const opensSession = (event: PassthroughEvent) => event.type === 'session.new' || event.type === 'session.resume' || event.type === 'session.load';

const withoutKey = <T>(record: Readonly<Record<string, T>>, key: string | undefined): Readonly<Record<string, T>> => {
  if (key === undefined || !(key in record)) return record;
  const { [key]: _gone, ...rest } = record;
  return rest;
};

/** The sessions without the one `event` closes: closed for the editor from now on, whatever the agent answers, and never re-attached. */
function withoutClosed(sessions: PassthroughContext['sessions'], event: AgentRequestEvent): PassthroughContext['sessions'] {
  if (event.type !== 'session.close') return sessions;
  return withoutKey(sessions, event.params.sessionId as string);
}

/** The MCP servers of sessions no longer open are forgotten (an effect, run with the actions). */
const forgetMcpServers = (self: AnyActorRef, before: PassthroughContext['sessions'], after: PassthroughContext['sessions']) => () => {
  const { mcpServers } = handlesOf(self);
  for (const sessionId of Object.keys(before)) if (!(sessionId in after)) mcpServers.delete(sessionId);
};


/** A new turn of `sessionId`: no tool of an earlier turn runs in it, and none is one its continuation would name. */
function newTurn(self: AnyActorRef, sessionId: string): void {
  forgetTools(self, sessionId);
  handlesOf(self).turnTools.delete(sessionId);
}

/** What sends session `sessionId`'s cut prompt on (as `request`: itself, or its continuation) in the same editor request: the context's change and the forward. */
function sendingCut(context: PassthroughContext, sessionId: string, cut: PassthroughCut, request: AgentRequestEvent) {
  const prompt = { sessionId, request: cut.request, continuations: cut.continuations, cancelled: false, ...(cut.rateLimitRetries !== undefined ? { rateLimitRetries: cut.rateLimitRetries } : {}) };
  return {
    assign: { cut: withoutKey(context.cut, sessionId), prompts: { ...context.prompts, [request.requestId]: prompt }, inFlight: context.inFlight + 1 },
    forward: { type: 'request.forward', request, agentCloses: Boolean(context.downstream?.agentCapabilities?.sessionCapabilities?.close) } as const,
  };
}

/** The tool calls `sessionId`'s turn showed, changed by `change` (a reducer of cut-turn.ts). */
function trackTools(self: AnyActorRef, sessionId: string, change: (tools: TurnTools) => TurnTools): void {
  const { turnTools } = handlesOf(self);
  const before = turnTools.get(sessionId) ?? noTurnTools;
  const after = change(before);
  if (after !== before) turnTools.set(sessionId, after);
}

const initializeAnswer = (name: string, found: InitializeResponse) => ({ agentCapabilities: found.agentCapabilities, authMethods: found.authMethods, agentInfo: found.agentInfo ?? { name, version: 'unknown' } });

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The passthrough machine. Its input is the agent's options; it emits what a native agent emits. */
export const passthroughMachine = setup({
  types: {} as { context: PassthroughContext; events: PassthroughEvent; emitted: AgentHandlerOutput; input: AcpPassthroughOptions },
  actors: { agentProcess: agentProcessLogic, initializeAgent: initializeLogic, reattachSession: reattachLogic, agentRequests: agentRequestsLogic },
  guards: {
    isRequest: ({ event }) => isRequest(event),
    opensSession: ({ event }) => opensSession(event),
    hasDownstream: ({ context }) => context.downstream !== undefined,
    agentLost: ({ event }) => isAgentLost((event as { error?: unknown }).error),
    nothingToReattach: ({ context }) => context.reattachQueue.length === 0,
  },
  actions: {
    /** A fresh supervisor for the agent (the one before, given up or shutting down, is stopped). */
    bootAgent: enqueueActions(({ enqueue, self }) => {
      enqueue.sendTo('agentProcess', { type: 'agent.unwatch' });
      enqueue.stopChild(AGENT_SUPERVISOR_ID);
      // Built per passthrough (its children's inputs read this actor), so not one of setup's
      // actors, whose typing refuses an id for inline logic.
      enqueue.spawnChild(agentSupervisorLogic(self) as never, { id: AGENT_SUPERVISOR_ID } as never);
      enqueue.sendTo('agentProcess', { type: 'agent.watch' });
    }),
    /** The agent's supervisor stops gracefully (each port's stop sequence); what it does meanwhile is not news. */
    shutDownAgent: enqueueActions(({ enqueue, self }) => {
      enqueue.sendTo('agentProcess', { type: 'agent.unwatch' });
      const supervisor = agentSupervisorOf(self);
      if (supervisor?.getSnapshot().status === 'active') enqueue.sendTo(supervisor, { type: SHUTDOWN_EVENT, reason: shutdownExit() });
    }),

    // --- the editor's initialize
    takeInitialize: enqueueActions(({ event, enqueue }) => {
      if (event.type !== 'initialize') return;
      enqueue.assign({ editor: event.context, initializeRequest: event.requestId });
    }),
    answerInitialize: enqueueActions(({ context, event, enqueue }) => {
      const found = (event as unknown as { output: InitializeResponse }).output;
      enqueue.assign({ downstream: found, initializeRequest: undefined });
      if (context.initializeRequest) enqueue.emit({ type: 'acp.respond', requestId: context.initializeRequest, result: initializeAnswer(context.name, found) });
    }),
    /** A second initialize re-negotiates nothing downstream: the agent that runs answers it again. */
    answerInitializeAgain: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'initialize' || !context.downstream) return;
      enqueue.assign({ editor: event.context });
      enqueue.emit({ type: 'acp.respond', requestId: event.requestId, result: initializeAnswer(context.name, context.downstream) });
    }),
    refuseInitialize: enqueueActions(({ context, event, enqueue }) => {
      if (!context.initializeRequest) return;
      const error =
        event.type === 'agent.bootFailed'
          ? RpcError.internalError(event.message).toErrorObject()
          : event.type === 'agent.gaveUp'
            ? RpcError.because('agent_failed', `Internal error: ${gaveUp(context.name)}`).toErrorObject()
            : requestFailure(context.name, (event as { error?: unknown }).error, context.restarts);
      enqueue.emit({ type: 'acp.error', requestId: context.initializeRequest, error });
      enqueue.assign({ initializeRequest: undefined });
    }),

    // --- requests
    defer: enqueueActions(({ context, event, enqueue, self }) => {
      const request = event as AgentRequestEvent;
      const sessions = withoutClosed(context.sessions, request);
      enqueue.assign({ waiting: [...context.waiting, request], sessions });
      if (sessions !== context.sessions) enqueue(forgetMcpServers(self, context.sessions, sessions));
    }),
    forward: enqueueActions(({ context, event, enqueue, self }) => {
      const request = event as AgentRequestEvent;
      const sessions = withoutClosed(context.sessions, request);
      // A new turn: no tool of an earlier (cancelled, unanswered) turn of the session runs in it.
      const sessionId = request.type === 'session.prompt' ? (request.params?.sessionId as string | undefined) : undefined;
      const turn = sessionId === undefined ? {} : { cancelledTurns: withoutKey(context.cancelledTurns, sessionId), prompts: { ...context.prompts, [request.requestId]: { sessionId, request, continuations: 0, cancelled: false } } };
      if (sessionId !== undefined) enqueue(() => newTurn(self, sessionId));
      enqueue.assign({ sessions, inFlight: context.inFlight + 1, ...turn });
      if (sessions !== context.sessions) enqueue(forgetMcpServers(self, context.sessions, sessions));
      enqueue.sendTo('agentRequests', { type: 'request.forward', request, agentCloses: Boolean(context.downstream?.agentCapabilities?.sessionCapabilities?.close) });
    }),
    /** A prompt the host's line wrote to the agent itself (session-route.ts): in flight, a new turn of its session, as `forward` counts one. */
    countForwardedPrompt: enqueueActions(({ context, event, enqueue, self }) => {
      if (event.type !== 'prompt.forwarded') return;
      const { sessionId, request } = event;
      enqueue(() => newTurn(self, sessionId));
      const prompts = { ...context.prompts, [request.requestId]: { sessionId, request, continuations: 0, cancelled: false } };
      enqueue.assign({ inFlight: context.inFlight + 1, cancelledTurns: withoutKey(context.cancelledTurns, sessionId), prompts });
    }),
    answerForwarded: enqueueActions(({ context, event, enqueue, self }) => {
      if (event.type !== 'request.settled') return;
      let sessions = context.sessions;
      if (event.opened) {
        const { sessionId, mcpServers, ...session } = event.opened;
        enqueue(() => handlesOf(self).mcpServers.set(sessionId, mcpServers));
        sessions = { ...sessions, [sessionId]: session };
      }
      if (event.deleted) {
        sessions = withoutKey(sessions, event.deleted);
        enqueue(forgetMcpServers(self, context.sessions, sessions));
      }
      // The turn is over: its tool calls no longer run, whatever the agent last said of them.
      const ended = event.method === AGENT_METHODS.session_prompt;
      if (ended && event.sessionId !== undefined) enqueue(() => forgetTools(self, event.sessionId));
      const cancelledTurns = ended ? withoutKey(context.cancelledTurns, event.sessionId) : context.cancelledTurns;
      const inFlightPrompt = context.prompts[event.requestId];
      const prompts = withoutKey(context.prompts, event.requestId);
      enqueue.assign({ sessions, inFlight: context.inFlight - 1, cancelledTurns, prompts });
      const turnTools = inFlightPrompt ? handlesOf(self).turnTools.get(inFlightPrompt.sessionId) ?? noTurnTools : noTurnTools;
      // A rate limit or an overload ended the turn before any tool call: sent again after a wait (rate-limited-prompts.ts).
      const limited = inFlightPrompt && 'error' in event.answer ? rateLimitedRetryOf({ ...context, sessions }, inFlightPrompt, event.answer.error, turnTools) : undefined;
      if (limited && inFlightPrompt) {
        enqueue.assign({ cut: { ...context.cut, [inFlightPrompt.sessionId]: limited.cut } });
        enqueue.emit(limited.notice);
        enqueue.raise({ type: 'rateLimit.retry', sessionId: inFlightPrompt.sessionId }, { delay: limited.delayMs, id: rateLimitRetryId(inFlightPrompt.sessionId) });
        return;
      }
      // The adapter answered with its inner CLI's death (claude-agent-acp #338): a crash. Its process is killed, so it restarts, and the prompt is cut as under a kill.
      const death = 'error' in event.answer ? innerCliDeathOf(event.answer.error) : undefined;
      const error = death !== undefined ? innerCliDeathError(context.name, death, context.restarts) : 'error' in event.answer ? event.answer.error : undefined;
      if (death !== undefined) {
        enqueue(() => killAgentProcess(self, { kind: 'inner_cli_dead', detail: death }));
        // Until its exit is seen, a prompt sent now would reach the dying process and fail too.
        enqueue.raise({ type: 'agent.innerCliDying' });
      }
      // The agent died under the prompt: kept, to continue once its session is re-attached (the crash policy allows it).
      const cut = inFlightPrompt && error ? cutOfCrash({ ...context, sessions }, inFlightPrompt, error, turnTools) : undefined;
      if (cut && inFlightPrompt) {
        enqueue.assign({ cut: { ...context.cut, [inFlightPrompt.sessionId]: cut } });
        enqueue.emit(cutNotice(context, inFlightPrompt.sessionId, cut));
        return;
      }
      if ('result' in event.answer) enqueue.emit({ type: 'acp.respond', requestId: event.requestId, result: event.answer.result });
      else enqueue.emit({ type: 'acp.error', requestId: event.requestId, error: error ?? event.answer.error });
    }),
    /** What waited for the agent, served now in the order it came. */
    serveWaiting: enqueueActions(({ context, enqueue }) => {
      if (context.waiting.length === 0) return;
      enqueue.assign({ waiting: [] });
      for (const waiting of context.waiting) enqueue.raise(waiting as PassthroughEvent);
    }),
    /** Given up: what waited for a fresh start is refused (one attempt per request); anything else is served (and refused or starts the agent again). */
    settleWaitingOnFailure: enqueueActions(({ context, enqueue }) => {
      enqueue.assign({ waiting: [], restartAttempted: false });
      for (const waiting of context.waiting) {
        if (!context.restartAttempted) enqueue.raise(waiting as PassthroughEvent);
        else if ('requestId' in waiting && typeof waiting.requestId === 'string') {
          enqueue.emit({ type: 'acp.error', requestId: waiting.requestId, error: RpcError.because('agent_failed', `Internal error: ${context.failure}`).toErrorObject() });
        }
      }
    }),
    refuseFailed: enqueueActions(({ context, event, enqueue, self }) => {
      const request = event as AgentRequestEvent;
      const sessions = withoutClosed(context.sessions, request);
      enqueue.assign({ sessions });
      if (sessions !== context.sessions) enqueue(forgetMcpServers(self, context.sessions, sessions));
      enqueue.emit({ type: 'acp.error', requestId: request.requestId, error: RpcError.because('agent_failed', `Internal error: ${context.failure}; it was given up (a new session starts it again)`).toErrorObject() });
    }),
    /** The agent was given up and a session asks for it: a fresh supervisor starts it again, as a parent would restart a child that gave up. */
    startAgain: enqueueActions(({ context, event, enqueue }) => {
      enqueue.assign({ waiting: [...context.waiting, event as AgentHandlerEvent], restartAttempted: true, failure: undefined });
    }),
    /**
     * Passed on to the agent. The cancelled turn's tools are interrupted: the agent owes the
     * turn's end now, so a tool it last said runs no longer holds the watchdog to the tool limit
     * (an agent frozen right then is caught after `hangAfter`, as with no tool running).
     */
    cancelPrompt: enqueueActions(({ context, event, enqueue, self }) => {
      if (event.type !== 'session.cancel') return;
      const handles = handlesOf(self);
      if (handles.subagents.has(event.sessionId)) {
        // A subagent child's work, cancelled on the agent when the child advertised it (ACP forbids it otherwise); it has no turn here.
        if (handles.cancellableChildren.has(event.sessionId)) {
          enqueue(() => {
            if (handles.client) cancelChild(handles.client, event.sessionId);
          });
        }
        return;
      }
      const prompts = Object.fromEntries(Object.entries(context.prompts).map(([id, prompt]) => [id, prompt.sessionId === event.sessionId ? { ...prompt, cancelled: true } : prompt]));
      enqueue.assign({ cancelledTurns: { ...context.cancelledTurns, [event.sessionId]: true }, prompts });
      // A cut prompt waiting for its session's re-attachment: it ends cancelled, nothing is sent again.
      const cut = context.cut[event.sessionId];
      if (cut) {
        if (cut.rateLimitRetries !== undefined) enqueue.cancel(rateLimitRetryId(event.sessionId));
        enqueue.assign({ cut: withoutKey(context.cut, event.sessionId) });
        enqueue.emit({ type: 'acp.respond', requestId: cut.request.requestId, result: { stopReason: 'cancelled' } });
      }
      enqueue(() => {
        const client = handlesOf(self).client;
        if (client) cancelPrompt(client, event.sessionId);
      });
    }),

    // --- the agent's side
    /**
     * Passed on to the editor in order, except the replay of a session being re-attached (the
     * updates of sessions the host takes from the client itself never come here:
     * update-route.ts). One `acp.updates` output for the lot (one `acp.update` when it is one):
     * XState's emit action per update cost more than the hop's work.
     */
    passUpdates: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'agent.updates') return;
      const { reattaching } = context;
      // The editor has the history of a session being re-attached (state updates pass: they are its news).
      const passed = reattaching === undefined ? event.updates : event.updates.filter(({ sessionId, update }) => sessionId !== reattaching || stateKinds.has(update.sessionUpdate));
      const [only] = passed;
      if (passed.length === 1 && only) enqueue.emit({ type: 'acp.update', sessionId: only.sessionId, update: only.update });
      else if (passed.length > 1) enqueue.emit({ type: 'acp.updates', updates: passed });
    }),
    relayToEditor: enqueueActions(({ context, event, enqueue, self }) => {
      if (event.type !== 'agent.relay') return;
      enqueue.assign({ relays: { ...context.relays, [event.key]: event.method } });
      const asked = { type: 'acp.clientRequest', key: event.key, method: event.method, params: event.params } as const;
      const sessionId = (event.params as { sessionId?: unknown } | undefined)?.sessionId;
      if (typeof sessionId === 'string') enqueue(() => trackTools(self, sessionId, (tools) => toolsAfterOutput(tools, asked)));
      enqueue.emit({ type: 'acp.clientRequest', key: event.key, method: event.method, params: event.params });
    }),
    answerRelay: enqueueActions(({ context, event, enqueue, self }) => {
      if (event.type !== 'client.response' && event.type !== 'client.error') return;
      if (!(event.key in context.relays)) return;
      enqueue.assign({ relays: withoutKey(context.relays, event.key) });
      const answer = event.type === 'client.response' ? event.result : undefined;
      enqueue(() => {
        for (const sessionId of handlesOf(self).turnTools.keys()) trackTools(self, sessionId, (tools) => toolsAfterAnswer(tools, event.key, answer, event.type === 'client.error'));
      });
      enqueue(() => {
        const { relays } = handlesOf(self);
        const relay = relays.get(event.key);
        relays.delete(event.key);
        if (event.type === 'client.response') relay?.resolve(event.result);
        else relay?.reject(RpcError.fromErrorObject(event.error));
      });
    }),
    /**
     * The agent's client ended: its requests to the editor died with it (an answer would
     * reach nobody, and a relay left open would keep the hang watchdog disarmed), and no
     * tool of its turns runs any more.
     */
    dropRelays: enqueueActions(({ context, enqueue, self }) => {
      enqueue.assign({ relays: {}, cancelledTurns: {} });
      enqueue(() => {
        forgetTools(self);
        const gone = RpcError.because('agent_crashed', `${context.name} ended before the editor answered`, {}, { failure: 'peer_lost' });
        const { relays } = handlesOf(self);
        for (const [key, relay] of [...relays]) {
          relays.delete(key);
          relay.reject(gone);
        }
      });
    }),
    reportLineDropped: enqueueActions(({ event, enqueue }) => {
      if (event.type === 'agent.lineDropped') enqueue.emit({ type: 'agent.lineDropped', bytes: event.bytes, limit: event.limit, what: event.what });
    }),

    // --- restarts
    /** The agent process ended and will be restarted: every open session is restarting. */
    announceRestart: enqueueActions(({ context, event, enqueue, self }) => {
      if (event.type !== 'agent.exited') return;
      enqueue(() => forgetTools(self));
      enqueue.assign({ restarts: event.restarts, cancelledTurns: {} });
      for (const sessionId of Object.keys(context.sessions)) enqueue.emit({ type: 'session.restarting', sessionId, restarts: event.restarts, exit: event.exit });
    }),
    noteRestart: enqueueActions(({ event, enqueue }) => {
      if (event.type === 'agent.restarted') enqueue.assign({ restarts: event.restarts });
    }),
    queueReattach: enqueueActions(({ context, event, enqueue }) => {
      enqueue.assign({ restartedAgent: (event as unknown as { output: InitializeResponse }).output, reattachQueue: Object.keys(context.sessions) });
    }),
    /** Sessions closed while the restart was under way are not re-attached. */
    pruneQueue: enqueueActions(({ context, enqueue }) => {
      const queue = context.reattachQueue.filter((sessionId) => sessionId in context.sessions);
      if (queue.length !== context.reattachQueue.length) enqueue.assign({ reattachQueue: queue });
    }),
    markReattaching: enqueueActions(({ context, enqueue }) => {
      enqueue.assign({ reattaching: context.reattachQueue[0] });
    }),
    clearReattaching: enqueueActions(({ enqueue }) => {
      enqueue.assign({ reattaching: undefined });
    }),
    announceRecovered: enqueueActions(({ context, enqueue, self }) => {
      const [sessionId, ...rest] = context.reattachQueue;
      enqueue.assign({ reattachQueue: rest });
      // Closed while its re-attachment was under way: the editor hears nothing more of it.
      if (sessionId !== undefined && sessionId in context.sessions) enqueue.emit({ type: 'session.recovered', sessionId, restarts: context.restarts });
      // Its cut prompt goes on in the same request: sent again, or the continuation text (crash-policy.ts).
      const cut = sessionId === undefined ? undefined : context.cut[sessionId];
      if (sessionId === undefined || !cut) return;
      const request = continuationRequest(context.name, cut, handlesOf(self).turnTools.get(sessionId) ?? noTurnTools);
      const sending = sendingCut(context, sessionId, cut, request);
      enqueue.assign(sending.assign);
      enqueue.sendTo('agentRequests', sending.forward);
    }),
    /** The wait after a rate limit is over: the prompt is sent again as it was (unless cancelled meanwhile: then no cut is left). */
    retryRateLimited: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'rateLimit.retry') return;
      const cut = context.cut[event.sessionId];
      if (!cut || cut.rateLimitRetries === undefined || !(event.sessionId in context.sessions)) return;
      const sending = sendingCut(context, event.sessionId, cut, cut.request);
      enqueue.assign(sending.assign);
      enqueue.sendTo('agentRequests', sending.forward);
    }),
    /** Cannot be re-attached: the session is over (the next prompt says unknown session). */
    failReattach: enqueueActions(({ context, event, enqueue, self }) => {
      const [sessionId, ...rest] = context.reattachQueue;
      enqueue.assign({ reattachQueue: rest });
      if (sessionId === undefined || !(sessionId in context.sessions)) return; // closed meanwhile: nothing to report
      const sessions = withoutKey(context.sessions, sessionId);
      for (const answer of cutAnswers(context, [sessionId])) enqueue.emit(answer);
      enqueue.assign({ sessions, cut: withoutKey(context.cut, sessionId) });
      enqueue(forgetMcpServers(self, context.sessions, sessions));
      const why = errorMessage((event as { error?: unknown }).error);
      enqueue.emit({ type: 'session.failed', sessionId, restarts: context.restarts, reason: `${context.name} could not re-attach the session after its restart: ${why}` });
    }),
    /** The restarted agent refused initialize: no session can be re-attached. */
    failEverySession: enqueueActions(({ context, event, enqueue, self }) => {
      const why = errorMessage((event as { error?: unknown }).error);
      for (const answer of cutAnswers(context, Object.keys(context.cut))) enqueue.emit(answer);
      enqueue.assign({ sessions: {}, reattachQueue: [], cut: {} });
      enqueue(forgetMcpServers(self, context.sessions, {}));
      for (const sessionId of Object.keys(context.sessions)) enqueue.emit({ type: 'session.failed', sessionId, restarts: context.restarts, reason: `${context.name} could not be initialized again after its restart: ${why}` });
    }),
    /** The supervisor gave up: every open session is over, the host hears it once per session. */
    giveUp: enqueueActions(({ context, enqueue, self }) => {
      for (const answer of cutAnswers(context, Object.keys(context.cut))) enqueue.emit(answer);
      enqueue.assign({ failure: gaveUp(context.name), sessions: {}, cut: {} });
      enqueue(forgetMcpServers(self, context.sessions, {}));
      for (const sessionId of Object.keys(context.sessions)) enqueue.emit({ type: 'session.failed', sessionId, restarts: context.restarts, reason: gaveUp(context.name) });
    }),
    keepDownstream: enqueueActions(({ event, enqueue }) => {
      enqueue.assign({ downstream: (event as unknown as { output: InitializeResponse }).output });
    }),
    failRestart: enqueueActions(({ context, event, enqueue }) => {
      const failure = event.type === 'agent.bootFailed' ? event.message : event.type === 'agent.gaveUp' ? gaveUp(context.name) : `${context.name} could not be initialized again: ${errorMessage((event as { error?: unknown }).error)}`;
      enqueue.assign({ failure });
    }),
    leaveRecovery: enqueueActions(({ enqueue }) => {
      enqueue.assign({ restartAttempted: false, reattachQueue: [], restartedAgent: undefined });
    }),
    /** Ready: the host takes the updates of the sessions it watches from the client itself (update-route.ts). */
    updatesDirect: enqueueActions(({ enqueue, self }) => enqueue(() => rebindUpdateWatchers(self, true))),
    /** No longer ready (the agent restarts, a session is re-attached, it was given up): every session's updates come through here again. */
    updatesThroughMachine: enqueueActions(({ enqueue, self }) => enqueue(() => rebindUpdateWatchers(self, false))),
  },
}).createMachine({
  id: 'acpPassthrough',
  context: ({ input, self }) => {
    createHandles(self, input);
    return {
      name: input.name,
      editor: undefined,
      initializeRequest: undefined,
      downstream: undefined,
      sessions: {},
      waiting: [],
      inFlight: 0,
      relays: {},
      cancelledTurns: {},
      reattachQueue: [],
      reattaching: undefined,
      restartedAgent: undefined,
      restarts: 0,
      failure: undefined,
      restartAttempted: false,
      crash: input.crash ?? {},
      prompts: {},
      cut: {},
    };
  },
  invoke: [
    { id: 'agentProcess', src: 'agentProcess', input: ({ self }) => ({ owner: self }) },
    { id: 'agentRequests', src: 'agentRequests', input: ({ self }) => ({ owner: self }) },
  ],
  initial: 'idle',
  on: {
    '*': { guard: 'isRequest', actions: 'defer', description: 'A request while the agent is not ready: it waits, and is served in order once the agent is.' },
    initialize: [
      { guard: 'hasDownstream', actions: 'answerInitializeAgain', description: 'The agent that runs answers it again: booting another would leak a process and lose the sessions.' },
      { actions: 'defer' },
    ],
    'session.cancel': { actions: 'cancelPrompt' },
    'client.response': { actions: 'answerRelay' },
    'client.error': { actions: 'answerRelay' },
    'prompt.forwarded': { actions: 'countForwardedPrompt', description: "A prompt the host's line to its session wrote to the agent itself; its answer comes as request.settled." },
    'request.settled': { actions: 'answerForwarded', description: 'A forwarded request is answered (or failed: agent_crashed when the agent died under it).' },
    'agent.updates': { actions: 'passUpdates', description: 'Passed on to the editor, except the replay of a session being re-attached.' },
    'agent.relay': { actions: 'relayToEditor' },
    'agent.clientGone': { actions: 'dropRelays' },
    'agent.lineDropped': { actions: 'reportLineDropped' },
    'agent.exited': { actions: 'announceRestart' },
    'agent.restarted': { actions: 'noteRestart' },
    'rateLimit.retry': { description: 'Not ready (the agent restarts): the waiting prompt goes on once its session is re-attached.' },
    'xstate.error.actor.agent': { description: 'The supervisor failed: the agent process reports it as agent.gaveUp.' },
  },
  states: {
    idle: {
      description: 'No agent process: the editor has not initialized (or its initialize failed).',
      on: { initialize: { target: 'booting', actions: 'takeInitialize' } },
    },
    booting: {
      description: "The editor's initialize: the agent starts under its supervisor and is initialized with the editor's capabilities.",
      entry: 'bootAgent',
      initial: 'starting',
      on: {
        'agent.gaveUp': { target: 'idle', actions: 'refuseInitialize' },
      },
      states: {
        starting: {
          on: {
            'agent.booted': 'initializing',
            'agent.bootFailed': { target: '#acpPassthrough.idle', actions: 'refuseInitialize' },
          },
        },
        initializing: {
          tags: [AGENT_OWES_TAG],
          invoke: {
            src: 'initializeAgent',
            input: ({ self }) => ({ owner: self }),
            onDone: { target: '#acpPassthrough.ready', actions: 'answerInitialize' },
            onError: { target: '#acpPassthrough.idle', actions: ['refuseInitialize', 'shutDownAgent'] },
          },
        },
      },
    },
    ready: {
      description: 'Requests go to the agent (through agentRequests), answered as it answers.',
      entry: ['leaveRecovery', 'updatesDirect', 'serveWaiting'],
      exit: 'updatesThroughMachine',
      on: {
        '*': { guard: 'isRequest', actions: 'forward' },
        'agent.clientGone': { target: 'recovering', actions: 'dropRelays', description: 'The agent process is gone: the requests it owed fail (agent_crashed), what comes next waits.' },
        'agent.exited': { target: 'recovering', actions: 'announceRestart', description: 'The agent process ended and will be restarted: session.restarting for each open session.' },
        'rateLimit.retry': { actions: 'retryRateLimited', description: 'The wait after a rate limit is over: the prompt is sent again.' },
        'agent.innerCliDying': { target: 'recovering', description: 'The adapter answered that its inner CLI is dead and its process is being killed: what comes next waits for the restart, not the dying process.' },
        'agent.restarted': { target: 'recovering.initializing', actions: 'noteRestart' },
        'agent.gaveUp': { target: 'failed', actions: 'giveUp' },
      },
    },
    recovering: {
      description: 'The agent process restarts: initialized again, then every open session re-attached, one after the other; requests wait.',
      initial: 'awaitingRestart',
      on: {
        'agent.exited': { target: '.awaitingRestart', actions: 'announceRestart', description: 'It died again (while initializing or re-attaching, say): the recovery starts over after its restart.' },
        'agent.restarted': { target: '.initializing', reenter: true, actions: 'noteRestart' },
        'agent.gaveUp': { target: 'failed', actions: 'giveUp' },
      },
      states: {
        awaitingRestart: { description: 'The process is down; the supervisor restarts it after its backoff (or gives up).' },
        initializing: {
          tags: [AGENT_OWES_TAG],
          invoke: {
            src: 'initializeAgent',
            input: ({ self }) => ({ owner: self }),
            onDone: { target: 'next', actions: 'queueReattach' },
            onError: [
              { guard: 'agentLost', target: 'awaitingRestart' },
              { target: '#acpPassthrough.ready', actions: 'failEverySession' },
            ],
          },
        },
        next: {
          entry: 'pruneQueue',
          always: [{ guard: 'nothingToReattach', target: '#acpPassthrough.ready' }, { target: 'reattaching' }],
        },
        reattaching: {
          description: 'session/resume, or session/load with its replay hidden from the editor and drained (_acp-warden/drain round trips).',
          tags: [AGENT_OWES_TAG],
          entry: 'markReattaching',
          exit: 'clearReattaching',
          invoke: {
            src: 'reattachSession',
            input: ({ context, self }) => {
              const sessionId = context.reattachQueue[0] as string;
              return { owner: self, sessionId, session: context.sessions[sessionId] as OpenSession, agent: context.restartedAgent as InitializeResponse };
            },
            onDone: { target: 'next', actions: 'announceRecovered' },
            onError: [
              { guard: 'agentLost', target: 'awaitingRestart', description: 'The new process died too: its restart re-attaches the session (or the supervisor gives up).' },
              { target: 'next', actions: 'failReattach', description: 'The agent will not re-attach it: session.failed, naming why.' },
            ],
          },
        },
      },
    },
    failed: {
      description: 'The supervisor gave up: requests are refused (agent_failed), except a new, resumed or loaded session, which starts the agent again.',
      entry: 'settleWaitingOnFailure',
      on: {
        '*': [
          { guard: 'opensSession', target: 'restarting', actions: 'startAgain' },
          { guard: 'isRequest', actions: 'refuseFailed' },
        ],
      },
    },
    restarting: {
      description: 'A fresh supervisor after giving up; what asked for it waits, and gets one attempt.',
      entry: 'bootAgent',
      initial: 'starting',
      on: {
        'agent.gaveUp': { target: 'failed', actions: 'failRestart' },
        'agent.restarted': { target: 'recovering.initializing', actions: 'noteRestart' },
      },
      states: {
        starting: {
          on: {
            'agent.booted': 'initializing',
            'agent.bootFailed': { target: '#acpPassthrough.failed', actions: 'failRestart' },
          },
        },
        initializing: {
          tags: [AGENT_OWES_TAG],
          invoke: {
            src: 'initializeAgent',
            input: ({ self }) => ({ owner: self }),
            onDone: { target: '#acpPassthrough.ready', actions: 'keepDownstream' },
            onError: [
              { guard: 'agentLost', target: '#acpPassthrough.recovering', description: 'Its exit restarts it (or gives up again); what waits goes to what comes next.' },
              { target: '#acpPassthrough.failed', actions: ['failRestart', 'shutDownAgent'] },
            ],
          },
        },
      },
    },
  },
});
