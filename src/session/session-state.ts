/**
 * The state of one session that the user set or the agent reported: its modes, its config
 * options, its title, its commands, the agent-side resume handle, and what the user chose
 * (the mode and config values to put back on a new agent process). A plain record and a
 * pure reducer, so that the session machine keeps it in its context and the journal can
 * rebuild what the user chose from its entries (`chosenFromEntries`).
 */
import type { AvailableCommand, SessionConfigOption, SessionModeState, SessionUpdate } from '@agentclientprotocol/sdk';
import type { JournalRecord } from '../journal/journal.js';

/** A config option's value: a select's value id, or a boolean. */
export type ConfigValue = string | boolean;

/**
 * What the user chose (or the agent switched to by itself) since the session began: the
 * mode and config values a fresh agent process must be given again. Absent: never changed
 * from what the agent starts with.
 */
export interface ChosenSettings {
  readonly modeId: string | undefined;
  /** By config option id. */
  readonly config: Readonly<Record<string, ConfigValue>>;
}

/** A session's state, as the agent last reported it and as the user set it. */
export interface SessionState {
  /** The modes as the agent last reported them (`undefined`: it never said). */
  readonly modes: SessionModeState | undefined;
  /** The config options as the agent last reported them (`undefined`: it never said). */
  readonly configOptions: readonly SessionConfigOption[] | undefined;
  /** The title the agent gave the session (`session_info_update`). */
  readonly title: string | undefined;
  /** The commands the agent last offered (`available_commands_update`). */
  readonly commands: readonly AvailableCommand[] | undefined;
  /** What the agent needs to resume the conversation in a new process (Claude session id, Codex thread id). */
  readonly resume: unknown;
  readonly chosen: ChosenSettings;
}

/** A fact that changes a session's state. */
export type SessionStateFact =
  /** The agent answered a session setup (new, load, resume, fork) with these (each absent when it did not say). */
  | { readonly type: 'setup.reported'; readonly modes?: SessionModeState | null; readonly configOptions?: readonly SessionConfigOption[] | null }
  /** The current mode changed (set_mode answered, or the agent's `current_mode_update`). */
  | { readonly type: 'mode.changed'; readonly currentModeId: string }
  /** The config options changed (the agent's `config_option_update`, or a set_config_option answer that lists them). */
  | { readonly type: 'config.changed'; readonly configOptions: readonly SessionConfigOption[] }
  /** One config option was set (set_config_option answered). */
  | { readonly type: 'config.set'; readonly configId: string; readonly value: ConfigValue }
  /** The agent reported something else about the session (title, commands). */
  | { readonly type: 'update.reported'; readonly update: SessionUpdate }
  /** The agent-side resume handle changed. */
  | { readonly type: 'resume.changed'; readonly resume: unknown };

/**
 * The kinds of `session/update` that change a session's state (the host feeds only these to the
 * machine; the tool calls running are kept beside it: tool-calls.ts).
 */
export const stateUpdateKinds: ReadonlySet<string> = new Set(['session_info_update', 'available_commands_update']);

/** A session nobody said anything about yet; `chosen`: what the journal says the user chose (a session re-attached after a warden restart). */
export function initialSessionState(chosen: ChosenSettings = noChoice, resume?: unknown): SessionState {
  return { modes: undefined, configOptions: undefined, title: undefined, commands: undefined, resume, chosen };
}

const noChoice: ChosenSettings = { modeId: undefined, config: {} };

/** The state after `fact`. */
export function reduceSessionState(state: SessionState, fact: SessionStateFact): SessionState {
  switch (fact.type) {
    case 'setup.reported':
      return {
        ...state,
        modes: fact.modes === undefined ? state.modes : fact.modes ?? undefined,
        configOptions: fact.configOptions === undefined ? state.configOptions : fact.configOptions ?? undefined,
      };
    case 'mode.changed':
      return {
        ...state,
        modes: state.modes && { ...state.modes, currentModeId: fact.currentModeId },
        chosen: { ...state.chosen, modeId: fact.currentModeId },
      };
    case 'config.set':
      return {
        ...state,
        configOptions: state.configOptions?.map((option) => (option.id === fact.configId ? withValue(option, fact.value) : option)),
        chosen: { ...state.chosen, config: { ...state.chosen.config, [fact.configId]: fact.value } },
      };
    case 'config.changed': {
      // What moved from the value the agent reported before is a choice (the user's, or the agent's own switch).
      const config = { ...state.chosen.config };
      for (const option of fact.configOptions) {
        const before = state.configOptions?.find((known) => known.id === option.id);
        if (before && before.currentValue !== option.currentValue) config[option.id] = option.currentValue;
      }
      return { ...state, configOptions: fact.configOptions, chosen: { ...state.chosen, config } };
    }
    case 'resume.changed':
      return { ...state, resume: fact.resume };
    case 'update.reported':
      return reportedUpdate(state, fact.update);
  }
}

function reportedUpdate(state: SessionState, update: SessionUpdate): SessionState {
  switch (update.sessionUpdate) {
    case 'session_info_update':
      return update.title === undefined ? state : { ...state, title: update.title ?? undefined };
    case 'available_commands_update':
      return { ...state, commands: update.availableCommands };
    default:
      return state;
  }
}

function withValue(option: SessionConfigOption, value: ConfigValue): SessionConfigOption {
  return { ...option, currentValue: value } as SessionConfigOption;
}

/**
 * The session's modes and config options as the agent last reported them (after a re-apply:
 * with what it accepted of the user's choices): what `session/load` and `session/resume` answer.
 */
export function setupOf(state: SessionState): { modes?: SessionModeState; configOptions?: SessionConfigOption[] } {
  return {
    ...(state.modes ? { modes: state.modes } : {}),
    ...(state.configOptions ? { configOptions: [...state.configOptions] } : {}),
  };
}

/** What the user chose, from a session's journaled `mode` and `config` entries (the last of each wins). */
export function chosenFromEntries(records: Iterable<JournalRecord>): ChosenSettings {
  let modeId: string | undefined;
  const config: Record<string, ConfigValue> = {};
  for (const { entry } of records) {
    if (entry.kind === 'mode') modeId = entry.modeId;
    else if (entry.kind === 'config') config[entry.configId] = entry.value;
  }
  return { modeId, config };
}

/** Whether the user chose anything a new agent process must be given again. */
export function hasChoices(chosen: ChosenSettings): boolean {
  return chosen.modeId !== undefined || Object.keys(chosen.config).length > 0;
}
