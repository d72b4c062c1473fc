/**
 * Every state chart `warden inspect --export` knows: the XState machines, derived from their
 * definitions, and the custom actor logics (port, pending request, supervisor, connection,
 * ACP agent server and client), whose charts are declared here from a reading of their code.
 *
 * A declared chart is typed against its logic: its states are exactly the logic's phase
 * type (`PortPhase`, ...) and its events are the logic's event types, so that a phase or an
 * event renamed or added there fails to compile here. spec/inspect/chart-catalog.spec.ts
 * runs each logic for real and checks that every phase change it shows is declared.
 */
import { SHUTDOWN_EVENT } from '../supervision/events.js';
import type { SupervisorEvent } from '../supervision/events.js';
import type { SupervisorPhase } from '../supervision/supervisor.js';
import type { PortEvent, PortPhase } from '../port/port.js';
import type { PendingRequestEvent, PendingRequestPhase, RequestOutcome } from '../jsonrpc/pending-request.js';
import type { ConnectionEvent, ConnectionPhase } from '../jsonrpc/connection.js';
import type { AgentServerEvent, AgentServerPhase } from '../acp/agent-server.js';
import type { AgentClientEvent, AgentClientPhase } from '../acp/agent-client.js';
import { sessionMachine } from '../session/session-machine.js';
import { claudeSessionMachine } from '../adapters/claude/adapter.js';
import { codexSessionMachine } from '../adapters/codex/adapter.js';
import { codexListMachine } from '../adapters/codex/listing.js';
import { passthroughMachine } from '../adapters/passthrough/machine.js';
import { demoAgentMachine } from '../acp/demo-agent.js';
import { demoTurnMachine } from '../acp/demo-turn.js';
import { CHART_FORMAT, chartOfMachine, type Chart, type ChartAbout, type ChartNode, type ChartTransition } from './chart-model.js';

// ---------------------------------------------------------------------------------------
// Declaring a chart

/** One transition of a declared chart: a target state, or an object (no `target`: it stays). */
export type DeclaredTransition<TState extends string> =
  | TState
  | { readonly target?: TState; readonly guard?: string; readonly description?: string };

type DeclaredOn<TState extends string, TEvent extends string> = {
  readonly [E in TEvent]?: DeclaredTransition<TState> | readonly DeclaredTransition<TState>[];
};

/** A state of a declared chart (flat: custom logics have one phase value). */
export interface DeclaredState<TState extends string, TEvent extends string> {
  readonly type?: 'final';
  readonly description?: string;
  readonly on?: DeclaredOn<TState, TEvent>;
}

/** A chart declared for a custom logic whose phases are `TState` and events `TEvent`. */
export interface ChartDeclaration<TState extends string, TEvent extends string> extends ChartAbout {
  /** The logic's `config.name`. */
  readonly id: string;
  readonly initial: NoInfer<TState>;
  /** Transitions in every state that does not handle the event itself (the final ones excepted). */
  readonly on?: DeclaredOn<NoInfer<TState>, TEvent>;
  readonly states: { readonly [S in TState]: DeclaredState<NoInfer<TState>, TEvent> };
}

/** Builds a chart from a declaration (see {@link ChartDeclaration}). */
export function declareChart<TState extends string, TEvent extends string>(declaration: ChartDeclaration<TState, TEvent>): Chart {
  const states: Record<string, ChartNode> = {};
  for (const [key, state] of Object.entries(declaration.states) as Array<[string, DeclaredState<TState, TEvent>]>) {
    states[key] = {
      ...(state.type ? { type: state.type } : {}),
      ...(state.description ? { description: state.description } : {}),
      on: onOf(state.on),
    };
  }
  return {
    format: CHART_FORMAT,
    name: declaration.name,
    id: declaration.id,
    kind: 'declared',
    source: declaration.source,
    description: declaration.description,
    initial: declaration.initial,
    on: onOf(declaration.on),
    states,
  };
}

function onOf<TState extends string, TEvent extends string>(on: DeclaredOn<TState, TEvent> | undefined): Record<string, ChartTransition[]> {
  const out: Record<string, ChartTransition[]> = {};
  for (const [event, value] of Object.entries(on ?? {}) as Array<[string, DeclaredTransition<TState> | readonly DeclaredTransition<TState>[]]>) {
    const list: readonly DeclaredTransition<TState>[] = Array.isArray(value) ? value : [value as DeclaredTransition<TState>];
    out[event] = list.map((item) => {
      if (typeof item === 'string') return { targets: [item] };
      return {
        targets: item.target === undefined ? [] : [item.target],
        ...(item.guard === undefined ? {} : { guard: item.guard }),
        ...(item.description === undefined ? {} : { description: item.description }),
      };
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// The declared charts

/** A port (src/port/port.ts): one agent CLI subprocess. */
export const portChart = declareChart<PortPhase, PortEvent['type']>({
  name: 'port',
  id: 'port',
  source: 'src/port/port.ts',
  description: 'A port: one agent CLI subprocess. Lines of output do not go through transitions (they are emitted straight from the stream); only the lifecycle does.',
  initial: 'starting',
  on: {
    'port.internal.closed': { target: 'exited', description: 'The process exited and its output closed (or the close wait ran out): done for exit code 0 or a requested stop, error (a PortError with the reason) otherwise.' },
    'xstate.stop': { target: 'exited', description: 'Stopped at once (XState stop): the process tree is killed.' },
    'port.write': { description: 'Written to stdin while running; refused with not_running otherwise.' },
    'port.busy': { description: 'The owner has requests outstanding or not, a turn open or not: arms or disarms the watchdog; a CLI over its soft memory limit is recycled once no turn is open.' },
    'port.heartbeat': { description: 'Counts as output for the watchdog.' },
    'port.injectLine': { description: 'Fault injection: handled as if the process had printed the line.' },
    'port.internal.kill': { description: 'A line over the limit: SIGKILL; the exit follows.' },
    'port.internal.watchdog': { description: 'Silent too long while busy: SIGKILL (reason hung); the exit follows.' },
    'port.internal.memoryPoll': { description: 'A sample of the process tree\'s memory (with memory limits): over the hard limit, the tree is SIGKILLed (reason memory_exceeded); over the soft one, the CLI is stopped gracefully once no turn is open (reason memory_exceeded).' },
    'port.internal.stdinClosed': { description: 'The process closed its input: writes fail from now on.' },
    'port.internal.inputClosedCheck': { description: 'A moment after its input failed: a process still running, with no stop asked, is killed as input_closed; one exiting or being stopped meanwhile is left to finish (the check may arrive in any phase).' },
    'port.internal.readGate': { description: "The system's read gate closed (the editor reads slowly) or opened: stdout is paused or read again; the watchdog and the wait for output to close wait meanwhile." },
    'xstate.*': { description: 'Any other XState event: ignored.' },
  },
  states: {
    starting: {
      description: 'Spawning. A CLI that cannot be spawned at all (no such executable, no working directory) fails the start itself: the actor errors while starting.',
      on: {
        'port.internal.spawned': { target: 'running', description: 'The OS gave the process a pid.' },
        [SHUTDOWN_EVENT]: { target: 'stopping', description: 'Asked to stop before the spawn was seen.' },
      },
    },
    running: {
      on: {
        [SHUTDOWN_EVENT]: { target: 'stopping', description: 'The graceful stop: stdin closed, SIGTERM of the group after stdinGraceMs, SIGKILL after killAfterMs.' },
      },
    },
    stopping: {
      on: {
        [SHUTDOWN_EVENT]: { description: 'Already stopping.' },
        'port.internal.shutdownStep': { description: 'The next step of the stop: SIGTERM, then SIGKILL, of the process group.' },
      },
    },
    exited: { type: 'final', description: 'The process and its output are gone; the snapshot says why (status done or error).' },
  },
});

const outcomes: readonly RequestOutcome[] = ['answered', 'failed', 'timedOut', 'cancelled', 'peerLost'];
const outcomeMeaning: Readonly<Record<RequestOutcome, string>> = {
  answered: 'A result came back.',
  failed: 'An error response came back, or the request could not be written.',
  timedOut: 'Its deadline passed.',
  cancelled: 'The caller cancelled it ($/cancel_request sent).',
  peerLost: 'The connection closed before an answer.',
};

/** A pending outgoing JSON-RPC request (src/jsonrpc/pending-request.ts). */
export const pendingRequestChart = declareChart<PendingRequestPhase, PendingRequestEvent['type']>({
  name: 'pending-request',
  id: 'pendingRequest',
  source: 'src/jsonrpc/pending-request.ts',
  description: 'A request sent on a JSON-RPC connection and not answered yet, a child of its connection; the connection settles it, once.',
  initial: 'sent',
  states: {
    sent: {
      on: {
        'request.settle': outcomes.map((outcome) => ({ target: outcome, guard: `outcome ${outcome}`, description: outcomeMeaning[outcome] })),
      },
    },
    answered: { type: 'final' },
    failed: { type: 'final' },
    timedOut: { type: 'final' },
    cancelled: { type: 'final' },
    peerLost: { type: 'final' },
  },
});

/** A supervisor (src/supervision/supervisor.ts), static or dynamic. */
export const supervisorChart = declareChart<SupervisorPhase, SupervisorEvent['type']>({
  name: 'supervisor',
  id: 'supervisor',
  source: 'src/supervision/supervisor.ts',
  description: 'An OTP-style supervisor (static or dynamic). Its phase says whether it is stopping children for a restart or for its own exit; the children themselves are read with whichChildren. An event that ends a stop of children also handles the events deferred meanwhile, so it can take the transitions those take.',
  initial: 'running',
  on: {
    'xstate.stop': { target: 'stopped', description: 'Stopped at once (XState stop): every child is killed, last started first.' },
    'supervisor.startChild': { description: 'Starts a child (replies with the result); deferred while children are being stopped.' },
    'supervisor.terminateChild': { description: 'Stops a child with its shutdown policy; deferred while children are being stopped.' },
    'supervisor.restartChild': { description: 'Starts a terminated child again (static supervisors); deferred while children are being stopped.' },
    'supervisor.deleteChild': { description: 'Forgets a terminated child spec (static supervisors); deferred while children are being stopped.' },
    'xstate.*': { description: 'XState\'s own notices of a child\'s end (xstate.error.actor.ID, xstate.done.actor.ID): ignored; the supervisor watches its children itself.' },
  },
  states: {
    running: {
      description: 'Children running (or waiting for a backoff delay, or one being stopped by terminateChild).',
      on: {
        'supervisor.child.exit': [
          { target: 'restarting', guard: 'restart, siblings running', description: 'A child exited and restarts under one_for_all or rest_for_one: its running siblings stop first, last started first.' },
          { target: 'shuttingDown', guard: 'give up', description: 'Too many restarts in the period, or a significant child ended: the supervisor gives up and stops its children.' },
          { target: 'stopped', guard: 'give up, none running', description: 'The same, with no child left to stop.' },
          { guard: 'otherwise', description: 'one_for_one restarts the child at once; with backoff the restart waits; a child not restarted is kept or removed.' },
        ],
        'supervisor.child.restart': [
          { target: 'restarting', guard: 'restart, siblings running', description: 'A delayed restart (backoff) or a retry of a failed start is due.' },
          { target: 'shuttingDown', guard: 'give up', description: 'That restart is one too many.' },
          { target: 'stopped', guard: 'give up, none running' },
          { guard: 'otherwise', description: 'Restarted at once (one_for_one), or retried again later.' },
        ],
        'supervisor.child.shutdownTimeout': { description: 'A child stopped by terminateChild did not finish within its shutdown: it is killed.' },
        [SHUTDOWN_EVENT]: [
          { target: 'shuttingDown', guard: 'some running', description: 'Asked to shut down: children stop one by one, last started first (concurrently in a dynamic supervisor).' },
          { target: 'stopped', guard: 'none running' },
        ],
        'supervisor.init.failed': [
          { target: 'shuttingDown', guard: 'some running', description: 'A child could not start at init: the ones started stop, then the supervisor fails its start.' },
          { target: 'stopped', guard: 'none running' },
        ],
      },
    },
    restarting: {
      description: 'Stopping the siblings of a failed child before the group starts again.',
      on: {
        'supervisor.child.exit': [
          { target: 'running', guard: 'last sibling', description: 'The group starts again, in start order.' },
          { target: 'shuttingDown', guard: 'then give up', description: 'The group restarted, and an exit deferred meanwhile was one restart too many.' },
          { target: 'stopped', guard: 'then give up, none running' },
          { guard: 'otherwise', description: 'Another sibling stops next; an unrelated exit waits until the restart is done.' },
        ],
        'supervisor.child.shutdownTimeout': [
          { target: 'running', guard: 'last sibling', description: 'A sibling that did not stop in time is killed; the group starts again.' },
          { guard: 'otherwise' },
        ],
        [SHUTDOWN_EVENT]: { target: 'shuttingDown', description: 'The restart is dropped: every child stops.' },
        'supervisor.init.failed': { target: 'shuttingDown' },
      },
    },
    shuttingDown: {
      description: 'Stopping every child before the supervisor exits.',
      on: {
        'supervisor.child.exit': [
          { target: 'stopped', guard: 'last child', description: 'The supervisor exits with its reason (shutdown, reached_max_restart_intensity, failedToStartChild).' },
          { guard: 'otherwise' },
        ],
        'supervisor.child.shutdownTimeout': [
          { target: 'stopped', guard: 'last child' },
          { guard: 'otherwise', description: 'A child that did not stop within its shutdown is killed.' },
        ],
        [SHUTDOWN_EVENT]: { description: 'Already shutting down.' },
        'supervisor.init.failed': { description: 'Already shutting down.' },
      },
    },
    stopped: { type: 'final', description: 'Every child stopped; status done with the exit reason as output (stopped after XState stop).' },
  },
});

/** A JSON-RPC connection (src/jsonrpc/connection.ts). */
export const connectionChart = declareChart<ConnectionPhase, ConnectionEvent['type']>({
  name: 'connection',
  id: 'connection',
  source: 'src/jsonrpc/connection.ts',
  description: 'A JSON-RPC connection over a transport. Messages do not go through transitions; each outgoing request is a pending-request child.',
  initial: 'open',
  on: {
    'rpc.timeout': { description: 'A request\'s deadline passed: it is settled timedOut.' },
    'xstate.*': { description: 'XState\'s notices of a settled request (xstate.done.actor.request-ID), and any other: ignored.' },
  },
  states: {
    open: {
      on: {
        'rpc.peerLost': { target: 'closed', description: 'The transport closed (the process exited, the socket ended): every request waiting is settled peerLost.' },
        'rpc.inputEnded': { description: 'The peer half-closed (EOF on stdin): it sends nothing more but still reads. The requests it was sent fail (input_ended), what it asked is still answered.' },
        'rpc.close': { target: 'closed', description: 'Closed by its owner: what is owed is answered, then the transport closes.' },
        [SHUTDOWN_EVENT]: { target: 'closed', description: 'Closed by its supervisor, as rpc.close.' },
        'xstate.stop': { target: 'closed', description: 'Stopped at once (status stopped).' },
      },
    },
    closed: { type: 'final', description: 'Its output is why it closed.' },
  },
});

/** The ACP agent side (src/acp/agent-server.ts): what an editor talks to. */
export const agentServerChart = declareChart<AgentServerPhase, AgentServerEvent['type']>({
  name: 'agent-server',
  id: 'acpAgentServer',
  source: 'src/acp/agent-server.ts',
  description: 'The ACP agent side, serving an editor over a connection on behalf of a native agent. Requests go through the connection, not through transitions; the phase changes on that data path and the snapshot shows it at the next acp.sync.',
  initial: 'awaitingInitialize',
  on: {
    'xstate.stop': { target: 'closed', description: 'Stopped at once: the handler and the connection are stopped, status stopped.' },
    'acp.sync': { description: 'The snapshot catches up with sessions and prompts.' },
    'xstate.*': { description: 'XState\'s notices of its children (the connection, the agent handler) ending, and any other: the snapshot catches up.' },
  },
  states: {
    awaitingInitialize: {
      description: 'Every request but initialize is refused.',
      on: {
        'acp.sync': [
          { target: 'ready', guard: 'initialize answered', description: 'The editor\'s initialize was answered (by the server, or by the agent when it delegates initialize).' },
          { target: 'initializing', guard: 'initialize delegated', description: 'The editor\'s initialize is with the agent (it delegates initialize).' },
          {},
        ],
        'acp.closed': { target: 'closing', description: 'The editor went away (or the agent handler failed).' },
        'acp.inputEnded': { target: 'draining', description: 'The editor\'s input ended (EOF) before initialize: nothing to serve, so it drains at once.' },
        [SHUTDOWN_EVENT]: { target: 'closing', description: 'Asked to shut down.' },
      },
    },
    initializing: {
      description: 'The agent is answering initialize: what the editor sends meanwhile waits, in order, and is served once initialize is answered.',
      on: {
        'acp.sync': [
          { target: 'ready', guard: 'initialize answered', description: 'The agent answered: the waiting requests are served in order.' },
          { target: 'awaitingInitialize', guard: 'initialize refused', description: 'The agent refused initialize: the waiting requests are refused as uninitialized.' },
          { target: 'draining', guard: 'initialize settled after the input ended', description: 'The editor\'s input had ended meanwhile: the waiting requests are served, then it drains.' },
          {},
        ],
        'acp.inputEnded': { description: 'The editor\'s input ended: draining starts once initialize is answered.' },
        'acp.closed': { target: 'closing', description: 'The editor went away: the waiting requests are refused.' },
        [SHUTDOWN_EVENT]: { target: 'closing', description: 'Asked to shut down.' },
      },
    },
    ready: {
      on: {
        'acp.closed': { target: 'closing', description: 'The editor went away (or the agent handler failed): what it waited for is answered, the agent\'s supervisors shut down, last started first.' },
        'acp.inputEnded': { target: 'draining', description: 'The editor\'s input ended (EOF) but it still reads: what it asked is served.' },
        [SHUTDOWN_EVENT]: { target: 'closing', description: 'Asked to shut down, as acp.closed.' },
      },
    },
    draining: {
      description: 'The editor sends nothing more but still reads: every request it sent is served and answered (prompts run to their end, queued ones too); permission requests are answered cancelled locally.',
      on: {
        'acp.drained': { target: 'closing', description: 'Everything the editor asked is answered: the agent\'s supervisors shut down.' },
        'acp.drainTimeout': { description: 'The drain timeout passed: the turns still running or queued are cancelled (session/cancel to the agent).' },
        'acp.drainGrace': { target: 'closing', description: 'The cancelled turns\' grace is over: cancelled prompts end cancelled, anything else unanswered gets -32603.' },
        'acp.closed': { target: 'closing', description: 'stdout failed too (EPIPE: the editor is gone): nothing can be delivered, it stops at once.' },
        [SHUTDOWN_EVENT]: { target: 'closing', description: 'Asked to shut down (SIGTERM, SIGINT): what is unanswered gets -32603 at once.' },
      },
    },
    closing: {
      description: 'New requests are refused while the agent\'s supervisors shut down.',
      on: {
        'acp.finish': { target: 'closed', description: 'The supervisors are down: status done, its output why the editor went away.' },
        'acp.closed': { description: 'Already closing.' },
        'acp.drained': { description: 'Already closing.' },
        'acp.inputEnded': { description: 'Already closing.' },
        [SHUTDOWN_EVENT]: { description: 'Already closing.' },
      },
    },
    closed: { type: 'final' },
  },
});

/** The ACP client side (src/acp/agent-client.ts): what drives an ACP agent. */
export const agentClientChart = declareChart<AgentClientPhase, AgentClientEvent['type']>({
  name: 'agent-client',
  id: 'acpAgentClient',
  source: 'src/acp/agent-client.ts',
  description: 'The ACP client side, driving an ACP agent over a connection and serving its requests. The phase changes on the data path (initialize answered) and the snapshot shows it at the next client.sync.',
  initial: 'connected',
  on: {
    'client.closed': { target: 'closed', description: 'The agent went away, or answered initialize with a protocol version we do not speak.' },
    [SHUTDOWN_EVENT]: { target: 'closed', description: 'Asked to shut down: its terminals and connection stop.' },
    'xstate.stop': { target: 'closed', description: 'Stopped at once (status stopped).' },
    'client.sync': { description: 'The snapshot catches up with sessions and terminals.' },
    'xstate.*': { description: 'XState\'s notices of its children (the connection, the terminals supervisor) ending, and any other: the snapshot catches up.' },
  },
  states: {
    connected: {
      description: 'Only initialize may be called.',
      on: {
        'client.sync': [{ target: 'ready', guard: 'initialize answered' }, {}],
      },
    },
    ready: {},
    closed: { type: 'final', description: 'Prompts in flight end; its output is why the agent went away.' },
  },
});

// ---------------------------------------------------------------------------------------
// The catalog

const machineCharts: ReadonlyArray<() => Chart> = [
  () => chartOfMachine(sessionMachine, {
    name: 'session',
    source: 'src/session/session-machine.ts',
    description: 'One session of the host: where it stands between the editor\'s prompts and the agent\'s restarts, and what the user set (mode, config options), re-applied to a new agent process. A pure machine: the host agent feeds it the facts.',
  }),
  () => chartOfMachine(claudeSessionMachine, {
    name: 'claude-session',
    source: 'src/adapters/claude/adapter.ts',
    description: 'The Claude Code session adapter: one claude process in stream-json mode per ACP session, initialized again after every restart.',
  }),
  () => chartOfMachine(codexSessionMachine, {
    name: 'codex-session',
    source: 'src/adapters/codex/adapter.ts',
    description: 'The Codex session adapter: codex app-server per ACP session, its handshake, a thread started or resumed, each prompt a turn.',
  }),
  () => chartOfMachine(codexListMachine, {
    name: 'codex-list',
    source: 'src/adapters/codex/listing.ts',
    description: 'Codex\'s threads behind session/list: one thread/list on a short-lived app-server.',
  }),
  () => chartOfMachine(demoAgentMachine, {
    name: 'demo-agent',
    source: 'src/acp/demo-agent.ts',
    description: 'The built-in demo agent\'s handler: its sessions, and a turn of its own (demo-turn) for each prompt, so that sessions are served side by side; serving while any turn is in flight.',
  }),
  () => chartOfMachine(demoTurnMachine, {
    name: 'demo-turn',
    source: 'src/acp/demo-turn.ts',
    description: 'One prompt of the demo agent: the tool run at once (mode auto), behind a permission (mode ask) or refused, then the answer streamed word by word; cancel ends it.',
  }),
  () => chartOfMachine(passthroughMachine, {
    name: 'acp-passthrough',
    source: 'src/adapters/passthrough/machine.ts',
    description: 'A native ACP agent passed through under supervision: booted on the editor\'s initialize, recovering (initialize again, then each open session re-attached) after every restart of the agent process, failed when its supervisor gives up, started again by a new session.',
  }),
];

let catalog: readonly Chart[] | undefined;

/**
 * Every chart, in the order `warden inspect --export` writes them: the session chart, the
 * runtime actors (port, pending request, supervisor, connection, agent server and client),
 * then the adapters' and the demo agent's machines.
 */
export function allCharts(): readonly Chart[] {
  catalog ??= [
    machineCharts[0]!(),
    portChart,
    pendingRequestChart,
    supervisorChart,
    connectionChart,
    agentServerChart,
    agentClientChart,
    ...machineCharts.slice(1).map((make) => make()),
  ];
  return catalog;
}

/** The names `--machine` takes, in catalog order. */
export function chartNames(): string[] {
  return allCharts().map((chart) => chart.name);
}

/** The chart called `name`, or `undefined`. */
export function chartNamed(name: string): Chart | undefined {
  return allCharts().find((chart) => chart.name === name);
}
