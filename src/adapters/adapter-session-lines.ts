/**
 * The lines between an adapter agent's session and the rest: the session's own events to its
 * adapter (from the agent's mailbox, or a host's direct line: `routeSession`, `watchUpdates`),
 * the adapter's outputs to the host and to its port, the port's lines and exits to the adapter.
 */
import { type AnyActorRef } from 'xstate';
import { type AgentHandlerEvent, type AgentRequestEvent, type SessionRoute } from '../protocol/native-agent.js';
import { RpcError } from '../jsonrpc/rpc-error.js';
import { lineKindOf } from '../jsonrpc/envelope-scan.js';
import { type PortEmitted } from '../port/port.js';
import type { SessionAdapterOutput } from './adapter.js';
import { relayPortLines } from './port-link.js';
import { type Session, type Live, lives, keySeparator, refOf, closeQuietly } from './adapter-agent-live.js';

/**
 * A host's direct line to session `sessionId`'s adapter: what `route` does for the session's
 * events, without a trip through this agent's mailbox. A setting is owed an answer all the
 * same (its `pending` entry), so a close or a failure of the session still answers it; a
 * prompt is the router's (the host's session machine keeps it and answers it when the
 * session closes or fails): the session is `routed` from then on.
 */
export function sessionRoute(agent: AnyActorRef, sessionId: string): SessionRoute {
  return {
    send(event) {
      const session = lives.get(agent)?.sessions.get(sessionId);
      if (!session?.adapter || sessionOf(event) !== sessionId) return false;
      session.routed = true;
      toAdapter(session, session.adapter, event, true);
      return true;
    },
    watchUpdates(onActor) {
      const live = lives.get(agent);
      const session = live?.sessions.get(sessionId);
      if (!live || !session?.adapter || session.updatesWatcher) return undefined;
      const watcher = onActor;
      session.updatesWatcher = watcher;
      bindAdapterOutputs(live, session);
      onActor(session.adapter);
      return {
        unwatch() {
          if (session.updatesWatcher !== watcher) return;
          session.updatesWatcher = undefined;
          if (session.adapter) bindAdapterOutputs(live, session);
        },
      };
    },
  };
}

export function bindAdapter(live: Live, session: Session): void {
  const adapter = refOf(session, 'adapter');
  if (!adapter || adapter === session.adapter) return;
  session.adapter = adapter;
  bindAdapterOutputs(live, session);
  session.updatesWatcher?.(adapter);
}

/** Every type of output a session adapter emits (the compiler checks the list is whole). */
export const adapterOutputTypes = Object.keys({
  'acp.respond': true,
  'acp.error': true,
  'acp.update': true,
  'acp.updates': true,
  'acp.clientRequest': true,
  'acp.notify': true,
  'acp.replayComplete': true,
  'session.restarting': true,
  'session.recovered': true,
  'session.failed': true,
  'session.resumeState': true,
  'agent.lineDropped': true,
  'session.turnJournaled': true,
  'session.promptJoined': true,
  'port.write': true,
  'port.busy': true,
  'adapter.resume': true,
  'adapter.ready': true,
} satisfies Record<SessionAdapterOutput['type'], true>) as ReadonlyArray<SessionAdapterOutput['type']>;

/**
 * Listens to the session adapter's outputs, one listener per type: all of them, but the updates
 * while a host takes them from the adapter itself (its watcher), so that this agent is not on
 * their path at all.
 */
export function bindAdapterOutputs(live: Live, session: Session): void {
  for (const subscription of session.adapterSubscriptions.splice(0)) subscription.unsubscribe();
  const adapter = session.adapter;
  if (!adapter) return;
  for (const type of adapterOutputTypes) {
    if (type === 'acp.update' && session.updatesWatcher) continue;
    session.adapterSubscriptions.push(adapter.on(type, (output: SessionAdapterOutput) => onAdapterOutput(live, session, output)));
  }
}

export function bindPort(live: Live, session: Session): void {
  const port = refOf(session, 'port');
  if (!port || port === session.port) return;
  for (const subscription of session.portSubscriptions) subscription.unsubscribe();
  session.port = port;
  const ownsPort = live.options.definition.ownsPort === true;
  const pid = (port.getSnapshot() as { context?: { pid?: number } }).context?.pid;
  // What the host hears of the port, before the session adapter does.
  session.portSubscriptions = [
    port.on('port.oversize', (event: Extract<PortEmitted, { type: 'port.oversize' }>) => {
      live.scope.emit({ type: 'agent.lineDropped', sessionId: session.id, bytes: event.bytesSeen, limit: event.limit, what: lineKindOf(event.head) });
    }),
    port.on('port.exited', (event: Extract<PortEmitted, { type: 'port.exited' }>) => {
      session.lastExit = event.exit;
    }),
    // A session adapter that owns its port (`ownsPort`) reads it itself; to any other, its lines are relayed from here.
    ...(ownsPort ? [] : relayPortLines(port, (event) => session.adapter?.send(event))),
  ];
  const started = (spawned: number) => session.adapter?.send({ type: 'port.started', pid: spawned, restarts: session.restarts, ...(ownsPort ? { port } : {}) });
  // The first spawn of a process waits for execa to load (src/port/execa-loader.ts): its pid comes with `port.spawned`.
  if (pid !== undefined) started(pid);
  else session.portSubscriptions.push(port.on('port.spawned', (event: Extract<PortEmitted, { type: 'port.spawned' }>) => started(event.pid)));
}

export function onAdapterOutput(live: Live, session: Session, output: SessionAdapterOutput): void {
  // Each request is answered once: a late answer (a prompt that `session/close` already ended, whose CLI then stopped) is dropped;
  // a routed session's router keeps its prompts and drops what it does not owe.
  if ((output.type === 'acp.respond' || output.type === 'acp.error') && !session.pending.has(output.requestId) && !session.routed) return;
  switch (output.type) {
    case 'port.write':
      // An adapter that owns its port has written it already.
      if (!live.options.definition.ownsPort) session.port?.send({ type: 'port.write', message: output.message });
      return;
    case 'port.busy':
      if (!live.options.definition.ownsPort) session.port?.send({ type: 'port.busy', busy: output.busy, toolRunning: output.toolRunning === true, ...(output.turnOpen === undefined ? {} : { turnOpen: output.turnOpen }) });
      return;
    case 'adapter.resume':
      session.resume = output.state;
      live.scope.emit({ type: 'session.resumeState', sessionId: session.id, state: output.state });
      return;
    case 'adapter.ready':
      if (output.restarts > 0) live.scope.emit({ type: 'session.recovered', sessionId: session.id, restarts: output.restarts });
      return;
    case 'acp.clientRequest':
      live.scope.emit({ ...output, key: `${session.id}${keySeparator}${output.key}` });
      return;
    case 'acp.respond': {
      session.pending.delete(output.requestId);
      if (session.resumeRequests.delete(output.requestId) && typeof output.result === 'object' && output.result !== null) {
        // LoadSessionResponse / ResumeSessionResponse: the setup without the id the editor gave.
        const { sessionId: _id, ...setup } = output.result as Record<string, unknown>;
        live.scope.emit({ ...output, result: setup });
        return;
      }
      live.scope.emit(output);
      return;
    }
    case 'acp.error':
      session.pending.delete(output.requestId);
      session.resumeRequests.delete(output.requestId);
      live.scope.emit(output);
      // The session never opened (its CLI refused the thread, say): nothing may keep running for it.
      if (output.requestId === session.startRequestId) closeQuietly(live, session);
      return;
    default:
      live.scope.emit(output);
  }
}

/** The session a session's own event is about (an answer to a client request says it in its key). */
export function sessionOf(event: AgentHandlerEvent): string | undefined {
  if (event.type === 'client.response' || event.type === 'client.error') return event.key.split(keySeparator)[0];
  if (event.type === 'session.cancel') return event.sessionId;
  return typeof (event as AgentRequestEvent).params?.sessionId === 'string' ? ((event as AgentRequestEvent).params.sessionId as string) : undefined;
}

/** The request a session's own event makes (its answer is owed): prompts and settings, not cancels or answers. */
export function requestOf(event: AgentHandlerEvent): AgentRequestEvent | undefined {
  return event.type === 'session.prompt' || event.type === 'session.setMode' || event.type === 'session.setConfigOption' ? (event as AgentRequestEvent) : undefined;
}

/**
 * Hands a session's own event to its adapter: a request is owed an answer (`pending`; not a
 * prompt down a router's line, `routed`: the router keeps it), a client answer gets the
 * adapter's own key back.
 */
export function toAdapter(session: Session, adapter: AnyActorRef, event: AgentHandlerEvent, routed = false): void {
  const request = requestOf(event);
  if (request && !(routed && request.type === 'session.prompt')) session.pending.set(request.requestId, request.method);
  if (event.type === 'client.response' || event.type === 'client.error') adapter.send({ ...event, key: event.key.slice(event.key.indexOf(keySeparator) + 1) });
  else adapter.send(event);
}

export function route(live: Live, sessionId: string | undefined, event: AgentHandlerEvent): void {
  const session = sessionId === undefined ? undefined : live.sessions.get(sessionId);
  if (!session?.adapter) {
    const request = requestOf(event);
    if (request) live.scope.emit({ type: 'acp.error', requestId: request.requestId, error: RpcError.resourceNotFound(`session ${sessionId}`, { sessionId }).toErrorObject() });
    return;
  }
  toAdapter(session, session.adapter, event);
}
