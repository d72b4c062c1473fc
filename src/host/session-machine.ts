/**
 * The session state chart: where one session of the host stands, as a pure machine (no side
 * effects: the host agent feeds it the facts and reads its state), so that the inspector,
 * `host.tree()` and the tests see the same thing.
 *
 * ```
 * starting ─ready→ ready ─prompt→ prompting ⇄ awaitingPermission
 *                    ↑              │ cancel
 *                    │              ↓
 *                    └─settled── cancelling
 * (any live state) ─agent.restarting→ recovering ─agent.recovered→ ready | prompting
 * (any live state) ─agent.failed→ failed      (any live state) ─close→ closed
 * ```
 *
 * It also keeps the session's modes and config options as the agent last reported them
 * (`setup.reported` from the answer of session/new, load, resume or fork; `mode.changed` and
 * `config.changed` from set_mode, set_config_option and the agent's updates), which is what
 * a `session/load` or `session/resume` of the live session answers.
 *
 * Prompts reach the session one at a time (the agent server queues the others FIFO), except
 * when the server's cancel grace answered a prompt the agent had not finished: then the next
 * one starts while the old one winds down. The chart counts prompts in flight, so it says
 * `prompting` until the last of them settles.
 */
import type { SessionConfigOption, SessionModeState } from '@agentclientprotocol/sdk';
import { assign, setup } from 'xstate';

/** Facts the host agent feeds a session machine. */
export type SessionMachineEvent =
  | { readonly type: 'ready' }
  | { readonly type: 'prompt' }
  | { readonly type: 'permission.asked' }
  | { readonly type: 'permission.answered' }
  | { readonly type: 'cancel' }
  | { readonly type: 'prompt.settled'; readonly outcome: string }
  | { readonly type: 'agent.restarting'; readonly restarts: number }
  | { readonly type: 'agent.recovered'; readonly restarts: number }
  | { readonly type: 'agent.failed'; readonly reason: string }
  | { readonly type: 'close' }
  /** The agent answered a session setup (new, load, resume, fork) with these (each absent when it did not say). */
  | { readonly type: 'setup.reported'; readonly modes?: SessionModeState | null; readonly configOptions?: readonly SessionConfigOption[] | null }
  /** The current mode changed (set_mode answered, or the agent's `current_mode_update`). */
  | { readonly type: 'mode.changed'; readonly currentModeId: string }
  /** The config options changed (set_config_option answered, or the agent's `config_option_update`). */
  | { readonly type: 'config.changed'; readonly configOptions: readonly SessionConfigOption[] };

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
  /** Prompts with the agent, not settled yet (one, except after a cancel grace ran out). */
  readonly promptsInFlight: number;
  /** Why the session failed. */
  readonly failure: string | undefined;
  /** The modes as the agent last reported them (`undefined`: it never said). */
  readonly modes: SessionModeState | undefined;
  /** The config options as the agent last reported them (`undefined`: it never said). */
  readonly configOptions: readonly SessionConfigOption[] | undefined;
}

/** Input of a session machine. */
export interface SessionMachineInput {
  readonly sessionId: string;
  readonly agent: string;
  /** Restarts already journaled (a session re-attached after a host restart). */
  readonly restarts?: number;
}

/** The names of the session machine's states. */
export type SessionStateName = 'starting' | 'ready' | 'prompting' | 'awaitingPermission' | 'cancelling' | 'recovering' | 'closed' | 'failed';

/** The session state chart (see the module comment). */
/** A prompt settled: `prompting` while another is in flight, else `ready`. */
const settled = [
  { guard: 'anotherInFlight', target: 'prompting', actions: 'promptSettled' },
  { target: 'ready', actions: 'promptSettled' },
] as const;

export const sessionMachine = setup({
  types: {} as { context: SessionMachineContext; events: SessionMachineEvent; input: SessionMachineInput },
  guards: {
    promptInFlight: ({ context }) => context.promptsInFlight > 0,
    /** Another prompt is still in flight after this one settles. */
    anotherInFlight: ({ context }) => context.promptsInFlight > 1,
  },
  actions: {
    promptStarted: assign({ promptsInFlight: ({ context }) => context.promptsInFlight + 1 }),
    promptSettled: assign(({ context, event }) => ({
      promptsInFlight: Math.max(0, context.promptsInFlight - 1),
      promptsSettled: context.promptsSettled + 1,
      lastOutcome: (event as Extract<SessionMachineEvent, { type: 'prompt.settled' }>).outcome,
    })),
    countRestart: assign(({ context, event }) => ({ restarts: Math.max(context.restarts + 1, (event as Extract<SessionMachineEvent, { type: 'agent.restarting' }>).restarts) })),
    fail: assign({ failure: ({ event }) => (event as Extract<SessionMachineEvent, { type: 'agent.failed' }>).reason, promptsInFlight: 0 }),
    setupReported: assign(({ context, event }) => {
      const { modes, configOptions } = event as Extract<SessionMachineEvent, { type: 'setup.reported' }>;
      return {
        modes: modes === undefined ? context.modes : modes ?? undefined,
        configOptions: configOptions === undefined ? context.configOptions : configOptions ?? undefined,
      };
    }),
    modeChanged: assign({
      modes: ({ context, event }) => context.modes && { ...context.modes, currentModeId: (event as Extract<SessionMachineEvent, { type: 'mode.changed' }>).currentModeId },
    }),
    configChanged: assign({ configOptions: ({ event }) => (event as Extract<SessionMachineEvent, { type: 'config.changed' }>).configOptions }),
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
    modes: undefined,
    configOptions: undefined,
  }),
  initial: 'starting',
  on: {
    'agent.restarting': { target: '.recovering', actions: 'countRestart' },
    'agent.failed': { target: '.failed', actions: 'fail' },
    close: { target: '.closed' },
    'setup.reported': { actions: 'setupReported' },
    'mode.changed': { actions: 'modeChanged' },
    'config.changed': { actions: 'configChanged' },
  },
  states: {
    starting: {
      on: { ready: { target: 'ready' } },
    },
    ready: {
      on: { prompt: { target: 'prompting', actions: 'promptStarted' } },
    },
    prompting: {
      on: {
        prompt: { actions: 'promptStarted' },
        'permission.asked': { target: 'awaitingPermission' },
        cancel: { target: 'cancelling' },
        'prompt.settled': settled,
      },
    },
    awaitingPermission: {
      on: {
        prompt: { actions: 'promptStarted' },
        'permission.answered': { target: 'prompting' },
        cancel: { target: 'cancelling' },
        'prompt.settled': settled,
      },
    },
    cancelling: {
      on: {
        // The server's cancel grace ran out and answered: the next prompt starts meanwhile.
        prompt: { actions: 'promptStarted' },
        // A permission answered "cancelled" or a late one changes nothing here.
        'permission.answered': {},
        'prompt.settled': settled,
      },
    },
    recovering: {
      on: {
        // Restarted again before it recovered: still recovering, one more restart.
        'agent.restarting': { actions: 'countRestart' },
        'agent.recovered': [{ guard: 'promptInFlight', target: 'prompting' }, { target: 'ready' }],
        // The crashed prompt is answered while the agent comes back; a new one waits for it.
        'prompt.settled': { actions: 'promptSettled' },
        prompt: { actions: 'promptStarted' },
        cancel: {},
        ready: { target: 'ready' },
      },
    },
    closed: { type: 'final' },
    failed: { type: 'final' },
  },
});
