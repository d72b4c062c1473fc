/**
 * The built-in `demo` agent: a native agent (see `native-agent.ts`) as a state machine. It
 * streams its answer word by word, runs one "tool" when the prompt asks for one (behind a
 * permission request in mode `ask`, at once in mode `auto`, never in mode `plan`; a rejected
 * tool is reported `failed`), keeps each session's history in memory (so `session/load`
 * replays it), and honours cancel. Examples, `warden demo` and tests use it; it needs no model and no network.
 *
 * Sessions are served side by side: each prompt is a turn of its own (`demo-turn.ts`, a
 * spawned child), so a session streaming or waiting for a permission does not hold up the
 * others. Within a session prompts come one at a time (the agent server queues them FIFO);
 * a second one reaching the machine while its session's turn runs is refused.
 *
 * `session/resume` and `session/load` of a session id it does not know (a host that
 * restarted and journaled the session, say) open an empty session under that id: the demo
 * agent keeps no conversation memory beyond its process, so there is nothing to resume or
 * replay, and its answers never depend on earlier turns. The host replays its own journal.
 */
import type { SessionConfigOption, SessionUpdate } from '@agentclientprotocol/sdk';
import { nanoid } from 'nanoid';
import { enqueueActions, setup, stopChild } from 'xstate';
import { demoTurnMachine, type DemoModeId, type DemoToolPolicy, type DemoTurnEvent, type DemoTurnReport } from './demo-turn.js';
import { CLIENT_METHODS } from '../protocol/methods.js';
import type { AgentHandlerEvent, AgentHandlerOutput, AgentRequestEvent, NativeAgent } from '../protocol/native-agent.js';
import { RpcError } from '../jsonrpc/rpc-error.js';

interface DemoSession {
  readonly id: string;
  readonly cwd: string;
  readonly title: string;
  readonly updatedAt: string;
  readonly history: readonly SessionUpdate[];
  readonly mode: DemoModeId;
  readonly model: string;
  /** An "always" answer to the demo tool's permission. */
  readonly toolPolicy: DemoToolPolicy | undefined;
}

/** A turn in flight: its child actor's id and what routes events to it. */
interface TurnEntry {
  /** The spawned `demoTurnMachine`'s id (a child of the agent). */
  readonly actorId: string;
  readonly requestId: string;
  readonly permissionKey: string;
}

interface DemoContext {
  readonly sessions: Readonly<Record<string, DemoSession>>;
  /** The turn in flight of each session that has one, by session id. */
  readonly turns: Readonly<Record<string, TurnEntry>>;
  /** Numbers turns (child ids, permission keys, tool call ids) across sessions. */
  readonly nextTurn: number;
  /** Milliseconds between streamed words. */
  readonly wordDelayMs: number;
}

type DemoAgentEvent = AgentHandlerEvent | DemoTurnReport;

const models = ['demo-fast', 'demo-thorough'];

const modes: ReadonlyArray<{ readonly id: DemoModeId; readonly name: string; readonly description: string }> = [
  { id: 'ask', name: 'Ask', description: 'Ask before running tools' },
  { id: 'auto', name: 'Auto', description: 'Run tools without asking' },
  { id: 'plan', name: 'Plan', description: 'Say what it would run; run no tools' },
];

function modeState(current: DemoModeId) {
  return { currentModeId: current, availableModes: modes };
}

function configOptions(model: string): SessionConfigOption[] {
  return [{
    id: 'model',
    name: 'Model',
    category: 'model',
    type: 'select',
    currentValue: model,
    options: [
      { value: 'demo-fast', name: 'Demo fast' },
      { value: 'demo-thorough', name: 'Demo thorough' },
    ],
  }];
}

function promptText(event: AgentRequestEvent): string {
  const blocks = (event.params.prompt as Array<{ type: string; text?: string }>) ?? [];
  return blocks.filter((block) => block.type === 'text').map((block) => block.text ?? '').join(' ').trim();
}

function requestOf(event: DemoAgentEvent): AgentRequestEvent {
  return event as AgentRequestEvent;
}

function reportOf<T extends DemoTurnReport['type']>(event: DemoAgentEvent, _type: T): Extract<DemoTurnReport, { type: T }> {
  return event as Extract<DemoTurnReport, { type: T }>;
}

/** An empty session, in its default mode and model. */
function emptySession(id: string, cwd: string, title: string): DemoSession {
  return { id, cwd, title, updatedAt: new Date().toISOString(), history: [], mode: 'ask', model: 'demo-fast', toolPolicy: undefined };
}

/**
 * A session id no other demo process handed out either: `demo-<random>`. A host journals
 * session ids across runs of the agent, so `demo-1` from every new process would collide.
 */
function freshSessionId(context: DemoContext): string {
  let id = `demo-${nanoid(8)}`;
  while (context.sessions[id]) id = `demo-${nanoid(8)}`;
  return id;
}

const commandsUpdate: SessionUpdate = { sessionUpdate: 'available_commands_update', availableCommands: [{ name: 'tool', description: 'Run the demo tool (asks for permission in mode ask)' }] };

function withSession(context: DemoContext, id: string, change: (session: DemoSession) => DemoSession): Partial<DemoContext> {
  const session = context.sessions[id];
  return session ? { sessions: { ...context.sessions, [id]: change(session) } } : {};
}

function record(context: DemoContext, sessionId: string, ...updates: SessionUpdate[]): Partial<DemoContext> {
  return withSession(context, sessionId, (session) => ({ ...session, history: [...session.history, ...updates], updatedAt: new Date().toISOString() }));
}

/** The session whose turn asked the permission with `key`. */
function sessionOfPermission(context: DemoContext, key: string): string | undefined {
  return Object.entries(context.turns).find(([, turn]) => turn.permissionKey === key)?.[0];
}

const respond = (requestId: string, result: unknown): AgentHandlerOutput => ({ type: 'acp.respond', requestId, result });
const update = (sessionId: string, value: SessionUpdate): AgentHandlerOutput => ({ type: 'acp.update', sessionId, update: value });

/** The demo agent's handler machine: `idle` with no turn in flight, `serving` while any session has one. */
export const demoAgentMachine = setup({
  types: {} as {
    context: DemoContext;
    events: DemoAgentEvent;
    emitted: AgentHandlerOutput;
    input: { wordDelayMs?: number } | undefined;
    children: Record<string, 'demoTurn'>;
  },
  actors: { demoTurn: demoTurnMachine },
  guards: {
    /** Its session already has a turn in flight (the agent server queues prompts, so this is a peer that does not). */
    sessionBusy: ({ context, event }) => context.turns[requestOf(event).params.sessionId as string] !== undefined,
    /** The turn that finished is the only one in flight. */
    lastTurn: ({ context }) => Object.keys(context.turns).length <= 1,
  },
  actions: {
    newSession: enqueueActions(({ context, event, enqueue }) => {
      const request = requestOf(event);
      const id = freshSessionId(context);
      const session = emptySession(id, request.params.cwd as string, `Demo session ${Object.keys(context.sessions).length + 1}`);
      enqueue.assign({ sessions: { ...context.sessions, [id]: session } });
      enqueue.emit(respond(request.requestId, { sessionId: id, modes: modeState('ask'), configOptions: configOptions('demo-fast') }));
      enqueue.emit(update(id, commandsUpdate));
    }),
    /** `session/load` and `session/resume`: a known session answers its setup (load replays its history first); an unknown id opens an empty session. */
    reopenSession: enqueueActions(({ context, event, enqueue }) => {
      const request = requestOf(event);
      const id = request.params.sessionId as string;
      const known = context.sessions[id];
      const session = known ?? emptySession(id, request.params.cwd as string, `Demo session ${id}`);
      if (!known) enqueue.assign({ sessions: { ...context.sessions, [id]: session } });
      // ACP: load replays the whole conversation as updates, then answers.
      if (event.type === 'session.load') for (const entry of session.history) enqueue.emit(update(id, entry));
      enqueue.emit(respond(request.requestId, { modes: modeState(session.mode), configOptions: configOptions(session.model) }));
      if (!known) enqueue.emit(update(id, commandsUpdate));
    }),
    listSessions: enqueueActions(({ context, event, enqueue }) => {
      const request = requestOf(event);
      const pageSize = 10;
      const all = Object.values(context.sessions).filter((session) => !request.params.cwd || session.cwd === request.params.cwd);
      const cursor = request.params.cursor;
      const start = typeof cursor === 'string' ? Number(cursor) : 0;
      if (!Number.isInteger(start) || start < 0 || start > all.length) {
        enqueue.emit({ type: 'acp.error', requestId: request.requestId, error: RpcError.invalidParams(`unknown cursor ${JSON.stringify(cursor)}`).toErrorObject() });
        return;
      }
      const page = all.slice(start, start + pageSize);
      const nextCursor = start + pageSize < all.length ? String(start + pageSize) : undefined;
      enqueue.emit(respond(request.requestId, {
        sessions: page.map((session) => ({ sessionId: session.id, cwd: session.cwd, title: session.title, updatedAt: session.updatedAt })),
        ...(nextCursor ? { nextCursor } : {}),
      }));
    }),
    deleteSession: enqueueActions(({ context, event, enqueue }) => {
      const request = requestOf(event);
      const { [request.params.sessionId as string]: _removed, ...rest } = context.sessions;
      enqueue.assign({ sessions: rest });
      enqueue.emit(respond(request.requestId, {}));
    }),
    setMode: enqueueActions(({ context, event, enqueue }) => {
      const request = requestOf(event);
      const sessionId = request.params.sessionId as string;
      const mode = modes.find((candidate) => candidate.id === request.params.modeId);
      if (!mode) {
        enqueue.emit({ type: 'acp.error', requestId: request.requestId, error: RpcError.invalidParams(`unknown mode ${String(request.params.modeId)}; the demo agent's modes are ${modes.map((candidate) => candidate.id).join(', ')}`).toErrorObject() });
        return;
      }
      enqueue.assign(withSession(context, sessionId, (session) => ({ ...session, mode: mode.id })));
      enqueue.emit(update(sessionId, { sessionUpdate: 'current_mode_update', currentModeId: mode.id }));
      enqueue.emit(respond(request.requestId, {}));
    }),
    setConfigOption: enqueueActions(({ context, event, enqueue }) => {
      const request = requestOf(event);
      const sessionId = request.params.sessionId as string;
      const value = String(request.params.value);
      if (request.params.configId !== 'model' || !models.includes(value)) {
        enqueue.emit({ type: 'acp.error', requestId: request.requestId, error: RpcError.invalidParams('unknown config option or value').toErrorObject() });
        return;
      }
      enqueue.assign(withSession(context, sessionId, (session) => ({ ...session, model: value })));
      enqueue.emit(respond(request.requestId, { configOptions: configOptions(value) }));
    }),
    /** A prompt: the user's message joins the history, and a turn of its own starts for it. */
    startTurn: enqueueActions(({ context, event, enqueue }) => {
      const request = requestOf(event);
      const sessionId = request.params.sessionId as string;
      const session = context.sessions[sessionId];
      const text = promptText(request);
      const number = context.nextTurn;
      const turn: TurnEntry = { actorId: `turn-${number}`, requestId: request.requestId, permissionKey: `permission-${number}` };
      enqueue.assign({
        nextTurn: number + 1,
        turns: { ...context.turns, [sessionId]: turn },
        ...record(context, sessionId, { sessionUpdate: 'user_message_chunk', content: { type: 'text', text } }),
      });
      enqueue.spawnChild('demoTurn', {
        id: turn.actorId,
        input: {
          sessionId,
          requestId: request.requestId,
          text,
          mode: session?.mode ?? 'ask',
          toolPolicy: session?.toolPolicy,
          permissionKey: turn.permissionKey,
          toolCallId: `demo-tool-${number}`,
          wordDelayMs: context.wordDelayMs,
        },
      });
    }),
    /** A turn's update goes to the client; all but the streamed words join the history (the whole answer does, at the end). */
    relayUpdate: enqueueActions(({ context, event, enqueue }) => {
      const { sessionId, update: value } = reportOf(event, 'turn.update');
      if (value.sessionUpdate !== 'agent_message_chunk') enqueue.assign(record(context, sessionId, value));
      enqueue.emit(update(sessionId, value));
    }),
    relayPermission: enqueueActions(({ event, enqueue }) => {
      const ask = reportOf(event, 'turn.askPermission');
      enqueue.emit({ type: 'acp.clientRequest', key: ask.key, method: CLIENT_METHODS.session_request_permission, params: ask.params });
    }),
    rememberPolicy: enqueueActions(({ context, event, enqueue }) => {
      const { sessionId, policy } = reportOf(event, 'turn.remember');
      enqueue.assign(withSession(context, sessionId, (session) => ({ ...session, toolPolicy: policy })));
    }),
    /** The client's answer to a permission goes to the turn that asked it. */
    answerPermission: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'client.response' && event.type !== 'client.error') return;
      const sessionId = sessionOfPermission(context, event.key);
      const turn = sessionId === undefined ? undefined : context.turns[sessionId];
      if (!turn) return;
      const forward: DemoTurnEvent = event.type === 'client.response' ? { type: 'turn.permissionAnswered', result: event.result } : { type: 'turn.permissionFailed', error: event.error };
      enqueue.sendTo(turn.actorId, forward);
    }),
    /** Cancel reaches only its session's turn. */
    cancelTurn: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'session.cancel') return;
      const turn = context.turns[event.sessionId];
      if (!turn) return;
      enqueue.sendTo(turn.actorId, { type: 'turn.cancel' } satisfies DemoTurnEvent);
    }),
    /** A turn ended: its whole answer joins the history, the prompt is answered, its actor goes. */
    finishTurn: enqueueActions(({ context, event, enqueue }) => {
      const done = reportOf(event, 'turn.finished');
      const turn = context.turns[done.sessionId];
      const { [done.sessionId]: _ended, ...others } = context.turns;
      const said: SessionUpdate = { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: done.said } };
      enqueue.assign({ turns: others, ...(done.said ? record(context, done.sessionId, said) : {}) });
      enqueue.emit(respond(done.requestId, { stopReason: done.stopReason }));
      if (turn) enqueue(stopChild(turn.actorId));
    }),
    forkSession: enqueueActions(({ context, event, enqueue }) => {
      const request = requestOf(event);
      const source = context.sessions[request.params.sessionId as string];
      if (!source) {
        enqueue.emit({ type: 'acp.error', requestId: request.requestId, error: RpcError.resourceNotFound(`session ${String(request.params.sessionId)}`, { sessionId: request.params.sessionId }).toErrorObject() });
        return;
      }
      const id = freshSessionId(context);
      const fork: DemoSession = { ...source, id, cwd: request.params.cwd as string, title: `${source.title} (fork)`, updatedAt: new Date().toISOString() };
      enqueue.assign({ sessions: { ...context.sessions, [id]: fork } });
      enqueue.emit(respond(request.requestId, { sessionId: id, modes: modeState(fork.mode), configOptions: configOptions(fork.model) }));
    }),
    refuseBusy: enqueueActions(({ event, enqueue }) => {
      enqueue.emit({ type: 'acp.error', requestId: requestOf(event).requestId, error: { code: -32603, message: 'This session is already answering a prompt; send the next one when it ends (the demo agent answers one prompt at a time per session)' } });
    }),
    answerEmpty: enqueueActions(({ event, enqueue }) => {
      enqueue.emit(respond(requestOf(event).requestId, {}));
    }),
  },
}).createMachine({
  id: 'demoAgent',
  context: ({ input }) => ({ sessions: {}, turns: {}, nextTurn: 1, wordDelayMs: input?.wordDelayMs ?? 40 }),
  initial: 'idle',
  on: {
    authenticate: { actions: 'answerEmpty' },
    logout: { actions: 'answerEmpty' },
    'session.new': { actions: 'newSession' },
    'session.load': { actions: 'reopenSession' },
    'session.resume': { actions: 'reopenSession' },
    'session.list': { actions: 'listSessions' },
    'session.close': { actions: 'answerEmpty' },
    'session.delete': { actions: 'deleteSession' },
    'session.fork': { actions: 'forkSession' },
    'session.setMode': { actions: 'setMode' },
    'session.setConfigOption': { actions: 'setConfigOption' },
    'session.prompt': [
      { guard: 'sessionBusy', actions: 'refuseBusy' },
      { target: '.serving', actions: 'startTurn' },
    ],
    'session.cancel': { actions: 'cancelTurn' },
    'client.response': { actions: 'answerPermission' },
    'client.error': { actions: 'answerPermission' },
    'turn.update': { actions: 'relayUpdate' },
    'turn.askPermission': { actions: 'relayPermission' },
    'turn.remember': { actions: 'rememberPolicy' },
  },
  states: {
    idle: {},
    serving: {
      on: {
        'turn.finished': [
          { guard: 'lastTurn', target: 'idle', actions: 'finishTurn' },
          { actions: 'finishTurn' },
        ],
      },
    },
  },
});

/** The demo agent, ready for an ACP agent server. */
export function demoAgent(options: { wordDelayMs?: number } = {}): NativeAgent {
  return {
    logic: demoAgentMachine,
    input: options,
    agentInfo: { name: 'acp-warden-demo', title: 'acp-warden demo agent', version: '0.1.0' },
    capabilities: {
      loadSession: true,
      promptCapabilities: { image: false, audio: false, embeddedContext: true },
      // `fork` is unstable: served only to clients that use it.
      sessionCapabilities: { list: {}, resume: {}, close: {}, delete: {}, fork: {} } as NonNullable<NativeAgent['capabilities']>['sessionCapabilities'],
      auth: { logout: {} },
    },
    authMethods: [],
    cancelGraceMs: 2000,
  };
}
