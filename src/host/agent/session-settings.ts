/**
 * The session's state: what the user chose, journaled, and given again to a new agent process.
 */
import type { SessionConfigOption, SessionUpdate } from '@agentclientprotocol/sdk';
import { AGENT_METHODS } from '../../protocol/methods.js';
import type { AgentEventContext } from '../../protocol/native-agent.js';
import type { ErrorObject } from '../../jsonrpc/rpc-error.js';
import type { ReportedFact, SessionMachineContext } from '../../session/session-machine.js';
import { toolCallReported } from '../../session/tool-calls.js';
import { chosenFromEntries, type ChosenSettings, type ConfigValue, type SessionStateFact, stateUpdateKinds } from '../../session/session-state.js';
import type { ReapplyRequest } from '../../session/reapply.js';
import { canonicalJson } from '../../journal/canonical-json.js';
import type { HostSession, Live, Pending } from './live.js';
import { sendToSession } from './inner-agents.js';
import { stateOf } from './session-record.js';
import { notify } from './notify.js';
import { failedWrite } from './journal-failures.js';
import { journalCall, record } from './journal-writes.js';

/** The agent accepted the user's set_mode or set_config_option: the session's state, journaled. */
export function settingAnswered(live: Live, session: HostSession, modeId: string | undefined, config: { readonly configId: string; readonly value: ConfigValue } | undefined, result: unknown): void {
  if (modeId !== undefined) changeState(live, session, { type: 'mode.changed', currentModeId: modeId });
  if (config) changeState(live, session, { type: 'config.set', configId: config.configId, value: config.value });
  const configOptions = (result as { configOptions?: SessionConfigOption[] } | undefined)?.configOptions;
  if (Array.isArray(configOptions)) changeState(live, session, { type: 'config.changed', configOptions });
}

/**
 * An update of the agent's that says something about the session's state (mode, config,
 * title, commands, tool calls). Whether a mode or config it reports is a choice or where a
 * (re)starting process begins is the session machine's call (`mode.reported`, `config.reported`).
 */
export function reportUpdate(live: Live, session: HostSession, update: SessionUpdate): void {
  if (update.sessionUpdate === 'current_mode_update') {
    changeState(live, session, { type: 'mode.reported', currentModeId: update.currentModeId });
  } else if (update.sessionUpdate === 'config_option_update') {
    changeState(live, session, { type: 'config.reported', configOptions: update.configOptions });
  } else if (stateUpdateKinds.has(update.sessionUpdate)) {
    session.machine.send({ type: 'update.reported', update });
  } else {
    // A tool call is kept beside the machine (a call, no event): the machine is off each update's path.
    toolCallReported(session.machine, update);
  }
}

/**
 * Feeds the session's chart a fact, and journals what it changed of what the user chose (a
 * `mode` or `config` entry) or of the resume handle (a `resume` entry): the same value again
 * (an agent confirming a re-apply) is no change.
 */
export function changeState(live: Live, session: HostSession, fact: SessionStateFact | ReportedFact): void {
  const before = stateOf(session);
  session.machine.send(fact);
  const after = stateOf(session);
  if (after.chosen.modeId !== undefined && after.chosen.modeId !== before.chosen.modeId) record(live, session.sessionId, { kind: 'mode', modeId: after.chosen.modeId });
  for (const [configId, value] of Object.entries(after.chosen.config)) {
    if (before.chosen.config[configId] !== value) record(live, session.sessionId, { kind: 'config', configId, value });
  }
  if (fact.type === 'resume.changed' && (before.resume === undefined || canonicalJson(before.resume) !== canonicalJson(after.resume))) {
    record(live, session.sessionId, { kind: 'resume', resume: after.resume ?? null });
  }
}

/** A fork takes its source's choices: journaled for it, kept in its chart (what its agent reported stays as reported). */
export function inheritChoices(live: Live, session: HostSession, chosen: ChosenSettings): void {
  const { modes, configOptions } = stateOf(session);
  if (chosen.modeId !== undefined) changeState(live, session, { type: 'mode.changed', currentModeId: chosen.modeId });
  for (const [configId, value] of Object.entries(chosen.config)) changeState(live, session, { type: 'config.set', configId, value });
  session.machine.send({ type: 'setup.reported', modes: modes ?? null, configOptions: configOptions ?? null });
}

/**
 * Gives a new agent process the user's choices (at least one request): the chart is
 * `reapplying` (prompts wait) until each is answered.
 */
export function startReapply(live: Live, session: HostSession, requests: readonly ReapplyRequest[], context: AgentEventContext): void {
  session.machine.send({ type: 'reapply.started', requests: requests.length });
  const { reapplyRound: round } = session.machine.getSnapshot().context as SessionMachineContext;
  for (const request of requests) {
    const requestId = `h${live.nextKey++}`;
    live.pending.set(requestId, { kind: 'reapply', sessionId: session.sessionId, round, request });
    sendToSession(live, session, { type: request.type, requestId, method: request.method, params: { ...request.params }, context });
  }
}

/**
 * A re-apply request answered. Accepted: the session's state shows it. Refused: a notice says
 * which choice the agent did not take (the session goes on with the agent's value; the choice
 * stays journaled). Once the last is answered, what waited goes on (a load's answer, the held prompts).
 */
export function reapplyAnswered(live: Live, pending: Extract<Pending, { kind: 'reapply' }>, result: unknown, error: ErrorObject | undefined): void {
  const session = live.sessions.get(pending.sessionId);
  if (!session) return;
  // Sent to a process that died since: the next process gets its own round.
  if ((session.machine.getSnapshot().context as SessionMachineContext).reapplyRound !== pending.round) return;
  const { request } = pending;
  if (error) {
    notify(live, session.sessionId, 'warning', `${session.agent} did not take ${request.what} again`, `The new agent process refused ${request.method} (${error.message}); the session goes on with the agent's own setting. set_mode or set_config_option chooses again.`);
  } else if (request.method === AGENT_METHODS.session_set_mode) {
    session.machine.send({ type: 'mode.changed', currentModeId: request.params.modeId });
  } else {
    settingAnswered(live, session, undefined, { configId: request.params.configId, value: request.params.value }, result);
  }
  // The last answer of the round: the machine says `turns.release` (turns.ts runs what waited).
  session.machine.send({ type: 'reapply.answered', round: pending.round });
}

/** What the journal says the user chose for a session, to `then`; a journal that cannot say counts a failure and chose nothing. */
export function journaledChoices(live: Live, sessionId: string, then: (chosen: ChosenSettings) => void): void {
  journalCall(live, sessionId, (journal) => journal.stateEntries(sessionId), (read) => {
    if (!read.ok) failedWrite(live, sessionId, read.error);
    then(chosenFromEntries(read.ok ? read.value : []));
  });
}
