/**
 * The session state chart: where one session of the host stands, as a pure machine (no side
 * effects: the host agent feeds it the facts and reads its state), so that the inspector,
 * `host.tree()` and the tests see the same thing.
 *
 * ```
 * starting ─ready→ ready ─prompt→ prompting ⇄ awaitingPermission
 *    │               ↑              │ cancel
 *    │               │              ↓
 *    │               └─settled── cancelling
 *    └─reapply.started→ reapplying ─reapply.answered (last)→ ready | prompting
 * (any live state) ─agent.restarting→ recovering ─agent.recovered→ ready | prompting
 *                                     recovering ─reapply.started→ reapplying
 * (any live state) ─agent.failed→ failed      (any live state) ─close→ closed
 * ```
 *
 * On a store several hosts share (PostgreSQL) its context also says who owns the session: the
 * owner host and the epoch it holds it at, as the journal said when this host created or
 * claimed it, and where it went when another host took it (`owner.changed`, a fact of any
 * state, like the session state's). The live view shows it; a store without owners leaves it out.
 *
 * Its context holds the session's state (session-state.ts): the modes, config options, title,
 * commands and resume handle the agent reported, and what the user chose; the tool calls of the
 * turn in flight are kept beside it (tool-calls.ts), so that an agent's update is no event to it. `reapplying`: the host is giving a new agent process (after an agent
 * restart, or a warden restart's load or resume) the user's choices (reapply.ts); a prompt
 * whose turn starts meanwhile is started with `hold` (its prompts keep it), and `turns.release`
 * lets it go once the re-apply ended. Live handles (the prompts' requests, the actors) stay out
 * of the context, which keeps only their ids: the prompts are the session's SessionPrompts
 * (session-prompts.ts), bound to the machine, which carries out what it emits.
 *
 * It is the one decider of its turns (turn-queue.ts): `prompt` with a request id queues it
 * (FIFO) or starts it, `cancel` ends the waiting ones and cancels the running one, whose cancel
 * grace is a delayed event it raises itself (`cancel.graceOver`, so a SimulatedClock drives it),
 * `close` and `agent.failed` answer what is left; it emits what its host is to do
 * ({@link SessionMachineEmitted}: start a turn, cancel it on the agent, answer the editor),
 * carried out by its prompts (session-prompts.ts).
 * After a grace that ran out the next prompt starts while the old one winds down: the chart
 * counts prompts in flight (`promptsInFlight`, derived from its turns, for the inspector), so it
 * says `prompting` until the last of them settles.
 */
import { assign, emit, enqueueActions, setup, type AnyActorRef } from 'xstate';
import { RpcError, type ErrorObject } from '../jsonrpc/rpc-error.js';
import { cancelCame, graceOver, inFlight, noTurns, promptAnswered, promptCame, sessionClosed, sessionFailed, type TurnCommand, type TurnDecision, type Turns } from './turn-queue.js';
import { toolCallsEnded } from './tool-calls.js';
import { hasChoices, initialSessionState, reduceSessionState, type ChosenSettings, type SessionState, type SessionStateFact } from './session-state.js';
import type { SessionConfigOption } from '@agentclientprotocol/sdk';
import { defaultCancelGraceMs } from '../supervision/cancel-grace.js';

/** Facts the host agent feeds a session machine. */
export type SessionMachineEvent =
  | { readonly type: 'ready' }
  /** A prompt came: the machine decides its turn (turn-queue.ts). */
  | { readonly type: 'prompt'; readonly requestId: string }
  | { readonly type: 'permission.asked' }
  | { readonly type: 'permission.answered' }
  /** `session/cancel` (no `requestId`), or a `$/cancel_request` of one prompt. */
  | { readonly type: 'cancel'; readonly requestId?: string }
  /** The agent answered a prompt: `result`, or `error`; `outcome`: its stop reason, or `error`. */
  | { readonly type: 'prompt.settled'; readonly outcome: string; readonly requestId: string; readonly result?: unknown; readonly error?: ErrorObject }
  /** The cancel grace of a prompt ran out (a delayed event the machine raises itself). */
  | { readonly type: 'cancel.graceOver'; readonly requestId: string }
  | { readonly type: 'agent.restarting'; readonly restarts: number }
  | { readonly type: 'agent.recovered'; readonly restarts: number }
  /** `error`: what the turns left are answered with (default: `session_failed` naming `reason`). */
  | { readonly type: 'agent.failed'; readonly reason: string; readonly error?: ErrorObject }
  | { readonly type: 'close' }
  /** The host sent `requests` (at least one) re-apply requests (set_mode, set_config_option) to a new agent process. */
  | { readonly type: 'reapply.started'; readonly requests: number }
  /** One of them was answered (accepted or refused); `round`: the `reapplyRound` it belongs to. */
  | { readonly type: 'reapply.answered'; readonly round: number }
  /**
   * The agent said its current mode (`current_mode_update`) or config options
   * (`config_option_update`) on its own. While its process is (re)starting that is where the
   * new process starts (its setup, not a choice: the re-apply that follows puts the user's
   * choice back); otherwise it is a change, kept as chosen (`mode.changed`, `config.changed`).
   */
  | { readonly type: 'mode.reported'; readonly currentModeId: string }
  | { readonly type: 'config.reported'; readonly configOptions: readonly SessionConfigOption[] }
  /** The session's owner changed: this host claimed it at another epoch, or another host took it (it moved away). */
  | { readonly type: 'owner.changed'; readonly owner: SessionOwnership }
  | SessionStateFact;

/**
 * Who owns a session, on a store several hosts share (PostgreSQL): the owner host and the epoch
 * it holds the session at, as far as this host knows. Each part is absent when not known (the
 * store has no owner for it, or no row of that host any more).
 */
export interface SessionOwnership {
  /** The owner host's id (the journal's `hostId`, as `warden sessions` shows it). */
  readonly hostId?: string;
  /** The owner host's name (its machine's host name), when the store keeps one. */
  readonly hostName?: string;
  readonly epoch?: number;
  /** Whether this host is the owner: `false` once the session moved to another host (or to none). */
  readonly here: boolean;
}

/** What a session machine remembers. */
export interface SessionMachineContext {
  readonly sessionId: string;
  readonly agent: string;
  /** Restarts of the agent process over the session's life (journaled ones included). */
  readonly restarts: number;
  /** Prompts answered (with a stop reason or an error). */
  readonly promptsSettled: number;
  /** How the last prompt ended: a stop reason, or `error`. */
  readonly lastOutcome: string | undefined;
  /** Prompts with the agent, not settled yet (one, except after a cancel grace ran out): derived from `turns`, shown by the inspector. */
  readonly promptsInFlight: number;
  /** Why the session failed. */
  readonly failure: string | undefined;
  /** What the agent reported and the user set (see session-state.ts). */
  readonly state: SessionState;
  /** Counts the re-apply rounds: an answer of an earlier round (the agent restarted meanwhile) is stale. */
  readonly reapplyRound: number;
  /** Re-apply requests of this round not answered yet. */
  readonly reapplyOutstanding: number;
  /** The session's turns (turn-queue.ts): the waiting prompts, the running one, its cancel. */
  readonly turns: Turns;
  /** After a cancel, how long the agent has to answer the running prompt before it is answered `cancelled`. */
  readonly cancelGraceMs: number;
  /** Who owns the session, on a store several hosts share; `undefined` on one without owners (SQLite). */
  readonly owner: SessionOwnership | undefined;
}

/** Input of a session machine. */
export interface SessionMachineInput {
  readonly sessionId: string;
  readonly agent: string;
  /** Restarts already journaled (a session re-attached after a host restart). */
  readonly restarts?: number;
  /** What the journal says the user chose (a session re-attached after a host restart). */
  readonly chosen?: ChosenSettings;
  /** The journaled resume handle. */
  readonly resume?: unknown;
  /** The cancel grace, ms (default {@link defaultCancelGraceMs}, 5 s). */
  readonly cancelGraceMs?: number;
  /** Who owns it, as the journal said when this host created or claimed it (absent: a store without owners). */
  readonly owner?: SessionOwnership;
}

/**
 * What a session machine emits: the commands of its turns, for its host to carry out. A
 * `turn.start` with `hold` comes while a new agent process is to get the user's choices first
 * (`reapplying`, or `recovering` with choices to give): the host journals the prompt and keeps
 * it; `turns.release` says the new process is ready for them (the re-apply ended, or the
 * agent recovered with nothing to re-apply): what waited goes on, in order.
 */
export type SessionMachineEmitted =
  | Exclude<TurnCommand, { type: 'turn.start' }>
  | { readonly type: 'turn.start'; readonly requestId: string; readonly hold: boolean }
  | { readonly type: 'turns.release' };

/** The names of the session machine's states. */
export type SessionStateName = 'starting' | 'ready' | 'prompting' | 'awaitingPermission' | 'cancelling' | 'recovering' | 'reapplying' | 'closed' | 'failed';

/** A prompt settled: `prompting` while another is in flight, else `ready`. */
const settled = [
  { guard: 'anotherInFlight', target: 'prompting', actions: 'promptSettled' },
  { target: 'ready', actions: 'promptSettled' },
] as const;

/** How `prompting` and `awaitingPermission` both end a running prompt (kept after their own events: the chart lists them in this order). */
const turnEnding = {
  // A $/cancel_request of a waiting prompt ends that one alone: the running one goes on.
  cancel: [{ guard: 'cancelsRunning', target: 'cancelling', actions: 'cancelTurn' }, { actions: 'cancelTurn' }],
  'prompt.settled': settled,
  'cancel.graceOver': { actions: 'graceOver' },
} as const;

/** The id of a prompt's cancel grace timer. */
const graceId = (requestId: string) => `cancel-grace:${requestId}`;

/** Why prompts of a failed session fail: those in flight when it fails and those sent to it after. */
export const sessionFailedError = (sessionId: string, reason: string): RpcError =>
  RpcError.because('session_failed', `Internal error: session ${sessionId} failed (${reason}); session/load or session/resume starts it again in a new agent process`, { sessionId });

const stateFacts = ['setup.reported', 'mode.changed', 'config.changed', 'config.set', 'update.reported', 'resume.changed'] as const;

/** The session state chart (see the module comment). */
export const sessionMachine = setup({
  types: {} as { context: SessionMachineContext; events: SessionMachineEvent; input: SessionMachineInput; emitted: SessionMachineEmitted },
  guards: {
    promptInFlight: ({ context }) => context.promptsInFlight > 0,
    /** A cancel of the session, or of the running prompt (not of a waiting one). */
    cancelsRunning: ({ context, event }) => {
      const { requestId } = event as Extract<SessionMachineEvent, { type: 'cancel' }>;
      return requestId === undefined || requestId === context.turns.running;
    },
    /** Another prompt is still in flight after this one settles, or one waits to start. */
    anotherInFlight: ({ context, event }) => inFlight(promptAnswered(context.turns, (event as { requestId: string }).requestId, undefined, undefined).turns) > 0,
    /** The last outstanding re-apply request of this round was answered. */
    lastReapplyAnswered: ({ context, event }) => (event as { round?: number }).round === context.reapplyRound && context.reapplyOutstanding <= 1,
    lastReapplyAnsweredWithPrompt: ({ context, event }) => (event as { round?: number }).round === context.reapplyRound && context.reapplyOutstanding <= 1 && context.promptsInFlight > 0,
  },
  actions: {
    /** A prompt: queued, or started. */
    promptStarted: enqueueActions(({ context, event, enqueue, self }) => {
      decide(enqueue, context, promptCame(context.turns, (event as Extract<SessionMachineEvent, { type: 'prompt' }>).requestId), self);
    }),
    promptSettled: enqueueActions(({ context, event, enqueue, self }) => {
      const settled = event as Extract<SessionMachineEvent, { type: 'prompt.settled' }>;
      const decided = promptAnswered(context.turns, settled.requestId, settled.result, settled.error);
      // An answer the session already gave (the grace ran out, it closed) is no news.
      if (decided.commands.length === 0 && !context.turns.abandoned.includes(settled.requestId)) return;
      const promptsInFlight = inFlight(decided.turns);
      enqueue.assign({
        promptsInFlight,
        promptsSettled: context.promptsSettled + 1,
        lastOutcome: settled.outcome,
      });
      // Its turns are over: no tool call of them runs any more (tool-calls.ts keeps them beside the machine).
      if (promptsInFlight === 0) enqueue(() => toolCallsEnded(self));
      decide(enqueue, context, decided, self);
    }),
    cancelTurn: enqueueActions(({ context, event, enqueue, self }) => {
      const { requestId } = event as Extract<SessionMachineEvent, { type: 'cancel' }>;
      decide(enqueue, context, cancelCame(context.turns, requestId, self.getSnapshot().value === 'awaitingPermission'), self);
    }),
    graceOver: enqueueActions(({ context, event, enqueue, self }) => {
      decide(enqueue, context, graceOver(context.turns, (event as Extract<SessionMachineEvent, { type: 'cancel.graceOver' }>).requestId), self);
    }),
    closeTurns: enqueueActions(({ context, enqueue, self }) => decide(enqueue, context, sessionClosed(context.turns), self)),
    failTurns: enqueueActions(({ context, event, enqueue, self }) => {
      decide(enqueue, context, sessionFailed(context.turns, (event as Extract<SessionMachineEvent, { type: 'agent.failed' }>).error ?? sessionFailedError(context.sessionId, (event as Extract<SessionMachineEvent, { type: 'agent.failed' }>).reason).toErrorObject()), self);
    }),
    /** The new agent process is ready for the prompts held for it. */
    releaseTurns: emit({ type: 'turns.release' } as const),
    countRestart: enqueueActions(({ context, event, enqueue, self }) => {
      enqueue.assign({
        restarts: Math.max(context.restarts + 1, (event as Extract<SessionMachineEvent, { type: 'agent.restarting' }>).restarts),
        // Answers still due to the previous process's re-apply are stale from now on.
        reapplyRound: context.reapplyRound + 1,
        reapplyOutstanding: 0,
      });
      // The process that ran them is gone: no tool call of its turn runs any more.
      enqueue(() => toolCallsEnded(self));
    }),
    setOwner: assign({ owner: ({ event }) => (event as Extract<SessionMachineEvent, { type: 'owner.changed' }>).owner }),
    fail: assign({ failure: ({ event }) => (event as Extract<SessionMachineEvent, { type: 'agent.failed' }>).reason, promptsInFlight: 0 }),
    reduce: assign({ state: ({ context, event }) => reduceSessionState(context.state, event as SessionStateFact) }),
    /** What the agent reported on its own, in a live session: a change. */
    reportedChange: assign({ state: ({ context, event }) => reduceSessionState(context.state, reportedAsChange(event as ReportedFact)) }),
    /** What the agent reported on its own while its process (re)starts: its setup. */
    reportedSetup: assign({ state: ({ context, event }) => reduceSessionState(context.state, reportedAsSetup(context.state, event as ReportedFact)) }),
    reapplyStarted: assign(({ context, event }) => ({
      reapplyRound: context.reapplyRound + 1,
      reapplyOutstanding: (event as Extract<SessionMachineEvent, { type: 'reapply.started' }>).requests,
    })),
    reapplyAnswered: assign({
      reapplyOutstanding: ({ context, event }) => ((event as { round?: number }).round === context.reapplyRound ? Math.max(0, context.reapplyOutstanding - 1) : context.reapplyOutstanding),
    }),
  },
}).createMachine({
  id: 'session',
  context: ({ input }) => ({
    sessionId: input.sessionId,
    agent: input.agent,
    restarts: input.restarts ?? 0,
    promptsSettled: 0,
    lastOutcome: undefined,
    promptsInFlight: 0,
    failure: undefined,
    state: initialSessionState(input.chosen, input.resume),
    reapplyRound: 0,
    reapplyOutstanding: 0,
    turns: noTurns,
    cancelGraceMs: input.cancelGraceMs ?? defaultCancelGraceMs,
    owner: input.owner,
  }),
  initial: 'starting',
  on: {
    'agent.restarting': { target: '.recovering', actions: 'countRestart' },
    'agent.failed': { target: '.failed', actions: ['failTurns', 'fail'] },
    close: { target: '.closed', actions: 'closeTurns' },
    ...Object.fromEntries(stateFacts.map((fact) => [fact, { actions: 'reduce' }])),
    'mode.reported': { actions: 'reportedChange' },
    'config.reported': { actions: 'reportedChange' },
    'owner.changed': { actions: 'setOwner' },
  },
  states: {
    starting: {
      on: {
        'mode.reported': { actions: 'reportedSetup' },
        'config.reported': { actions: 'reportedSetup' },
        ready: { target: 'ready' },
        // Never from the editor (the server knows a session once it is ready): decided as anywhere.
        prompt: { actions: 'promptStarted' },
        'reapply.started': { target: 'reapplying', actions: 'reapplyStarted' },
      },
    },
    ready: {
      on: { prompt: { target: 'prompting', actions: 'promptStarted' } },
    },
    prompting: {
      on: {
        prompt: { actions: 'promptStarted' },
        'permission.asked': { target: 'awaitingPermission' },
        ...turnEnding,
      },
    },
    awaitingPermission: {
      on: {
        prompt: { actions: 'promptStarted' },
        'permission.answered': { target: 'prompting' },
        ...turnEnding,
      },
    },
    cancelling: {
      on: {
        // The cancel grace ran out and answered: the next prompt starts meanwhile.
        prompt: { actions: 'promptStarted' },
        // A permission answered "cancelled" or a late one changes nothing here.
        'permission.answered': {},
        'prompt.settled': settled,
        // The grace ran out: the prompt is answered `cancelled`, the next one (if any) starts while the old turn winds down.
        'cancel.graceOver': { actions: 'graceOver' },
        // A cancel of the prompt that started meanwhile.
        cancel: { actions: 'cancelTurn' },
      },
    },
    recovering: {
      on: {
        'mode.reported': { actions: 'reportedSetup' },
        'config.reported': { actions: 'reportedSetup' },
        // Restarted again before it recovered: still recovering, one more restart.
        'agent.restarting': { actions: 'countRestart' },
        'agent.recovered': [{ guard: 'promptInFlight', target: 'prompting', actions: 'releaseTurns' }, { target: 'ready', actions: 'releaseTurns' }],
        // The new process is up and the user chose something: it gets that before any prompt.
        'reapply.started': { target: 'reapplying', actions: 'reapplyStarted' },
        // The crashed prompt is answered while the agent comes back; a new one waits for it.
        'prompt.settled': { actions: 'promptSettled' },
        prompt: { actions: 'promptStarted' },
        cancel: { actions: 'cancelTurn' },
        'cancel.graceOver': { actions: 'graceOver' },
        ready: { target: 'ready', actions: 'releaseTurns' },
      },
    },
    reapplying: {
      on: {
        'reapply.answered': [
          { guard: 'lastReapplyAnsweredWithPrompt', target: 'prompting', actions: ['reapplyAnswered', 'releaseTurns'] },
          { guard: 'lastReapplyAnswered', target: 'ready', actions: ['reapplyAnswered', 'releaseTurns'] },
          { actions: 'reapplyAnswered' },
        ],
        // A crashed prompt settles late; the prompts that came meanwhile wait in the host.
        'prompt.settled': { actions: 'promptSettled' },
        prompt: { actions: 'promptStarted' },
        cancel: { actions: 'cancelTurn' },
        'cancel.graceOver': { actions: 'graceOver' },
        'permission.answered': {},
      },
    },
    closed: { type: 'final' },
    failed: { type: 'final' },
  },
});

/** A mode or config the agent reported on its own (the machine decides what it means). */
export type ReportedFact = Extract<SessionMachineEvent, { type: 'mode.reported' | 'config.reported' }>;

function reportedAsChange(fact: ReportedFact): SessionStateFact {
  return fact.type === 'mode.reported' ? { type: 'mode.changed', currentModeId: fact.currentModeId } : { type: 'config.changed', configOptions: fact.configOptions };
}

function reportedAsSetup(state: SessionState, fact: ReportedFact): SessionStateFact {
  if (fact.type === 'config.reported') return { type: 'setup.reported', configOptions: fact.configOptions };
  // A mode the agent starts in means something only beside the modes it offers.
  return state.modes ? { type: 'setup.reported', modes: { ...state.modes, currentModeId: fact.currentModeId } } : { type: 'setup.reported' };
}

/**
 * Whether a prompt whose turn starts now waits for a new agent process to get the user's
 * choices: the chart is re-applying them, or the agent is restarting and there are choices to
 * give the new process. (Read before the transition: the events that start a turn here leave
 * `reapplying` and `recovering` as they are.) The host asks again once the prompt is journaled:
 * with a journal that answers later, the re-apply may have ended meanwhile (`turns.release` gone
 * by), and a prompt held then would wait for a release that never comes.
 */
export function holdsPrompts(self: AnyActorRef): boolean {
  const snapshot = self.getSnapshot() as { value: unknown; context: SessionMachineContext };
  return snapshot.value === 'reapplying' || (snapshot.value === 'recovering' && hasChoices(snapshot.context.state.chosen));
}

/** Carries out a turn decision: the turns kept, the grace timer armed or disarmed, the commands emitted to the host. */
function decide(enqueue: { assign: (values: Partial<SessionMachineContext>) => void; cancel: (id: string) => void; raise: (event: SessionMachineEvent, options: { delay: number; id: string }) => void; emit: (event: SessionMachineEmitted) => void }, context: SessionMachineContext, decision: TurnDecision, self: AnyActorRef): void {
  enqueue.assign({ turns: decision.turns, promptsInFlight: inFlight(decision.turns) });
  if (decision.disarm) enqueue.cancel(graceId(decision.disarm));
  if (decision.arm) enqueue.raise({ type: 'cancel.graceOver', requestId: decision.arm }, { delay: context.cancelGraceMs, id: graceId(decision.arm) });
  for (const command of decision.commands) enqueue.emit(command.type === 'turn.start' ? { ...command, hold: holdsPrompts(self) } : command);
}
