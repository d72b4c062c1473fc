/**
 * The host agent's dispatch of what the editor sends (requests, cancels, client answers).
 */
import { CLIENT_METHODS } from '../../protocol/methods.js';
import type { AgentHandlerEvent, AgentRequestEvent } from '../../protocol/native-agent.js';
import { RpcError } from '../../jsonrpc/rpc-error.js';
import { type InnerAgent, type Live } from './live.js';
import { AGENT_META_KEY } from './live.js';
import { emit, fail } from './delivery.js';
import { answerClientCall, innerAgent, releaseAgent, sendTo, sendToSession } from './inner-agents.js';
import { asksForSubagents } from '../../acp/subagent-updates.js';
import { attach } from './attach.js';
import { claimThen } from './ownership.js';
import { failedWrite, journalFailure } from './journal-failures.js';
import { holdAttaches } from './attach-jobs.js';
import { listSessions } from './listing.js';
import { deleteSession, fork } from './fork-delete.js';
import { closed } from './session-record.js';
import { cancelCame, promptCame } from './turns.js';
import { cancelWork } from './work-cancel.js';
import { cancelChildWork } from './subagents.js';
import { journalCall, journalFailureAnswers, recordPermission } from './journal-writes.js';
import { sessionFailedError } from '../../session/session-machine.js';

export function onEditorEvent(live: Live, event: AgentHandlerEvent): void {
  switch (event.type) {
    case 'initialize': {
      live.context = event.context;
      live.pending.set(event.requestId, { kind: 'initialize', agent: live.input.defaultAgent, editor: true });
      innerAgent(live, live.input.defaultAgent).ref.send(event);
      return;
    }
    case 'initialized': {
      // Told again with subagents asked for now (a `warden serve` client that takes them): an agent
      // running no session starts again when next used, initialized with them; a busy one keeps what it was told until it starts again.
      const retell = live.context !== undefined && asksForSubagents(live.context) !== asksForSubagents(event.context);
      live.context = event.context;
      live.initialized = true;
      for (const inner of live.inner.values()) if (!inner.waiting) inner.ref.send(event);
      if (retell) for (const name of [...live.inner.keys()]) releaseAgent(live, name);
      return;
    }
    case 'session.cancel': {
      const session = live.sessions.get(event.sessionId);
      if (!session) {
        cancelChildWork(live, event);
        return;
      }
      // A `requestId` is a $/cancel_request of that prompt; session/cancel has none (the server gives '').
      cancelCame(live, session, event.requestId || undefined);
      return;
    }
    case 'client.response':
    case 'client.error': {
      const call = live.clientCalls.get(event.key);
      if (!call) return;
      live.clientCalls.delete(event.key);
      if (call.method === CLIENT_METHODS.session_request_permission && call.sessionId) {
        const outcome = event.type === 'client.response' ? (event.result as { outcome?: unknown } | undefined)?.outcome : { outcome: 'error', error: event.error.message };
        recordPermission(live, call.sessionId, call, outcome);
        live.sessions.get(call.sessionId)?.machine.send({ type: 'permission.answered' });
      }
      answerClientCall(live, call, call.sessionId ? live.sessions.get(call.sessionId) : undefined, { ...event, key: call.key });
      return;
    }
    case 'ext.notification':
      innerAgent(live, live.input.defaultAgent).ref.send(event);
      return;
    default:
      onEditorRequest(live, event);
  }
}

function onEditorRequest(live: Live, request: AgentRequestEvent): void {
  const sessionId = typeof request.params.sessionId === 'string' ? request.params.sessionId : undefined;
  // A prompt's answer says its session itself (turns.ts): the host keeps no record of a prompt.
  if (sessionId !== undefined && request.type !== 'session.prompt') live.requestSessions.set(request.requestId, sessionId);
  // A store that fails (a damaged page, say) fails the request that met it, not the host.
  journalFailureAnswers(live, request.requestId, sessionId, () => serveEditorRequest(live, request, sessionId));
}

function serveEditorRequest(live: Live, request: AgentRequestEvent, sessionId: string | undefined): void {
  const { params } = request;
  switch (request.type) {
    case 'session.new': {
      const meta = params._meta as Record<string, unknown> | undefined;
      const name = typeof meta?.[AGENT_META_KEY] === 'string' ? (meta[AGENT_META_KEY] as string) : live.input.defaultAgent;
      let inner: InnerAgent;
      try {
        inner = innerAgent(live, name);
      } catch (error) {
        fail(live, request.requestId, RpcError.invalidParams((error as Error).message, { agent: name }));
        return;
      }
      live.pending.set(request.requestId, { kind: 'new', agent: name, cwd: params.cwd as string, context: request.context });
      sendTo(inner, request);
      return;
    }
    case 'session.list':
      listSessions(live, request);
      return;
    case 'session.load':
    case 'session.resume':
      attach(live, request, request.type === 'session.load' ? 'load' : 'resume');
      return;
    case 'session.prompt': {
      const session = sessionId ? live.sessions.get(sessionId) : undefined;
      if (!session || !sessionId) {
        const moved = sessionId ? live.moved.get(sessionId) : undefined;
        if (moved) return fail(live, request.requestId, moved, sessionId);
        const why = sessionId ? live.failed.get(sessionId) : undefined;
        fail(live, request.requestId, sessionId && why
          ? sessionFailedError(sessionId, why)
          : RpcError.resourceNotFound(`session ${sessionId}`, { sessionId }), sessionId);
        return;
      }
      // Its turn: the session's machine keeps it, queues it (FIFO) and starts it.
      promptCame(live, session, request);
      return;
    }
    case 'session.fork':
      fork(live, request);
      return;
    case 'toolCall.cancel':
    case 'terminal.cancel':
      cancelWork(live, request, sessionId);
      return;
    case 'session.delete':
      deleteSession(live, request);
      return;
    case 'session.setMode':
    case 'session.setConfigOption': {
      const session = sessionId ? live.sessions.get(sessionId) : undefined;
      if (!session || !sessionId) {
        live.pending.set(request.requestId, { kind: 'other' });
        sendTo(innerAgent(live, live.input.defaultAgent), request);
        return;
      }
      const config = request.type === 'session.setConfigOption' && typeof params.configId === 'string' && (typeof params.value === 'string' || typeof params.value === 'boolean') ? { configId: params.configId, value: params.value } : undefined;
      live.pending.set(request.requestId, { kind: 'setting', sessionId, modeId: request.type === 'session.setMode' ? (params.modeId as string) : undefined, config });
      sendToSession(live, session, request);
      return;
    }
    case 'session.close': {
      const session = sessionId ? live.sessions.get(sessionId) : undefined;
      if (!session || !sessionId) {
        // Known only to the journal (a previous host): closing it is just a record, unless
        // another warden that still runs has it live (refused, naming it, like load and delete).
        const answer = () => emit(live, { type: 'acp.respond', requestId: request.requestId, result: {} });
        if (!sessionId) return answer();
        journalCall(live, sessionId, (journal) => journal.getSession(sessionId), (known) => {
          if (!known.ok) {
            failedWrite(live, sessionId, known.error);
            return fail(live, request.requestId, journalFailure(known.error, sessionId));
          }
          if (!known.value) return answer();
          claimThen(live, request.requestId, sessionId, () => {
            closed(live, sessionId);
            answer();
          });
        });
        return;
      }
      // ACP: a close cancels the session's work as session/cancel does, then frees it.
      session.machine.send({ type: 'cancel' });
      const inner = innerAgent(live, session.agent);
      // The native agent's own capabilities, not what its agent advertised: a passthrough serves close itself (it forgets the session) even for an agent without it.
      if (inner.agent.capabilities?.sessionCapabilities?.close) {
        live.pending.set(request.requestId, { kind: 'close', sessionId, holds: holdAttaches(live, sessionId) });
        sendTo(inner, request);
      } else {
        closed(live, sessionId);
        emit(live, { type: 'acp.respond', requestId: request.requestId, result: {} });
      }
      return;
    }
    default: {
      // Auth, extensions: the session's agent (or the default) answers.
      const session = sessionId ? live.sessions.get(sessionId) : undefined;
      live.pending.set(request.requestId, { kind: 'other' });
      sendTo(innerAgent(live, session?.agent ?? live.input.defaultAgent), request);
    }
  }
}
