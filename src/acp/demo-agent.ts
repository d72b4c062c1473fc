/**
 * The built-in `demo` agent: a native agent (see `native-agent.ts`) as a state machine. It
 * streams its answer word by word, runs one "tool" behind a permission request when the
 * prompt asks for one, keeps each session's history in memory (so `session/load` replays
 * it), and honours cancel. Examples, `warden demo` and tests use it; it needs no model and
 * no network.
 *
 * `session/resume` and `session/load` of a session id it does not know (a host that
 * restarted and journaled the session, say) open an empty session under that id: the demo
 * agent keeps no conversation memory beyond its process, so there is nothing to resume or
 * replay, and its answers never depend on earlier turns. The host replays its own journal.
 */
import type { SessionConfigOption, SessionUpdate } from '@agentclientprotocol/sdk';
import { nanoid } from 'nanoid';
import { enqueueActions, setup } from 'xstate';
import type { AgentHandlerEvent, AgentHandlerOutput, AgentRequestEvent, NativeAgent } from './native-agent.js';
import { RpcError } from '../jsonrpc/rpc-error.js';

interface DemoSession {
  readonly id: string;
  readonly cwd: string;
  readonly title: string;
  readonly updatedAt: string;
  readonly history: readonly SessionUpdate[];
  readonly mode: string;
  readonly model: string;
}

interface Turn {
  readonly requestId: string;
  readonly sessionId: string;
  /** Words still to stream. */
  readonly words: readonly string[];
  /** What was streamed so far (kept in the history at the end). */
  readonly said: string;
  readonly permissionKey: string | undefined;
}

interface DemoContext {
  readonly sessions: Readonly<Record<string, DemoSession>>;
  readonly nextKey: number;
  readonly turn: Turn | undefined;
  /** Milliseconds between streamed words. */
  readonly wordDelayMs: number;
}

const toolCallId = 'demo-tool';
const models = ['demo-fast', 'demo-thorough'];

const modes = [
  { id: 'ask', name: 'Ask', description: 'Ask before running tools' },
  { id: 'auto', name: 'Auto', description: 'Run tools without asking' },
];

function modeState(current: string) {
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

function promptText(event: AgentHandlerEvent): string {
  if (event.type !== 'session.prompt') return '';
  const blocks = (event.params.prompt as Array<{ type: string; text?: string }>) ?? [];
  return blocks.filter((block) => block.type === 'text').map((block) => block.text ?? '').join(' ').trim();
}

function words(text: string): string[] {
  return text.split(' ').map((word, index, all) => (index < all.length - 1 ? `${word} ` : word));
}

function answerFor(text: string): string {
  return text.length === 0 ? 'You sent an empty prompt.' : `You said: ${text}. This is the acp-warden demo agent, answering word by word.`;
}

function requestOf(event: AgentHandlerEvent): AgentRequestEvent {
  return event as AgentRequestEvent;
}

/** An empty session, in its default mode and model. */
function emptySession(id: string, cwd: string, title: string): DemoSession {
  return { id, cwd, title, updatedAt: new Date().toISOString(), history: [], mode: 'ask', model: 'demo-fast' };
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

const commandsUpdate: SessionUpdate = { sessionUpdate: 'available_commands_update', availableCommands: [{ name: 'tool', description: 'Run the demo tool (asks for permission)' }] };

function withSession(context: DemoContext, id: string, change: (session: DemoSession) => DemoSession): Partial<DemoContext> {
  const session = context.sessions[id];
  return session ? { sessions: { ...context.sessions, [id]: change(session) } } : {};
}

function record(context: DemoContext, sessionId: string, ...updates: SessionUpdate[]): Partial<DemoContext> {
  return withSession(context, sessionId, (session) => ({ ...session, history: [...session.history, ...updates], updatedAt: new Date().toISOString() }));
}

const respond = (requestId: string, result: unknown): AgentHandlerOutput => ({ type: 'acp.respond', requestId, result });
const update = (sessionId: string, value: SessionUpdate): AgentHandlerOutput => ({ type: 'acp.update', sessionId, update: value });

/** The demo agent's handler machine. */
export const demoAgentMachine = setup({
  types: {} as {
    context: DemoContext;
    events: AgentHandlerEvent;
    emitted: AgentHandlerOutput;
    input: { wordDelayMs?: number } | undefined;
  },
  delays: { word: ({ context }) => context.wordDelayMs },
  guards: {
    wantsTool: ({ event }) => /\b(tool|permission)\b/iu.test(promptText(event)),
    autoMode: ({ context, event }) => context.sessions[requestOf(event).params.sessionId as string]?.mode === 'auto',
    wordsLeft: ({ context }) => (context.turn?.words.length ?? 0) > 0,
    ourPermission: ({ context, event }) => (event.type === 'client.response' || event.type === 'client.error') && event.key === context.turn?.permissionKey,
    allowed: ({ event }) => event.type === 'client.response' && (event.result as { outcome?: { optionId?: string } } | undefined)?.outcome?.optionId === 'allow',
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
      const modeId = request.params.modeId as string;
      if (!modes.some((mode) => mode.id === modeId)) {
        enqueue.emit({ type: 'acp.error', requestId: request.requestId, error: RpcError.invalidParams(`unknown mode ${modeId}`).toErrorObject() });
        return;
      }
      enqueue.assign(withSession(context, sessionId, (session) => ({ ...session, mode: modeId })));
      enqueue.emit(update(sessionId, { sessionUpdate: 'current_mode_update', currentModeId: modeId }));
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
    startTurn: enqueueActions(({ context, event, enqueue }) => {
      const request = requestOf(event);
      const sessionId = request.params.sessionId as string;
      const text = promptText(event);
      enqueue.assign({
        turn: { requestId: request.requestId, sessionId, words: words(answerFor(text)), said: '', permissionKey: undefined },
        ...record(context, sessionId, { sessionUpdate: 'user_message_chunk', content: { type: 'text', text } }),
      });
    }),
    askPermission: enqueueActions(({ context, enqueue }) => {
      const turn = context.turn as Turn;
      const key = `permission-${context.nextKey}`;
      const call: SessionUpdate = { sessionUpdate: 'tool_call', toolCallId, title: 'Run the demo tool', kind: 'execute', status: 'pending', rawInput: { command: 'demo-tool --greet' } };
      enqueue.assign({ nextKey: context.nextKey + 1, turn: { ...turn, permissionKey: key }, ...record(context, turn.sessionId, call) });
      enqueue.emit(update(turn.sessionId, call));
      enqueue.emit({
        type: 'acp.clientRequest',
        key,
        method: 'session/request_permission',
        params: {
          sessionId: turn.sessionId,
          toolCall: { toolCallId, title: 'Run the demo tool', kind: 'execute', status: 'pending' },
          options: [
            { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
            { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
          ],
        },
      });
    }),
    toolDone: enqueueActions(({ context, event, enqueue }, params: { status: 'completed' | 'failed' }) => {
      void event;
      const turn = context.turn as Turn;
      const text = params.status === 'completed' ? 'demo tool: hello from the tool' : 'demo tool: not run (permission refused)';
      const result: SessionUpdate = { sessionUpdate: 'tool_call_update', toolCallId, status: params.status, content: [{ type: 'content', content: { type: 'text', text } }] };
      enqueue.assign(record(context, turn.sessionId, result));
      enqueue.emit(update(turn.sessionId, result));
    }),
    streamWord: enqueueActions(({ context, enqueue }) => {
      const turn = context.turn as Turn;
      const [next, ...rest] = turn.words;
      enqueue.assign({ turn: { ...turn, words: rest, said: turn.said + (next ?? '') } });
      enqueue.emit(update(turn.sessionId, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: next ?? '' } }));
    }),
    finish: enqueueActions(({ context, enqueue }, params: { stopReason: 'end_turn' | 'cancelled' }) => {
      const turn = context.turn as Turn;
      const said: SessionUpdate = { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: turn.said } };
      enqueue.assign({ turn: undefined, ...(turn.said ? record(context, turn.sessionId, said) : {}) });
      enqueue.emit(respond(turn.requestId, { stopReason: params.stopReason }));
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
      enqueue.emit({ type: 'acp.error', requestId: requestOf(event).requestId, error: { code: -32603, message: 'The demo agent answers one prompt at a time; try again when the current one ends' } });
    }),
    answerEmpty: enqueueActions(({ event, enqueue }) => {
      enqueue.emit(respond(requestOf(event).requestId, {}));
    }),
  },
}).createMachine({
  id: 'demoAgent',
  context: ({ input }) => ({ sessions: {}, nextKey: 1, turn: undefined, wordDelayMs: input?.wordDelayMs ?? 40 }),
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
  },
  states: {
    idle: {
      on: {
        'session.prompt': [
          { guard: 'wantsTool', target: 'streaming', actions: ['startTurn', 'askPermission'], reenter: true },
          { target: 'streaming', actions: 'startTurn' },
        ],
      },
    },
    streaming: {
      initial: 'decide',
      on: {
        'session.cancel': { target: 'idle', actions: { type: 'finish', params: { stopReason: 'cancelled' } } },
        // One turn at a time across sessions: a prompt elsewhere is told so, not ignored.
        'session.prompt': { actions: 'refuseBusy' },
      },
      states: {
        decide: {
          always: [
            { guard: ({ context }) => context.turn?.permissionKey !== undefined && context.sessions[context.turn.sessionId]?.mode === 'auto', target: 'word', actions: { type: 'toolDone', params: { status: 'completed' } } },
            { guard: ({ context }) => context.turn?.permissionKey !== undefined, target: 'awaitingPermission' },
            { target: 'word' },
          ],
        },
        awaitingPermission: {
          on: {
            'client.response': [
              { guard: { type: 'ourPermission' }, target: 'word', actions: { type: 'toolDone', params: ({ event }) => ({ status: (event.result as { outcome?: { optionId?: string } } | undefined)?.outcome?.optionId === 'allow' ? 'completed' as const : 'failed' as const }) } },
            ],
            'client.error': [{ guard: 'ourPermission', target: 'word', actions: { type: 'toolDone', params: { status: 'failed' } } }],
          },
        },
        word: {
          after: {
            word: [
              { guard: 'wordsLeft', target: 'word', reenter: true, actions: 'streamWord' },
              { target: '#demoAgent.idle', actions: { type: 'finish', params: { stopReason: 'end_turn' } } },
            ],
          },
        },
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
