/**
 * Codex as an ACP agent: `codex app-server` (JSON-RPC over stdio) per ACP session. The
 * session adapter does the handshake (`initialize`, `initialized`), starts a thread (or
 * resumes it with `thread/resume` after a crash, or from the first start when the session
 * was resumed or loaded with a journaled `{ threadId }`), runs each prompt as a turn, maps
 * items to updates and approvals to `session/request_permission`, and interrupts on cancel.
 *
 * `session/list` lists Codex's own threads (`thread/list` on a short-lived app-server, see
 * listing.ts): each as a session whose id is the thread id. `session/resume` or
 * `session/load` of such an id without a journaled state resumes that thread. A thread id
 * from outside (the editor's `_meta`, the journal) that is not a UUID, Codex's form, is
 * refused with -32602 (`checkResume`); a session id is taken for a thread id only when it
 * is one.
 */
import type { ContentBlock } from '@agentclientprotocol/sdk';
import type { AgentRequestEvent } from '../../protocol/native-agent.js';
import { leadingMembers } from '../../jsonrpc/envelope-scan.js';
import { RpcError } from '../../jsonrpc/rpc-error.js';
import type { CommandContext, SessionAdapterEvent, SessionAdapterOutput } from '../adapter.js';
import type { ListingAdapterDefinition } from '../adapter-agent.js';
import { cliSessionActions, fromCliSession, type CliSessionContext } from '../cli-session.js';
import { checkUuidField, isUuid } from '../resume-check.js';
import { permissionOptions, promptOutcome } from '../session-outcomes.js';
import { codexErrorRateLimit } from '../rate-limit.js';
import { retryRateLimitedTurn } from '../rate-limited-turn.js';
import { codexListMachine } from './listing.js';
import { codexRequest, commandTitle, decisionFor, defaultThreadListLimit, toolRunsOf, turnInput, turnOutcome, updatesOfNotification, type CodexMessage } from './mapping.js';
import { agentRestartDefaults } from '../../supervision/agent-restart-defaults.js';
import { CLIENT_METHODS } from '../../protocol/methods.js';

type Pending = 'initialize' | 'thread' | 'turn' | 'interrupt';

interface CodexContext extends CliSessionContext {
  readonly cwd: string | undefined;
  readonly threadId: string | undefined;
  readonly turnId: string | undefined;
  readonly nextId: number;
  readonly pending: Readonly<Record<string, Pending>>;
  /** Approval requests from Codex waiting for the client: key → Codex's request id and the decisions it offered. */
  readonly approvals: Readonly<Record<string, { readonly id: number | string; readonly available: readonly unknown[] | undefined }>>;
  readonly mode: string;
}

const codexModes = [
  { id: 'untrusted', name: 'Ask', description: 'Ask before running commands that are not known to be safe' },
  { id: 'on-request', name: 'On request', description: 'Codex decides when to ask' },
  { id: 'never', name: 'Never ask', description: 'Run commands in the sandbox without asking' },
];

const asMessage = (event: SessionAdapterEvent) => (event as { message: CodexMessage }).message;

/** The thread id in a resume state (`{ threadId }`), if it has one in Codex's form (a UUID). */
function threadIdOf(resume: unknown): string | undefined {
  const id = (resume as { threadId?: unknown } | undefined)?.threadId;
  return isUuid(id) ? id : undefined;
}

/**
 * The thread a start resumes: the resume state's, else the session id itself when it is a
 * thread id (a session `session/list` listed: its id is Codex's thread id). Warden's own
 * session ids (`codex-…`) are never thread ids, so a new session starts a new thread.
 */
function threadToResume(resume: unknown, sessionId: string): string | undefined {
  return threadIdOf(resume) ?? (isUuid(sessionId) ? sessionId : undefined);
}

/** The answers to the start requests: the session's setup (Codex has modes, no config options). */
function startAnswers(context: Pick<CodexContext, 'sessionId' | 'startRequests' | 'mode'>): SessionAdapterOutput[] {
  return context.startRequests.map((requestId) => ({
    type: 'acp.respond',
    requestId,
    result: { sessionId: context.sessionId as string, modes: { currentModeId: context.mode, availableModes: codexModes } },
  }));
}

function responseTo(context: CodexContext, event: SessionAdapterEvent, kind: Pending): boolean {
  if (event.type !== 'native.message') return false;
  const message = asMessage(event);
  return message.method === undefined && message.id !== undefined && context.pending[String(message.id)] === kind;
}

const action = cliSessionActions<CodexContext>();

/** The session adapter machine for Codex: the CLI-session skeleton, with Codex's handshake (`initialize`, a thread) and mapping. */
export const codexSessionMachine = fromCliSession<CodexContext>({
  id: 'codexSession',
  agent: 'Codex',
  resumes: 'resumes the thread',
  context: { cwd: undefined, threadId: undefined, turnId: undefined, nextId: 0, pending: {}, approvals: {}, mode: 'untrusted' },
  seed: (context, start) => ({ cwd: context.cwd ?? (start.params.cwd as string), threadId: context.threadId ?? threadToResume(start.resume, start.sessionId) }),
  setupAnswers: startAnswers,
  prompt: (context, request) => ({
    writes: [codexRequest(context.nextId, 'turn/start', { threadId: context.threadId, input: turnInput(request.params.prompt as ContentBlock[]), approvalPolicy: context.mode })],
    context: { nextId: context.nextId + 1, pending: { ...context.pending, [context.nextId]: 'turn' } },
  }),
  waiting: (context) => Object.keys(context.approvals).length > 0,
  toolRuns: toolRunsOf,
  forget: { turnId: undefined, pending: {}, approvals: {} },
  guards: {
    initializeAnswered: ({ context, event }) => responseTo(context, event, 'initialize'),
    threadAnswered: ({ context, event }) => responseTo(context, event, 'thread'),
    /** `thread/resume` refused because the thread has no rollout: Codex writes it with the first turn, so there is no conversation to lose. */
    threadNeverSaved: ({ context, event }) =>
      responseTo(context, event, 'thread') && context.threadId !== undefined && /no rollout found/iu.test(asMessage(event).error?.message ?? ''),
    turnRefused: ({ context, event }) => responseTo(context, event, 'turn') && Boolean(asMessage(event).error),
    turnCompleted: ({ context, event }) => event.type === 'native.message' && asMessage(event).method === 'turn/completed' && asMessage(event).params?.threadId === context.threadId,
  },
  actions: {
    initialize: action(({ context, event, enqueue }) => {
      const id = context.nextId;
      enqueue.assign({ nextId: id + 1, pending: { ...context.pending, [id]: 'initialize' }, turnId: undefined });
      enqueue.emit({ type: 'port.write', message: codexRequest(id, 'initialize', { clientInfo: { name: 'acp-warden', title: 'acp-warden', version: '0.1.0' }, capabilities: null }) });
    }),
    startThread: action(({ context, event, enqueue }) => {
      const answered = String(asMessage(event).id);
      const { [answered]: _done, ...pending } = context.pending;
      const id = context.nextId;
      enqueue.emit({ type: 'port.write', message: { method: 'initialized' } });
      // After a crash (or for a session resumed from the journal), the conversation goes on in the same thread.
      const message = context.threadId
        ? codexRequest(id, 'thread/resume', { threadId: context.threadId, cwd: context.cwd, approvalPolicy: context.mode, sandbox: 'workspace-write' })
        : codexRequest(id, 'thread/start', { cwd: context.cwd, approvalPolicy: context.mode, sandbox: 'workspace-write' });
      enqueue.assign({ nextId: id + 1, pending: { ...pending, [id]: 'thread' } });
      enqueue.emit({ type: 'port.write', message });
    }),
    startNewThread: action(({ context, event, enqueue }) => {
      const answered = String(asMessage(event).id);
      const { [answered]: _done, ...pending } = context.pending;
      const id = context.nextId;
      if (context.sessionId) {
        enqueue.emit({
          type: 'acp.update',
          sessionId: context.sessionId,
          update: { sessionUpdate: 'notice', severity: 'warning', title: 'Codex started a new thread', description: `Codex has no saved conversation for thread ${context.threadId as string} (a thread is saved with its first turn); this session goes on in a new thread.` } as never,
        });
      }
      enqueue.assign({ threadId: undefined, nextId: id + 1, pending: { ...pending, [id]: 'thread' } });
      enqueue.emit({ type: 'port.write', message: codexRequest(id, 'thread/start', { cwd: context.cwd, approvalPolicy: context.mode, sandbox: 'workspace-write' }) });
    }),
    threadReady: action(({ context, event, enqueue }) => {
      const message = asMessage(event);
      const { [String(message.id)]: _done, ...pending } = context.pending;
      enqueue.assign({ pending });
      if (message.error) {
        const what = context.threadId ? `resume thread ${context.threadId}` : 'start a thread';
        for (const requestId of context.startRequests) enqueue.emit({ type: 'acp.error', requestId, error: { code: -32603, message: `Codex could not ${what}: ${message.error.message ?? 'unknown error'}` } });
        enqueue.assign({ startRequests: [] });
        return;
      }
      const threadId = (message.result?.thread as { id?: string } | undefined)?.id ?? context.threadId;
      // The answer first: a host journals the session when session/new is answered, then its resume state.
      if (context.sessionId) for (const output of startAnswers(context)) enqueue.emit(output);
      enqueue.assign({ startRequests: [] });
      if (threadId && threadId !== context.threadId) {
        enqueue.assign({ threadId });
        enqueue.emit({ type: 'adapter.resume', state: { threadId } });
      }
      enqueue.emit({ type: 'adapter.ready', restarts: context.restarts });
    }),
    onTurnMessage: action(({ context, event, enqueue }) => {
      const message = asMessage(event);
      const sessionId = context.sessionId as string;
      if (message.method === undefined && message.id !== undefined) {
        // A response to one of our requests.
        const kind = context.pending[String(message.id)];
        const { [String(message.id)]: _done, ...pending } = context.pending;
        enqueue.assign({ pending });
        if (kind === 'turn') {
          const turnId = (message.result?.turn as { id?: string } | undefined)?.id;
          if (turnId) enqueue.assign({ turnId });
        }
        return;
      }
      if (message.method && message.id !== undefined && /requestApproval$/u.test(message.method)) {
        const params = message.params ?? {};
        const key = `approval-${String(message.id)}`;
        const available = Array.isArray(params.availableDecisions) ? (params.availableDecisions as unknown[]) : undefined;
        enqueue.assign({ approvals: { ...context.approvals, [key]: { id: message.id, available } } });
        // The CLI now waits for the user, not the other way round: it owes nothing meanwhile (`waiting`).
        const command = params.command as string | undefined;
        enqueue.emit({
          type: 'acp.clientRequest',
          key,
          method: CLIENT_METHODS.session_request_permission,
          params: {
            sessionId,
            toolCall: { toolCallId: String(params.itemId ?? key), title: command ? `Run ${commandTitle(command)}` : 'Apply file changes', status: 'pending', rawInput: params },
            options: permissionOptions('Allow for this session'),
          },
        });
        return;
      }
      if (message.method && message.params?.threadId !== undefined && message.params.threadId !== context.threadId) return;
      for (const update of updatesOfNotification(message.method ?? '', message.params ?? {})) enqueue.emit({ type: 'acp.update', sessionId, update });
    }),
    /** Codex refused `turn/start`: no turn runs (no `turn/completed` will come), the prompt fails naming why. */
    refuseTurn: action(({ context, event, enqueue }) => {
      const message = asMessage(event);
      const { [String(message.id)]: _done, ...pending } = context.pending;
      enqueue.assign({ pending, prompt: undefined, turnId: undefined });
      if (context.prompt) enqueue.emit({ type: 'acp.error', requestId: context.prompt.requestId, error: { code: -32603, message: `Codex refused the turn: ${message.error?.message ?? 'unknown error'}` } });
    }),
    finishTurn: action(({ context, event, enqueue }) => {
      const prompt = context.prompt;
      enqueue.assign({ prompt: undefined, turnId: undefined });
      if (!prompt) return;
      // A 429/529 before any tool call: sent again after the wait (rate-limited-turn.ts), the editor's request still open.
      const turn = (asMessage(event).params?.turn ?? {}) as { status?: unknown; error?: unknown };
      if (turn.status === 'failed' && retryRateLimitedTurn(context, prompt, codexErrorRateLimit(turn.error), enqueue)) return;
      const outcome = turnOutcome(asMessage(event).params ?? {}, prompt.cancelled);
      enqueue.emit(promptOutcome(prompt.requestId, outcome));
    }),
    interrupt: action(({ context, enqueue }) => {
      if (!context.prompt || context.prompt.cancelled) return;
      enqueue.assign({ prompt: { ...context.prompt, cancelled: true } });
      if (!context.turnId) return; // turn/start not answered yet: its completion ends cancelled
      const id = context.nextId;
      enqueue.assign({ nextId: id + 1, pending: { ...context.pending, [id]: 'interrupt' } });
      enqueue.emit({ type: 'port.write', message: codexRequest(id, 'turn/interrupt', { threadId: context.threadId, turnId: context.turnId }) });
    }),
    /**
     * A line over the limit was skipped. Codex waits for an answer to an approval request
     * (`...requestApproval`, method and id come before the params), so one too long to read
     * is declined: nobody saw what it asked. Anything else (an item with a big output) is only lost.
     */
    declineSkippedApproval: action(({ event, enqueue }) => {
      if (event.type !== 'native.oversize') return;
      const { scalars } = leadingMembers(event.head);
      const id = scalars.id;
      if (typeof scalars.method !== 'string' || !/requestApproval$/u.test(scalars.method) || (typeof id !== 'number' && typeof id !== 'string')) return;
      enqueue.emit({ type: 'port.write', message: { id, result: { decision: 'decline' } } });
    }),
    answerApproval: action(({ context, event, enqueue }) => {
      if (event.type !== 'client.response' && event.type !== 'client.error') return;
      const approval = context.approvals[event.key];
      if (approval === undefined) return;
      const { [event.key]: _answered, ...approvals } = context.approvals;
      enqueue.assign({ approvals });
      const outcome = event.type === 'client.response' ? (event.result as { outcome?: { outcome?: string; optionId?: string } })?.outcome : undefined;
      enqueue.emit({ type: 'port.write', message: { id: approval.id, result: { decision: decisionFor(outcome, approval.available) } } });
    }),
    setMode: action(({ context, event, enqueue }) => {
      const request = event as AgentRequestEvent;
      const mode = request.params.modeId as string;
      if (!codexModes.some((entry) => entry.id === mode)) {
        enqueue.emit({ type: 'acp.error', requestId: request.requestId, error: RpcError.invalidParams(`unknown mode ${mode}`).toErrorObject() });
        return;
      }
      // Applied from the next turn on (each turn/start carries the approval policy).
      enqueue.assign({ mode });
      enqueue.emit({ type: 'acp.update', sessionId: context.sessionId as string, update: { sessionUpdate: 'current_mode_update', currentModeId: mode } });
      enqueue.emit({ type: 'acp.respond', requestId: request.requestId, result: {} });
    }),
    refuseConfig: action(({ event, enqueue }) => {
      enqueue.emit({ type: 'acp.error', requestId: (event as AgentRequestEvent).requestId, error: RpcError.invalidParams('this agent has no config options').toErrorObject() });
    }),
  },
  handshake: {
    action: 'initialize',
    initial: 'initializing',
    states: {
      initializing: { on: { 'native.message': { guard: 'initializeAnswered', target: 'startingThread', actions: 'startThread' } } },
      startingThread: {
        on: {
          'native.message': [
            { guard: 'threadNeverSaved', actions: 'startNewThread' },
            { guard: 'threadAnswered', target: 'ready', actions: 'threadReady' },
          ],
        },
      },
    },
  },
  on: {
    'session.setMode': { actions: 'setMode' },
    'session.setConfigOption': { actions: 'refuseConfig' },
  },
  prompting: {
    'native.message': [
      { guard: 'turnCompleted', target: 'ready', actions: 'finishTurn' },
      { guard: 'turnRefused', target: 'ready', actions: 'refuseTurn' },
      { actions: 'onTurnMessage' },
    ],
    'native.oversize': { actions: 'declineSkippedApproval' },
    'session.cancel': { actions: 'interrupt' },
    'client.response': { actions: 'answerApproval' },
    'client.error': { actions: 'answerApproval' },
  },
});

/** Codex (`--agent codex`): `codex app-server` over stdio; `session/list` is Codex's `thread/list`. */
export const codexAdapter: ListingAdapterDefinition = {
  name: 'codex',
  agentInfo: { name: 'codex', title: 'Codex', version: '0.1.0' },
  capabilities: {
    // Load and resume `thread/resume` the journaled thread; load replays nothing itself (the host replays its journal).
    // List is Codex's `thread/list`, on a short-lived app-server.
    loadSession: true,
    sessionCapabilities: { resume: {}, close: {}, list: {} },
    promptCapabilities: { image: true, audio: false, embeddedContext: true },
  },
  executable: {
    name: 'codex',
    envVar: 'CODEX_PATH',
    versionArgs: ['--version'],
    install: 'npm install -g @openai/codex',
  },
  session: codexSessionMachine,
  // The session reads and writes its own port (fromCliSession).
  ownsPort: true,
  checkResume: (state) => checkUuidField(state, 'threadId', 'a Codex thread id'),
  list: { logic: codexListMachine, pageSize: defaultThreadListLimit },
  command(_context: CommandContext) {
    return { args: ['app-server'], env: { passthrough: codexEnvironment } };
  },
  port: { shutdown: { stdinGraceMs: 2000, killAfterMs: 3000 } },
  restart: agentRestartDefaults,
};

/** The host variables Codex needs; no other agent's key passes. */
export const codexEnvironment: readonly string[] = [
  'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_ORG_ID', 'OPENAI_PROJECT_ID', 'CODEX_API_KEY', 'CODEX_HOME', 'RUST_LOG',
  'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY',
];
