/**
 * `fromCliSession(definition)`: the session adapter of a CLI with a protocol of its own
 * (Claude Code's stream-json, Codex's app-server), built from its handshake and its mapping.
 *
 * The skeleton every such adapter shares lives here once:
 *
 * - waiting for the CLI (`waitingForCli`), then its handshake, entered on `port.started`;
 *   the definition's handshake states reach `ready` when the CLI is initialized;
 * - `ready` ⇄ `prompting`: a prompt is written (the definition says how), the turn's lines
 *   are mapped (the definition's actions), the turn ends back in `ready`;
 * - queueing: a prompt that comes while the CLI (re)starts, or while it is still in a
 *   cancelled turn the host gave up on (its cancel grace ran out), waits and is sent once the
 *   CLI is ready; a cancel of it (or of the session) answers the waiting prompt `cancelled`;
 * - the start requests (`session/new`, `session/resume`, `session/load`), answered with the
 *   session's setup once the CLI is ready, at once when it is;
 * - the prompt in flight when the CLI exits, by the session's crash policy (`--on-crash`,
 *   crash-policy.ts): failed (`-32603`, `agent_crashed`), or kept and, once the restarted CLI
 *   shook hands again (its conversation resumed), continued in the same request: sent again
 *   when no tool call had started (or with `retry`), else one user text naming the tool calls
 *   the crash cut and what warden saw of each (continuation-text.ts, from the tool calls the
 *   turn's outputs and permission answers showed: cut-turn.ts); a notice tells the editor the
 *   answer starts again; a cancel meanwhile answers it `cancelled`; at most `maxContinuations`
 *   a turn, then the crash fails it as `fail` does;
 * - the hang watchdog's facts: the skeleton tells the port (`port.busy`) whether the agent
 *   owes output (a handshake state, tagged {@link HANDSHAKE_TAG}, or a prompt in flight, and
 *   no permission answer awaited) and whether one of its tool calls runs (the definition's
 *   `toolRuns` of each turn line; none once the turn is cancelled: the CLI then owes the
 *   turn's end, not a tool's), each time one of them changes, by the rules of
 *   turn-activity.ts (shared with the ACP passthrough). No action of a definition emits `port.busy`;
 * - its own port: a `port.started` that carries the port (the adapter agent gives it to
 *   definitions with `ownsPort`) binds the session to it: the port's lines come to the
 *   session straight from the port, and what the session writes (`port.write`, `port.busy`)
 *   goes straight to the port, still emitted too for observers (port-link.ts).
 *
 * A definition gives plain data and functions (its context, how a prompt is written, which
 * lines start and end tool calls, whether it awaits the client) and XState actions and guards
 * for its handshake and mapping, written with {@link cliSessionActions}; the mapping itself
 * stays in pure functions (claude/mapping.ts, codex/mapping.ts).
 */
import { enqueueActions, setup, type AnyActorRef, type AnyStateMachine } from 'xstate';
import type { AgentRequestEvent } from '../protocol/native-agent.js';
import type { SessionAdapterEvent, SessionAdapterOutput } from './adapter.js';
import { bindPort, toOwnPort, unbindPort } from './port-link.js';
import { crashedPromptError, promptOutcome } from './session-outcomes.js';
import { crashPolicyOf, type CrashChoice, type CrashPolicy, type CutPrompt } from './crash-policy.js';
import { defaultRateLimitRetries, RATE_LIMIT_RETRY_EVENT, RATE_LIMIT_RETRY_ID } from './rate-limit.js';
import { noTurnTools, toolsAfterAnswer, toolsAfterOutput, type TurnTools } from './cut-turn.js';
import { CONTINUED_NOTICE_TITLE, continuationRequest, continuedNoticeText } from './continuation-text.js';
import { describePortExit } from '../port/port-exit.js';
import { activityAfterRuns, isNews, noToolRuns, quietHint, quietTurn, watchdogHint, type ToolRuns, type TurnActivity, type WatchdogHint } from './turn-activity.js';
import { RpcError } from '../jsonrpc/rpc-error.js';

/** The part of a CLI session's context the skeleton owns. */
export interface CliSessionContext {
  readonly sessionId: string | undefined;
  /** The `session/new` (`session/resume`, `session/load`) requests to answer once the CLI is ready. */
  readonly startRequests: readonly string[];
  /** The prompt in flight: its request (sent again by a continuation) and how many times a crash continued it. */
  readonly prompt: { readonly requestId: string; readonly cancelled: boolean; readonly request?: AgentRequestEvent; readonly continuations?: number; readonly rateLimitRetries?: number } | undefined;
  /** `--rate-limit-retries` (the input `crash`'s `rateLimitRetries`, default 3): how many times a turn a rate limit ended is sent again (rate-limited-turn.ts). */
  readonly rateLimitRetries: number;
  /** The cut prompt waits out a rate limit: sent once `cli.rateLimitRetry` comes. */
  readonly rateLimitWaiting: boolean;
  /** What becomes of a prompt the CLI's exit cuts (the session logic's input `crash`; default by `resumes`). */
  readonly crash: CrashPolicy;
  /** The tool calls of the prompt in flight (and of its earlier cut attempts), as its outputs showed them. */
  readonly turnTools: TurnTools;
  /** A prompt the CLI's exit cut, to continue once the restarted CLI is ready. */
  readonly cut: CutPrompt | undefined;
  /** A prompt that arrived while the CLI was (re)starting: sent once it is ready. */
  readonly queued: AgentRequestEvent | undefined;
  /** How many times the CLI was restarted (from `port.started`). */
  readonly restarts: number;
  /** The CLI's tool calls that run now (started by a turn line, not ended yet). */
  readonly tools: TurnActivity;
  /** What the port was last told (`port.busy`): it is told changes only. */
  readonly told: WatchdogHint;
}

/** The input of a CLI session logic (the adapter agent's `crash` option). */
export interface CliSessionInput {
  readonly crash?: CrashChoice;
}

/**
 * The tag of the handshake states (the definition's, entered on `port.started`): in them the
 * CLI owes its handshake's answers. `snapshot.hasTag(HANDSHAKE_TAG)` says a handshake is under way.
 */
export const HANDSHAKE_TAG = 'cli.handshake';

/** The `adapter.start` event. */
export type AdapterStartEvent = Extract<SessionAdapterEvent, { type: 'adapter.start' }>;

/** The tool calls one CLI line starts and ends (ids): the rules are turn-activity.ts's. */
export type { ToolRuns };

/** What an action may do: change the context, emit outputs. */
export interface CliEnqueue<TContext> {
  assign(changes: Partial<TContext>): void;
  emit(output: SessionAdapterOutput): void;
  /** A side effect on the session actor, run in order with the rest (binding its port). */
  effect(run: (self: AnyActorRef) => void): void;
  /** The event `type` to this session after `delayMs` on the machine's clock, under `id` (to cancel it). */
  later(type: string, delayMs: number, id: string): void;
  /** Cancels the delayed event `id`, if it is still to come. */
  cancelLater(id: string): void;
}

/** The arguments of a CLI session action. */
export interface CliActionArgs<TContext> {
  readonly context: TContext;
  readonly event: SessionAdapterEvent;
  readonly enqueue: CliEnqueue<TContext>;
}

/** A CLI session action, as {@link cliSessionActions} makes it. */
export type CliAction = ReturnType<typeof enqueueActions>;

/** A guard of a CLI session. */
export type CliGuard<TContext> = (args: { readonly context: TContext; readonly event: SessionAdapterEvent }) => boolean;

/** Transitions by event type, as in an XState config, naming actions and guards of the definition or of the skeleton. */
type Transitions = Readonly<Record<string, unknown>>;

/** One state of a handshake: its transitions (the last one reaches `ready`). */
export interface CliState {
  readonly on: Transitions;
}

/** How a CLI session adapter differs from the skeleton. */
export interface CliSessionDefinition<TContext extends CliSessionContext> {
  /** The machine's id (`claudeSession`). */
  readonly id: string;
  /** The agent's name in messages (`Claude Code`). */
  readonly agent: string;
  /** What a restart does, for the crashed prompt's message (`resumes the conversation`). Default: `starts it again`. */
  readonly resumes?: string;
  /** The initial context of the definition's own part. */
  readonly context: Omit<TContext, keyof CliSessionContext>;
  /** What an `adapter.start` seeds, besides its session id and request (a resume state, the cwd). Default: nothing. */
  readonly seed?: (context: TContext, start: AdapterStartEvent) => Partial<TContext>;
  /** The answers to the start requests, with the current setup (and what an opening editor is told with them). */
  readonly setupAnswers: (context: TContext) => SessionAdapterOutput[];
  /**
   * The handshake: the action run on `port.started`, its first state, and its states. A
   * transition `target: 'ready'` ends it. Without one (a CLI that is ready once it runs),
   * `port.started` goes straight to `ready` and answers the start requests.
   */
  readonly handshake?: { readonly action: string; readonly initial: string; readonly states: Readonly<Record<string, CliState>> };
  /** The prompt `request` for the CLI: the messages to write, and the context it changes. */
  readonly prompt: (context: TContext, request: AgentRequestEvent) => { readonly writes: readonly unknown[]; readonly context?: Partial<TContext> };
  /** The CLI waits for the client's answer (a permission request): it owes nothing meanwhile. Default: never. */
  readonly waiting?: (context: TContext) => boolean;
  /** The tool calls a turn line of the CLI starts and ends. Default: none. */
  readonly toolRuns?: (message: unknown) => ToolRuns;
  /** What the CLI's exit makes void in the definition's context (its pending requests, the turn). Default: nothing. */
  readonly forget?: Partial<TContext>;
  readonly guards?: Readonly<Record<string, CliGuard<TContext>>>;
  readonly actions: Readonly<Record<string, CliAction>>;
  /** Transitions in every state (the skeleton's `adapter.start` and `port.exited` come first). */
  readonly on?: Transitions;
  /** Transitions while the CLI is not ready (waiting for it, and every handshake state), besides queueing. */
  readonly starting?: Transitions;
  /** Transitions in `ready`, besides prompts and start requests. */
  readonly ready?: Transitions;
  /** Transitions in `prompting`, besides start requests. `native.message` transitions also track tool runs. */
  readonly prompting?: Transitions;
}

/**
 * The typed way to write a definition's actions: `cliSessionActions<ClaudeContext>()`
 * gives `action(({ context, event, enqueue }) => …)`, whose `enqueue` assigns a part of the
 * context and emits outputs.
 */
export function cliSessionActions<TContext extends CliSessionContext>(): (body: (args: CliActionArgs<TContext>) => void) => CliAction {
  return (body) =>
    enqueueActions(({ context, event, enqueue }) => {
      body({ context: context as TContext, event: event as SessionAdapterEvent, enqueue: new SessionEnqueue<TContext>(enqueue as unknown as RawEnqueue, (context as CliSessionContext).turnTools) });
    });
}

/** Where a skeleton's eventless step runs: in a handshake state or not (its params). */
interface InState {
  readonly handshake: boolean;
}

/** XState's `enqueue` of `enqueueActions`, as far as a CLI session uses it. */
interface RawEnqueue {
  (action: (args: { self: AnyActorRef }) => void): void;
  assign(changes: unknown): void;
  emit(output: unknown): void;
  raise(event: unknown, options: { delay: number; id: string }): void;
  cancel(id: string): void;
}

/** The `enqueue` a CLI session action gets: methods on a prototype, so that a line costs no closures. */
class SessionEnqueue<TContext> implements CliEnqueue<TContext> {
  readonly #raw: RawEnqueue;
  /** The turn's tool calls as this action's outputs leave them (`undefined`: not tracked, the skeleton's own emits). */
  #tools: TurnTools | undefined;
  constructor(raw: RawEnqueue, tools?: TurnTools) {
    this.#raw = raw;
    this.#tools = tools;
  }
  assign(changes: Partial<TContext>): void {
    this.#raw.assign(changes);
  }
  emit(output: SessionAdapterOutput): void {
    this.#raw.emit(output);
    // A tool call announced, updated or asked about: the turn's record of them, for a continuation after a crash.
    if (this.#tools !== undefined && (output.type === 'acp.update' || output.type === 'acp.clientRequest')) {
      const tools = toolsAfterOutput(this.#tools, output);
      if (tools !== this.#tools) {
        this.#tools = tools;
        this.#raw.assign({ turnTools: tools });
      }
    }
    // What is for the CLI also goes to it, when the session has its own port.
    if (output.type === 'port.write' || output.type === 'port.busy') this.#raw(({ self }) => toOwnPort(self, output));
  }
  effect(run: (self: AnyActorRef) => void): void {
    this.#raw(({ self }) => run(self));
  }
  later(type: string, delayMs: number, id: string): void {
    this.#raw.raise({ type }, { delay: delayMs, id });
  }
  cancelLater(id: string): void {
    this.#raw.cancel(id);
  }
}

/** The skeleton's part of the initial context. */
const skeletonContext: CliSessionContext = {
  sessionId: undefined,
  startRequests: [],
  prompt: undefined,
  queued: undefined,
  restarts: 0,
  tools: quietTurn,
  told: quietHint,
  crash: crashPolicyOf(false),
  turnTools: noTurnTools,
  cut: undefined,
  rateLimitRetries: defaultRateLimitRetries,
  rateLimitWaiting: false,
};

/** The session adapter logic of a CLI (see the module comment). */
export function fromCliSession<TContext extends CliSessionContext>(definition: CliSessionDefinition<TContext>): AnyStateMachine {
  // The skeleton's actions touch its own part of the context only.
  const base = cliSessionActions<CliSessionContext>();
  /** What the port should know now, in a state where the CLI owes its handshake (`handshake`) or not. */
  const hintNow = (context: TContext, handshake: boolean): WatchdogHint => {
    const waiting = definition.waiting?.(context) ?? false;
    // A cancelled turn's tools are interrupted: the CLI owes the turn's end now, and a tool
    // it started is no excuse for silence (else a frozen CLI had the tool limit, 30 min).
    const activities = context.prompt?.cancelled ? [] : [context.tools];
    return watchdogHint({ owes: handshake || context.prompt !== undefined, awaitsEditor: waiting, awaitsUser: waiting, activities });
  };
  const skeletonActions: Record<string, CliAction> = {
    'cli.start': base(({ context, event, enqueue }) => {
      if (event.type !== 'adapter.start') return;
      enqueue.assign({ ...definition.seed?.(context as TContext, event), sessionId: event.sessionId, startRequests: [...context.startRequests, event.requestId] });
    }),
    /** The CLI is ready: the start requests are answered now, with the current setup. */
    'cli.answerStarts': base(({ context, enqueue }) => {
      if (context.startRequests.length === 0) return;
      for (const output of definition.setupAnswers(context as TContext)) enqueue.emit(output);
      enqueue.assign({ startRequests: [] });
    }),
    /** A new CLI: it owes its handshake, and its port knows nothing yet. When the event brings the port, the session binds to it. */
    'cli.started': base(({ context, event, enqueue }) => {
      if (event.type === 'port.started' && event.port) {
        const port = event.port;
        enqueue.effect((self) => bindPort(self, port));
      }
      enqueue.assign({ restarts: event.type === 'port.started' ? event.restarts : context.restarts, told: quietHint });
    }),
    'cli.handshakeDone': base(({ enqueue }) => {
      enqueue.assign({ tools: quietTurn });
    }),
    'cli.queuePrompt': base(({ event, enqueue }) => {
      enqueue.assign({ queued: event as AgentRequestEvent });
    }),
    /** A cancel of the waiting prompt, or of the session's (`requestId` empty or absent). */
    'cli.cancelQueued': base(({ context, event, enqueue }) => {
      if (!context.queued || !cancelsQueued(context, event)) return;
      enqueue.emit(promptOutcome(context.queued.requestId, { stopReason: 'cancelled' }));
      enqueue.assign({ queued: undefined });
    }),
    'cli.sendPrompt': base(({ context, event, enqueue }) => {
      const request = event.type === 'session.prompt' ? (event as AgentRequestEvent) : (context.queued as AgentRequestEvent);
      const turn = definition.prompt(context as TContext, request);
      enqueue.assign({ ...(turn.context as Partial<CliSessionContext>), queued: undefined, prompt: { requestId: request.requestId, cancelled: false, request, continuations: 0 }, tools: quietTurn, turnTools: noTurnTools });
      for (const message of turn.writes) enqueue.emit({ type: 'port.write', message });
    }),
    /** The restarted CLI is ready: the cut prompt goes on in the same request, sent again or continued from the agent's history. */
    'cli.sendContinuation': base(({ context, enqueue }) => {
      const cut = context.cut;
      if (!cut) return;
      const turn = definition.prompt(context as TContext, continuationRequest(definition.agent, cut, context.turnTools));
      const retried = cut.rateLimitRetries !== undefined ? { rateLimitRetries: cut.rateLimitRetries } : {};
      enqueue.assign({ ...(turn.context as Partial<CliSessionContext>), cut: undefined, prompt: { requestId: cut.request.requestId, cancelled: false, request: cut.request, continuations: cut.continuations, ...retried }, tools: quietTurn });
      for (const message of turn.writes) enqueue.emit({ type: 'port.write', message });
    }),
    /** A cancel of the cut prompt (or of the session) while the CLI restarts: it ends `cancelled`, nothing is sent again. */
    'cli.cancelCut': base(({ context, event, enqueue }) => {
      const cut = context.cut;
      if (!cut) return;
      const named = namedRequest(event);
      if (named !== undefined && named !== cut.request.requestId) return;
      enqueue.emit(promptOutcome(cut.request.requestId, { stopReason: 'cancelled' }));
      if (context.rateLimitWaiting) enqueue.cancelLater(RATE_LIMIT_RETRY_ID);
      enqueue.assign({ cut: undefined, turnTools: noTurnTools, rateLimitWaiting: false });
    }),
    /** The wait after a rate limit is over: the cut prompt goes (the ready state's eventless transition sends it). */
    'cli.endRateLimitWait': base(({ enqueue }) => {
      enqueue.assign({ rateLimitWaiting: false });
    }),
    /** The editor answered a permission request of the turn: the tool call it named may run, or never will. */
    'cli.trackAnswer': base(({ context, event, enqueue }) => {
      if (event.type !== 'client.response' && event.type !== 'client.error') return;
      const tools = toolsAfterAnswer(context.turnTools, event.key, event.type === 'client.response' ? event.result : undefined, event.type === 'client.error');
      if (tools !== context.turnTools) enqueue.assign({ turnTools: tools });
    }),
    'cli.trackTools': base(({ context, event, enqueue }) => {
      if (event.type !== 'native.message') return;
      const tools = activityAfterRuns(context.tools, definition.toolRuns?.(event.message) ?? noToolRuns);
      if (tools !== context.tools) enqueue.assign({ tools });
    }),
    /** The CLI exited: the prompt in flight is cut, to continue once the restarted CLI is ready (the crash policy allows it), or failed. */
    'cli.cutPromptOnExit': base(({ context, event, enqueue }) => {
      if (event.type !== 'port.exited') return;
      const prompt = context.prompt;
      enqueue.effect((self) => unbindPort(self));
      // The port is gone: the next one starts knowing nothing, and is told from then on.
      enqueue.assign({ ...(definition.forget as Partial<CliSessionContext>), prompt: undefined, tools: quietTurn, told: quietHint });
      if (!prompt) return;
      const continuations = (prompt.continuations ?? 0) + 1;
      const { onCrash, maxContinuations } = context.crash;
      if (onCrash === 'fail' || prompt.cancelled || !prompt.request || continuations > maxContinuations) {
        enqueue.assign({ turnTools: noTurnTools });
        enqueue.emit(crashedPromptError(definition.agent, prompt.requestId, event.exit, context.restarts, definition.resumes ?? 'starts it again'));
        return;
      }
      const exit = describePortExit(event.exit.reason);
      const resend = onCrash === 'retry' || context.turnTools.length === 0;
      enqueue.assign({ cut: { request: prompt.request, continuations, exit, resend } });
      if (context.sessionId) {
        const description = continuedNoticeText(definition.agent, exit, continuations, maxContinuations, resend);
        enqueue.emit({ type: 'acp.update', sessionId: context.sessionId, update: { sessionUpdate: 'notice', severity: 'warning', title: CONTINUED_NOTICE_TITLE, description } as never });
      }
    }),
    'cli.refuseWhileStarting': base(({ event, enqueue }) => {
      const request = event as AgentRequestEvent;
      enqueue.emit({ type: 'acp.error', requestId: request.requestId, error: RpcError.because('agent_starting', `${definition.agent} is (re)starting; try again in a moment`).toErrorObject() });
    }),
    'cli.tellPort': enqueueActions(({ context, enqueue }, params: unknown) => {
      const told = hintNow(context as TContext, (params as InState).handshake);
      const raw = new SessionEnqueue<CliSessionContext>(enqueue as unknown as RawEnqueue);
      raw.assign({ told });
      raw.emit({ type: 'port.busy', busy: told.busy, toolRunning: told.toolRunning, turnOpen: told.turnOpen });
    }),
  };
  const skeletonGuards: Record<string, CliGuard<TContext>> = {
    'cli.hasQueued': ({ context }) => context.queued !== undefined,
    'cli.hasCut': ({ context }) => context.cut !== undefined && !context.rateLimitWaiting,
    /** A cancel of the waiting prompt by its id: the turn in flight is another's, left alone. */
    'cli.hasCutWaiting': ({ context }) => context.cut !== undefined && context.rateLimitWaiting,
    'cli.cancelsQueuedOnly': ({ context, event }) => context.queued !== undefined && namedRequest(event) === context.queued.requestId,
    'cli.portBehind': (({ context }: { context: TContext }, params: unknown) => isNews(context.told, hintNow(context, (params as InState).handshake))) as unknown as CliGuard<TContext>,
  };
  /** Eventless, in every state, after every step: the port hears each change of what the agent owes (in this state: `handshake`). */
  const tellPort = (handshake: boolean) => ({ guard: { type: 'cli.portBehind', params: { handshake } }, actions: { type: 'cli.tellPort', params: { handshake } } });
  const whileStarting = { 'session.prompt': { actions: 'cli.queuePrompt' }, 'session.cancel': { actions: ['cli.cancelQueued', 'cli.cancelCut'] }, ...definition.starting };
  const handshakeStates = Object.fromEntries(
    Object.entries(definition.handshake?.states ?? {}).map(([name, state]) => [name, { tags: [HANDSHAKE_TAG], always: tellPort(true), on: { ...whileStarting, ...state.on } }]),
  );
  const config = {
    id: definition.id,
    // The crash policy is the adapter agent's (`--on-crash`), else the default for an agent that resumes (or not).
    context: ({ input }: { input: CliSessionInput | undefined }) => ({
      ...skeletonContext,
      ...definition.context,
      crash: crashPolicyOf(definition.resumes !== undefined, input?.crash),
      rateLimitRetries: input?.crash?.rateLimitRetries ?? defaultRateLimitRetries,
    }),
    initial: 'waitingForCli',
    on: {
      'adapter.start': { actions: 'cli.start' },
      'port.exited': { target: '.waitingForCli', actions: 'cli.cutPromptOnExit' },
      [RATE_LIMIT_RETRY_EVENT]: { actions: 'cli.endRateLimitWait' },
      ...definition.on,
    },
    states: {
      waitingForCli: {
        always: tellPort(false),
        on: {
          'port.started': definition.handshake
            ? { target: definition.handshake.initial, actions: ['cli.started', definition.handshake.action] }
            : { target: 'ready', actions: ['cli.started', 'cli.answerStarts'] },
          ...whileStarting,
        },
      },
      ...handshakeStates,
      ready: {
        entry: 'cli.handshakeDone',
        // A cut prompt goes on first: the host sends the next prompt only once it ended.
        always: [{ guard: 'cli.hasCut', target: 'prompting', actions: 'cli.sendContinuation' }, { guard: 'cli.hasQueued', target: 'prompting', actions: 'cli.sendPrompt' }, tellPort(false)],
        on: {
          'adapter.start': { actions: ['cli.start', 'cli.answerStarts'] },
          'session.prompt': { target: 'prompting', actions: 'cli.sendPrompt' },
          // A prompt waiting out a rate limit (rate-limited-turn.ts) is cancelled as a cut one is.
          'session.cancel': { guard: 'cli.hasCutWaiting', actions: 'cli.cancelCut' },
          ...definition.ready,
        },
      },
      prompting: {
        always: tellPort(false),
        on: {
          'adapter.start': { actions: ['cli.start', 'cli.answerStarts'] },
          ...withQueueing(withAnswerTracking(withToolTracking(definition.prompting ?? {}))),
        },
      },
    },
  };
  const actions = { ...skeletonActions, ...definition.actions };
  const guards = { ...skeletonGuards, ...definition.guards };
  checkNames(definition.id, config, actions, guards);
  return setup({
    types: {} as { context: TContext; events: SessionAdapterEvent; emitted: SessionAdapterOutput },
    actions: actions as never,
    guards: guards as never,
  }).createMachine(config as never) as unknown as AnyStateMachine;
}

/** The request a cancel names (`$/cancel_request`); `undefined` for `session/cancel` (every prompt of the session). */
function namedRequest(event: SessionAdapterEvent): string | undefined {
  const requestId = event.type === 'session.cancel' ? (event as { requestId?: unknown }).requestId : undefined;
  return typeof requestId === 'string' && requestId !== '' ? requestId : undefined;
}

/** Whether a cancel ends the waiting prompt: it names it, or names none (the session's cancel). */
function cancelsQueued(context: CliSessionContext, event: SessionAdapterEvent): boolean {
  const named = namedRequest(event);
  return named === undefined || named === context.queued?.requestId;
}

/**
 * `prompting`'s transitions, with a prompt that comes meanwhile waiting (`queued`) and sent
 * once the turn in flight ends: the host starts the next prompt when a cancelled one's grace
 * ran out, while the CLI may still be in that turn (frozen, or slow to stop). A cancel of the
 * waiting prompt answers it at once; a session's cancel answers it and cancels the turn too.
 */
function withQueueing(transitions: Transitions): Transitions {
  const cancel = transitions['session.cancel'];
  const own = (cancel === undefined ? [{}] : Array.isArray(cancel) ? cancel : [cancel]).map((transition: { actions?: string | readonly string[] }) => ({
    ...transition,
    actions: ['cli.cancelQueued', ...(transition.actions === undefined ? [] : typeof transition.actions === 'string' ? [transition.actions] : transition.actions)],
  }));
  return {
    ...transitions,
    'session.prompt': { actions: 'cli.queuePrompt' },
    'session.cancel': [{ guard: 'cli.cancelsQueuedOnly', actions: 'cli.cancelQueued' }, ...own],
  };
}

/** `transitions`, each one on `type` also running `action` after its own. */
function alsoRunning(transitions: Transitions, type: string, action: string): Transitions {
  const existing = transitions[type];
  if (existing === undefined) return { ...transitions, [type]: { actions: action } };
  const tracked = (Array.isArray(existing) ? existing : [existing]).map((transition: { actions?: string | readonly string[] }) => ({
    ...transition,
    actions: [...(transition.actions === undefined ? [] : typeof transition.actions === 'string' ? [transition.actions] : transition.actions), action],
  }));
  return { ...transitions, [type]: tracked };
}

/** `prompting`'s transitions, each `native.message` one also tracking the line's tool runs. */
function withToolTracking(transitions: Transitions): Transitions {
  return alsoRunning(transitions, 'native.message', 'cli.trackTools');
}

/** `prompting`'s transitions, each answer of the editor also tracked as a permission answer of the turn's tool calls. */
function withAnswerTracking(transitions: Transitions): Transitions {
  return alsoRunning(alsoRunning(transitions, 'client.response', 'cli.trackAnswer'), 'client.error', 'cli.trackAnswer');
}

/** Every action and guard the config names exists: a misspelt name fails at load, not silently at run time. */
function checkNames(id: string, config: unknown, actions: Record<string, unknown>, guards: Record<string, unknown>): void {
  const missing: string[] = [];
  const visit = (node: unknown, key: string | undefined): void => {
    if (typeof node === 'string') {
      if ((key === 'actions' || key === 'entry' || key === 'exit') && !(node in actions)) missing.push(`action ${node}`);
      if (key === 'guard' && !(node in guards)) missing.push(`guard ${node}`);
      return;
    }
    if (Array.isArray(node)) for (const item of node) visit(item, key);
    else if (typeof node === 'object' && node !== null && key !== 'context') for (const [name, value] of Object.entries(node)) visit(value, name);
  };
  visit(config, undefined);
  if (missing.length > 0) throw new Error(`The CLI session "${id}" names what it does not define: ${missing.join(', ')}.`);
}
