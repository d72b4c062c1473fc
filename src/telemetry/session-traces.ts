/**
 * The spans and metrics of sessions, from facts: what the editor and warden said to each
 * other (editor-tap.ts reads them off the editor's connection) and what the host told
 * (`host.on`: sessions opened, closed, failed; agent restarts and recoveries). No machine is
 * instrumented: this is a consumer at the edge.
 *
 * ```
 * acp_warden.session                 session/new (or load, resume) .. close, failure, exit
 * acp_warden.turn                    session/prompt .. its stop reason; parent: the editor's
 * │                                  _meta.traceparent if it sent one (linked to the session),
 * │                                  else the session
 * ├── acp_warden.tool_call           tool_call .. completed / failed (or the turn's end)
 * ├── acp_warden.permission          session/request_permission .. the editor's answer
 * ├── acp_warden.agent.restart       the agent process's exit .. the new process started
 * └── acp_warden.session.recovery    the new process .. the conversation resumed (or failed)
 * ```
 * A restart outside a turn is a child of the session span.
 *
 * Texts that come from agents or the command line (agent names with their command line, tool
 * titles, error messages, failure reasons) are redacted as the log is (src/port/redact.ts): a
 * telemetry backend is one more place a key must not reach.
 */
import { context as otelContext, ROOT_CONTEXT, SpanStatusCode, trace, type Attributes, type Context, type Link, type Span, type Tracer } from '@opentelemetry/api';
import { SEQ_META_KEY } from '../acp/agent-server.js';
import type { HostEvent } from '../host/host-event.js';
import { knownSecretValues, redactSecrets } from '../port/redact.js';
import { attributes, spanNames } from './names.js';
import type { WardenMetrics } from './warden-metrics.js';
import { contextFromMeta } from './trace-meta.js';

/** How a session was asked for. */
export type SessionRequestKind = 'new' | 'load' | 'resume' | 'fork';

interface SessionTrace {
  readonly sessionId: string;
  readonly span: Span;
  readonly context: Context;
  agent: string | undefined;
  /** Counted in `sessions.open` (with this agent). */
  counted: string | undefined;
  /** The session's turns not answered yet, in arrival order: the first is the one running (turns are FIFO). */
  readonly turns: TurnTrace[];
  readonly tools: Map<string, Span>;
  /** The highest journal seq of a tool call update seen (`_meta["acp-warden/seq"]`): each counts once, however many connections it is sent to, and a replay's are history. */
  lastSeq: number;
  /** The agent process's restart in progress: its span, and which part (`restart`, then `recovery`). */
  recovering: { phase: 'restart' | 'recovery'; span: Span; readonly parent: Context; readonly restarts: number } | undefined;
}

interface TurnTrace {
  readonly sessionId: string;
  readonly span: Span;
  readonly context: Context;
  readonly startedAt: number;
}

interface Pending {
  readonly span: Span;
  readonly context: Context;
  readonly kind: SessionRequestKind | 'initialize';
  readonly sessionId: string | undefined;
}

/** Keys of JSON-RPC ids (a number and a string of the same digits are different ids). */
const keyOf = (id: unknown): string => JSON.stringify(id);

/** The spans and metrics of one host's sessions. */
export class SessionTraces {
  readonly #tracer: Tracer;
  readonly #metrics: WardenMetrics | undefined;
  readonly #sessions = new Map<string, SessionTrace>();
  /** Editor requests that open a session or initialize, by id. */
  readonly #pending = new Map<string, Pending>();
  readonly #turns = new Map<string, TurnTrace>();
  /** Permission requests to the editor, by id. */
  readonly #permissions = new Map<string, Span>();
  /** Sessions whose agent process is restarting, latest last. */
  readonly #restarting = new Set<SessionTrace>();

  /** `tracer` undefined: metrics only (OpenTelemetry's no-op tracer makes the spans). */
  constructor(tracer: Tracer | undefined, metrics: WardenMetrics | undefined) {
    this.#tracer = tracer ?? trace.getTracer('acp-warden-noop');
    this.#metrics = metrics;
  }

  /** The editor's `initialize`: the context it is served in (a native agent's process is started in it). */
  initializeAsked(id: unknown): Context {
    const span = this.#tracer.startSpan(spanNames.initialize, {}, ROOT_CONTEXT);
    const context = trace.setSpan(ROOT_CONTEXT, span);
    this.#pending.set(keyOf(id), { span, context, kind: 'initialize', sessionId: undefined });
    return context;
  }

  /** `session/new`, `session/load`, `session/resume`, `session/fork` (from `peer`, a daemon's client): the context it is served in (the session's). */
  sessionAsked(id: unknown, kind: SessionRequestKind, sessionId: string | undefined, meta: unknown, peer?: string): Context {
    const known = sessionId === undefined ? undefined : this.#sessions.get(sessionId);
    if (known) return known.context;
    const parent = contextFromMeta(meta) ?? ROOT_CONTEXT;
    const span = this.#tracer.startSpan(spanNames.session, { attributes: { [attributes.sessionHow]: kind, ...(sessionId ? sessionAttributes(sessionId) : {}), ...peerAttributes(peer) } }, parent);
    const context = trace.setSpan(parent, span);
    this.#pending.set(keyOf(id), { span, context, kind, sessionId });
    return context;
  }

  /** A session request or `initialize` answered. */
  answered(id: unknown, result: unknown, error: { code?: unknown; message?: unknown } | undefined): void {
    const key = keyOf(id);
    const pending = this.#pending.get(key);
    if (pending) {
      this.#pending.delete(key);
      this.#sessionAnswered(pending, result, error);
      return;
    }
    const turn = this.#turns.get(key);
    if (turn) {
      this.#turns.delete(key);
      this.#turnEnded(turn, result, error);
    }
  }

  /** `session/prompt` (from `peer`, a daemon's client): the turn's context (the agent gets it as `_meta.traceparent`). */
  turnAsked(id: unknown, sessionId: string, meta: unknown, peer?: string): Context {
    const session = this.#sessions.get(sessionId);
    const editor = contextFromMeta(meta);
    const parent = editor ?? session?.context ?? ROOT_CONTEXT;
    const links: Link[] = editor && session ? [{ context: session.span.spanContext() }] : [];
    const span = this.#tracer.startSpan(spanNames.turn, { attributes: { ...sessionAttributes(sessionId), ...agentAttributes(session?.agent), ...peerAttributes(peer) }, links }, parent);
    const turn: TurnTrace = { sessionId, span, context: trace.setSpan(parent, span), startedAt: performance.now() };
    this.#turns.set(keyOf(id), turn);
    session?.turns.push(turn);
    return turn.context;
  }

  /**
   * A `session/update` warden sent an editor (`meta`: its `_meta`, with its journal entry's seq): a tool call starting
   * or ending, within the running turn. An update seen before (a daemon sends each to every
   * client of the session, and replays history to a client that loads it) is not seen again.
   */
  update(sessionId: string, update: { sessionUpdate?: unknown; toolCallId?: unknown; title?: unknown; kind?: unknown; status?: unknown }, meta: Readonly<Record<string, unknown>> | undefined): void {
    // Most updates are text chunks: nothing more is read of them.
    if (update.sessionUpdate !== 'tool_call' && update.sessionUpdate !== 'tool_call_update') return;
    const session = this.#sessions.get(sessionId);
    const at = meta?.[SEQ_META_KEY];
    if (session && typeof at === 'number') {
      if (at <= session.lastSeq) return;
      session.lastSeq = at;
    }
    const turn = session?.turns[0];
    if (!session || !turn || typeof update.toolCallId !== 'string') return;
    let span = session.tools.get(update.toolCallId);
    if (!span && update.sessionUpdate === 'tool_call') {
      span = this.#tracer.startSpan(spanNames.toolCall, {
        attributes: {
          [attributes.operationName]: 'execute_tool',
          [attributes.toolCallId]: update.toolCallId,
          ...(typeof update.title === 'string' ? { [attributes.toolName]: redacted(update.title) } : {}),
          ...(typeof update.kind === 'string' ? { [attributes.toolKind]: update.kind } : {}),
          ...sessionAttributes(sessionId),
        },
      }, turn.context);
      session.tools.set(update.toolCallId, span);
    }
    if (!span) return;
    if (typeof update.status === 'string') span.setAttribute(attributes.toolStatus, update.status);
    if (update.status === 'completed' || update.status === 'failed') {
      if (update.status === 'failed') span.setStatus({ code: SpanStatusCode.ERROR, message: 'tool call failed' });
      span.end();
      session.tools.delete(update.toolCallId);
    }
  }

  /** warden asked the editor `session/request_permission` (request `id`). */
  permissionAsked(id: unknown, sessionId: string, toolCall: { toolCallId?: unknown; title?: unknown } | undefined): void {
    const session = this.#sessions.get(sessionId);
    const parent = session?.turns[0]?.context ?? session?.context ?? ROOT_CONTEXT;
    const span = this.#tracer.startSpan(spanNames.permission, {
      attributes: {
        ...sessionAttributes(sessionId),
        ...(typeof toolCall?.toolCallId === 'string' ? { [attributes.toolCallId]: toolCall.toolCallId } : {}),
        ...(typeof toolCall?.title === 'string' ? { [attributes.toolName]: redacted(toolCall.title) } : {}),
      },
    }, parent);
    this.#permissions.set(keyOf(id), span);
  }

  /** The editor answered permission request `id`. */
  permissionAnswered(id: unknown, result: unknown, error: unknown): void {
    const key = keyOf(id);
    const span = this.#permissions.get(key);
    if (!span) return;
    this.#permissions.delete(key);
    const outcome = (result as { outcome?: { outcome?: unknown; optionId?: unknown } } | undefined)?.outcome;
    if (typeof outcome?.outcome === 'string') span.setAttribute(attributes.permissionOutcome, outcome.outcome);
    if (typeof outcome?.optionId === 'string') span.setAttribute(attributes.permissionOption, outcome.optionId);
    if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: 'the editor answered with an error' });
    span.end();
  }

  /** What the host told (`host.on`). */
  hostEvent(event: HostEvent): void {
    switch (event.type) {
      case 'session.opened': {
        const session = this.#sessions.get(event.sessionId) ?? this.#open(event.sessionId, event.how);
        session.agent = event.agent;
        session.span.setAttributes(agentAttributes(event.agent));
        if (session.counted === undefined) {
          session.counted = event.agent;
          this.#metrics?.sessionsOpen.add(1, agentAttributes(event.agent));
        }
        return;
      }
      case 'session.restarting': {
        const session = this.#sessions.get(event.sessionId);
        if (!session) return;
        this.#endRecovery(session, 'superseded');
        const parent = session.turns[0]?.context ?? session.context;
        const exitReason = event.exitKind ?? 'unknown';
        const span = this.#tracer.startSpan(spanNames.restart, {
          attributes: { ...sessionAttributes(event.sessionId), ...agentAttributes(session.agent), [attributes.restartCount]: event.restarts, [attributes.exitReason]: exitReason, [attributes.exitDescription]: redacted(event.exit) },
        }, parent);
        session.recovering = { phase: 'restart', span, parent, restarts: event.restarts };
        this.#restarting.add(session);
        this.#metrics?.restarts.add(1, { ...agentAttributes(session.agent), [attributes.exitReason]: exitReason });
        return;
      }
      case 'child.started':
        // The new agent process of a restart is up: the conversation's recovery begins.
        if (event.childId !== 'port' || event.restarts === 0) return;
        for (const session of this.#restarting) {
          const recovering = session.recovering;
          if (session.agent !== event.agent || recovering?.phase !== 'restart') continue;
          recovering.span.end();
          recovering.phase = 'recovery';
          recovering.span = this.#tracer.startSpan(spanNames.recovery, { attributes: { ...sessionAttributes(session.sessionId), ...agentAttributes(session.agent), [attributes.restartCount]: recovering.restarts } }, recovering.parent);
        }
        return;
      case 'session.recovered': {
        const session = this.#sessions.get(event.sessionId);
        if (!session) return;
        this.#endRecovery(session, 'recovered');
        this.#metrics?.recoveries.add(1, agentAttributes(session.agent));
        return;
      }
      case 'session.failed': {
        const session = this.#sessions.get(event.sessionId);
        if (!session) return;
        this.#endRecovery(session, 'failed');
        this.#metrics?.sessionsFailed.add(1, agentAttributes(session.agent));
        session.span.setAttribute(attributes.failureReason, redacted(event.reason));
        session.span.setStatus({ code: SpanStatusCode.ERROR, message: redacted(event.reason) });
        this.#close(session);
        return;
      }
      case 'session.closed':
      case 'session.moved': {
        const session = this.#sessions.get(event.sessionId);
        if (session) this.#close(session);
        return;
      }
      default:
        return;
    }
  }

  /**
   * The context an agent process spawned now is started in: the restart under way (the
   * latest, when several sessions share the process), else the active one (the request
   * being served: `initialize` for a native agent's process, the session for a process per
   * session), else none.
   */
  spawnContext(): Context | undefined {
    let latest: SessionTrace | undefined;
    for (const session of this.#restarting) latest = session;
    if (latest?.recovering) return trace.setSpan(latest.recovering.parent, latest.recovering.span);
    const active = otelContext.active();
    return trace.getSpan(active) ? active : undefined;
  }

  /** Ends every span still open (warden is exiting); sessions stay counted as open. */
  endAll(): void {
    for (const pending of this.#pending.values()) pending.span.end();
    this.#pending.clear();
    for (const span of this.#permissions.values()) span.end();
    this.#permissions.clear();
    for (const session of this.#sessions.values()) {
      this.#endRecovery(session, 'unfinished');
      endUnfinished(session.tools);
    }
    for (const turn of this.#turns.values()) turn.span.end();
    this.#turns.clear();
    for (const session of this.#sessions.values()) session.span.end();
    this.#sessions.clear();
  }

  #sessionAnswered(pending: Pending, result: unknown, error: { code?: unknown; message?: unknown } | undefined): void {
    if (pending.kind === 'initialize') {
      if (error) pending.span.setStatus({ code: SpanStatusCode.ERROR, message: redacted(String(error.message)) });
      pending.span.end();
      return;
    }
    const sessionId = pending.sessionId ?? (result as { sessionId?: unknown } | undefined)?.sessionId;
    if (error || typeof sessionId !== 'string') {
      pending.span.setStatus({ code: SpanStatusCode.ERROR, message: error ? redacted(String(error.message)) : 'no session id in the answer' });
      pending.span.end();
      return;
    }
    const existing = this.#sessions.get(sessionId);
    if (existing) {
      // The host told of it first (session.opened): that span stands for it; this one ends as its opening.
      pending.span.end();
      return;
    }
    pending.span.setAttributes(sessionAttributes(sessionId));
    this.#sessions.set(sessionId, { sessionId, span: pending.span, context: pending.context, agent: undefined, counted: undefined, turns: [], tools: new Map(), lastSeq: -1, recovering: undefined });
  }

  /** The trace of a session the host opened: its request's span if it is still unanswered, else a new root span (a session opened by no editor request of this connection). */
  #open(sessionId: string, how: SessionRequestKind): SessionTrace {
    // The session's request is still unanswered (the host tells of a session before answering): its span is the session's.
    // A load or resume names its session; a new or fork does not (the first of its kind still waiting is taken).
    for (const [key, pending] of this.#pending) {
      if (pending.kind !== how || (pending.sessionId !== undefined && pending.sessionId !== sessionId)) continue;
      this.#pending.delete(key);
      pending.span.setAttributes(sessionAttributes(sessionId));
      const session: SessionTrace = { sessionId, span: pending.span, context: pending.context, agent: undefined, counted: undefined, turns: [], tools: new Map(), lastSeq: -1, recovering: undefined };
      this.#sessions.set(sessionId, session);
      return session;
    }
    const span = this.#tracer.startSpan(spanNames.session, { attributes: { [attributes.sessionHow]: how, ...sessionAttributes(sessionId) } }, ROOT_CONTEXT);
    const session: SessionTrace = { sessionId, span, context: trace.setSpan(ROOT_CONTEXT, span), agent: undefined, counted: undefined, turns: [], tools: new Map(), lastSeq: -1, recovering: undefined };
    this.#sessions.set(sessionId, session);
    return session;
  }

  #turnEnded(turn: TurnTrace, result: unknown, error: { code?: unknown; message?: unknown } | undefined): void {
    const session = this.#sessions.get(turn.sessionId);
    if (session) {
      const at = session.turns.indexOf(turn);
      if (at >= 0) session.turns.splice(at, 1);
      // Tool calls the agent never finished end with their turn (their last status kept).
      if (session.turns.length === 0) endUnfinished(session.tools);
    }
    const stopReason = error ? 'error' : String((result as { stopReason?: unknown } | undefined)?.stopReason ?? 'unknown');
    turn.span.setAttribute(attributes.stopReason, stopReason);
    if (error) {
      if (typeof error.code === 'number') turn.span.setAttribute(attributes.errorCode, error.code);
      turn.span.setStatus({ code: SpanStatusCode.ERROR, message: redacted(String(error.message)) });
    }
    turn.span.end();
    const metricAttributes = { ...agentAttributes(session?.agent), [attributes.stopReason]: stopReason };
    this.#metrics?.turns.add(1, metricAttributes);
    this.#metrics?.turnDuration.record((performance.now() - turn.startedAt) / 1000, metricAttributes);
  }

  #endRecovery(session: SessionTrace, outcome: 'recovered' | 'failed' | 'superseded' | 'unfinished'): void {
    const recovering = session.recovering;
    if (!recovering) return;
    session.recovering = undefined;
    this.#restarting.delete(session);
    recovering.span.setAttribute(attributes.recoveryOutcome, outcome);
    if (outcome === 'failed') recovering.span.setStatus({ code: SpanStatusCode.ERROR, message: 'the agent gave up' });
    recovering.span.end();
  }

  #close(session: SessionTrace): void {
    this.#endRecovery(session, 'unfinished');
    endUnfinished(session.tools);
    session.span.end();
    this.#sessions.delete(session.sessionId);
    if (session.counted !== undefined) this.#metrics?.sessionsOpen.add(-1, agentAttributes(session.counted));
  }
}

/** Ends the tool calls left open, marked unfinished. */
function endUnfinished(tools: Map<string, Span>): void {
  for (const span of tools.values()) {
    span.setAttribute(attributes.toolUnfinished, true);
    span.end();
  }
  tools.clear();
}

function sessionAttributes(sessionId: string): Attributes {
  return { [attributes.sessionId]: sessionId, [attributes.conversationId]: sessionId };
}

function peerAttributes(peer: string | undefined): Attributes {
  return peer === undefined ? {} : { [attributes.clientPeer]: redacted(peer) };
}

/** `text` with secrets redacted (the host's and those given to agents). */
function redacted(text: string): string {
  return redactSecrets(text, knownSecretValues());
}

/** Agent names as attributes, redacted once each (an `acp:` name is a command line). */
const agentNames = new Map<string, Attributes>();

function agentAttributes(agent: string | undefined): Attributes {
  if (agent === undefined) return {};
  let found = agentNames.get(agent);
  if (!found) {
    found = { [attributes.agent]: redacted(agent) };
    if (agentNames.size < 256) agentNames.set(agent, found);
  }
  return found;
}
