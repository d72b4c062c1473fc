/**
 * What the agent's supervisor, its port and its client do, as events into the passthrough
 * machine: a callback actor of the machine that watches the supervisor the machine started
 * (`agent.watch`) and reports `agent.*` events; it also tells the port's hang watchdog
 * what the machine's snapshot and the tool calls tracked (update-route.ts) say (busy, tool
 * running), and gathers for the machine the updates the host does not take from the client.
 */
import { fromCallback, type AnyActorRef, type Subscription } from 'xstate';
import { lineKindOf } from '../../jsonrpc/envelope-scan.js';
import type { PortExit } from '../../port/port-exit.js';
import type { PortEmitted, PortEvent } from '../../port/port.js';
import type { SupervisionEvent } from '../../supervision/events.js';
import { exitFromOutput } from '../../supervision/exit-reason.js';
import { watchdogHintOf, type AgentProcessReport, type AgentUpdate, type PassthroughContext } from './context.js';
import { agentSupervisorOf, childOf } from './agent-supervisor.js';
import { isNews, quietHint, type WatchdogHint } from '../turn-activity.js';
import { handlesOf } from './handles.js';

/** What the machine tells the agent process: watch the supervisor just started, or stop watching. */
export type AgentProcessCommand = { readonly type: 'agent.watch' } | { readonly type: 'agent.unwatch' };

/** The agent process's input: the passthrough actor it reports to. */
export interface AgentProcessInput {
  readonly owner: AnyActorRef;
}

/** The tag of the states in which the agent owes an answer (initializing, re-attaching). */
export const AGENT_OWES_TAG = 'agentOwes';

/** The `port.busy` event with the turn-aware hint. */
type PortBusy = Extract<PortEvent, { type: 'port.busy' }>;

/** The agent process of one passthrough actor. */
export const agentProcessLogic = fromCallback<AgentProcessCommand, AgentProcessInput>(({ input: { owner }, sendBack, receive }) => {
  const handles = handlesOf(owner);
  const { options } = handles;
  let ended = false;
  /** The watched supervisor, and its subscriptions (its own, its current port's and client's). */
  let watched: AnyActorRef | undefined;
  const bound: Subscription[] = [];
  const portBound: Subscription[] = [];
  const clientBound: Subscription[] = [];
  let portRestarts = 0;
  let lastExit: PortExit | undefined;
  let hint: WatchdogHint = quietHint;
  let told: { readonly port: AnyActorRef; readonly hint: WatchdogHint } | undefined;

  /** Updates not delivered yet: gathered for the rest of this turn of the event loop. */
  let updates: AgentUpdate[] = [];
  const flush = () => {
    if (updates.length === 0) return;
    const delivered = updates;
    updates = [];
    if (!ended) sendBack({ type: 'agent.updates', updates: delivered });
  };
  handles.flushUpdates = flush;
  // The client's updates of sessions the host does not take from it itself (update-route.ts), gathered for the machine.
  handles.relayUpdate = (sessionId, update) => {
    if (ended || !watched || handles.client === undefined) return;
    if (updates.length === 0) queueMicrotask(flush);
    updates.push({ sessionId, update });
  };
  /** Reports what the watched supervisor did (a stopped one's last words are nobody's news), after the updates that came before. */
  const tell = (from: AnyActorRef, event: AgentProcessReport) => {
    if (ended || from !== watched) return;
    flush();
    sendBack(event);
  };
  const drop = (subscriptions: Subscription[]) => {
    for (const subscription of subscriptions.splice(0)) subscription.unsubscribe();
  };
  const unwatch = () => {
    flush();
    watched = undefined;
    drop(bound);
    drop(portBound);
    drop(clientBound);
    handles.client = undefined;
  };

  /** Tells the current port the hint, when it changed (turn-activity.ts). */
  const hintPort = () => {
    const port = watched ? childOf(watched, 'port') : undefined;
    if (port?.getSnapshot().status !== 'active') return;
    // A new port knows nothing yet (it starts quiet); any port hears changes only.
    if (!isNews(told?.port === port ? told.hint : quietHint, hint)) return;
    told = { port, hint };
    port.send({ type: 'port.busy', busy: hint.busy, toolRunning: hint.toolRunning, turnOpen: hint.turnOpen } satisfies PortBusy);
  };
  let hinted: { readonly context: PassthroughContext; readonly owes: boolean } | undefined;
  const hints = owner.subscribe((snapshot: { context: PassthroughContext; hasTag(tag: string): boolean }) => {
    const owes = snapshot.hasTag(AGENT_OWES_TAG);
    // Most snapshots (an update passed on) change neither.
    if (hinted?.context === snapshot.context && hinted.owes === owes) return;
    hinted = { context: snapshot.context, owes };
    hint = watchdogHintOf(snapshot.context, owes, handles.tools);
    hintPort();
  });
  // A tool call started or ended (update-route.ts): the machine's snapshot did not change.
  handles.toolsChanged = () => {
    if (!hinted || ended) return;
    hint = watchdogHintOf(hinted.context, hinted.owes, handles.tools);
    hintPort();
  };

  const bindPort = (supervisor: AnyActorRef) => {
    drop(portBound);
    const port = childOf(supervisor, 'port');
    if (!port) return;
    portBound.push(
      port.on('port.exited', (event: Extract<PortEmitted, { type: 'port.exited' }>) => {
        lastExit = event.exit;
      }),
      // The client's connection fails the request a skipped answer was for; this is the log's news.
      port.on('port.oversize', (event: Extract<PortEmitted, { type: 'port.oversize' }>) => {
        tell(supervisor, { type: 'agent.lineDropped', bytes: event.bytesSeen, limit: event.limit, what: lineKindOf(event.head) });
      }),
    );
    hintPort();
  };

  const bindClient = (supervisor: AnyActorRef) => {
    drop(clientBound);
    const client = childOf(supervisor, 'client');
    if (!client) return;
    handles.client = client;
    clientBound.push(
      // The agent process is gone: what is owed to it waits for its restart (or the supervisor giving up).
      client.subscribe({
        complete: () => {
          if (handles.client !== client) return;
          handles.client = undefined;
          tell(supervisor, { type: 'agent.clientGone' });
        },
      }),
    );
  };

  /** Watches the supervisor the machine just started: `agent.booted`, or `agent.bootFailed` when it could not start. */
  const watch = () => {
    unwatch();
    const supervisor = agentSupervisorOf(owner);
    if (!supervisor) return;
    watched = supervisor;
    portRestarts = 0;
    lastExit = undefined;
    if (supervisor.getSnapshot().status !== 'active') {
      const output = supervisor.getSnapshot().output as { detail?: { cause?: Error } } | undefined;
      tell(supervisor, { type: 'agent.bootFailed', message: `${options.name} could not start: ${output?.detail?.cause?.message ?? 'unknown reason'}` });
      unwatch();
      return;
    }
    bound.push(
      supervisor.on('child.started', (started: Extract<SupervisionEvent, { type: 'child.started' }>) => {
        if (started.childId === 'port') {
          portRestarts = started.restarts;
          bindPort(supervisor);
        }
        if (started.childId === 'client' && started.restarts > 0) {
          bindClient(supervisor);
          tell(supervisor, { type: 'agent.restarted', restarts: portRestarts });
        }
      }),
      // The agent process ended and will be restarted.
      supervisor.on('child.exited', (exited: Extract<SupervisionEvent, { type: 'child.exited' }>) => {
        if (exited.childId !== 'port' || (exited.action !== 'restart' && exited.action !== 'restart_delayed')) return;
        const exit = lastExit ? { reason: lastExit.reason, ...(lastExit.stderrTail ? { stderrTail: lastExit.stderrTail } : {}) } : { reason: exited.reason };
        tell(supervisor, { type: 'agent.exited', restarts: portRestarts, exit });
      }),
      supervisor.subscribe({
        complete: () => {
          // A shutdown asked for (host.stop, the editor gone) is not a failure of the agent.
          const reason = exitFromOutput(supervisor.getSnapshot().output);
          if (reason.kind === 'shutdown' && reason.detail === undefined) return;
          tell(supervisor, { type: 'agent.gaveUp' });
        },
        error: () => tell(supervisor, { type: 'agent.gaveUp' }),
      }),
    );
    bindPort(supervisor);
    bindClient(supervisor);
    tell(supervisor, { type: 'agent.booted' });
  };

  receive((command) => (command.type === 'agent.watch' ? watch() : unwatch()));

  return () => {
    flush();
    ended = true;
    hints.unsubscribe();
    unwatch();
  };
});
