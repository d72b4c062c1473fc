/**
 * What to send a new agent process so that it runs the session as the user set it: the
 * mode and config values the user chose (journaled), as `session/set_mode` and
 * `session/set_config_option` requests. After an agent restart the new process starts from
 * its defaults, so every choice is sent again; after a warden restart (`session/load` or
 * `session/resume` of a journaled session) only those the agent's answer does not already show.
 */
import { AGENT_METHODS } from '../protocol/methods.js';
import type { SessionState } from './session-state.js';

/** One request that puts a choice back. */
export type ReapplyRequest =
  | { readonly method: typeof AGENT_METHODS.session_set_mode; readonly type: 'session.setMode'; readonly what: string; readonly params: { readonly sessionId: string; readonly modeId: string } }
  | {
      readonly method: typeof AGENT_METHODS.session_set_config_option;
      readonly type: 'session.setConfigOption';
      readonly what: string;
      readonly params: { readonly sessionId: string; readonly configId: string; readonly value: string | boolean; readonly type?: 'boolean' };
    };

/**
 * The requests that give the agent the user's choices, in a stable order (mode first, then
 * config options by id). `onlyDifferences`: leave out what the agent's last report already shows.
 */
export function reapplyRequests(sessionId: string, state: SessionState, { onlyDifferences }: { readonly onlyDifferences: boolean }): ReapplyRequest[] {
  const requests: ReapplyRequest[] = [];
  const { modeId, config } = state.chosen;
  if (modeId !== undefined && !(onlyDifferences && state.modes?.currentModeId === modeId)) {
    requests.push({ method: AGENT_METHODS.session_set_mode, type: 'session.setMode', what: `mode ${modeId}`, params: { sessionId, modeId } });
  }
  for (const configId of Object.keys(config).sort()) {
    const value = config[configId] as string | boolean;
    if (onlyDifferences && state.configOptions?.find((option) => option.id === configId)?.currentValue === value) continue;
    requests.push({
      method: AGENT_METHODS.session_set_config_option,
      type: 'session.setConfigOption',
      what: `${configId} ${String(value)}`,
      params: { sessionId, configId, value, ...(typeof value === 'boolean' ? { type: 'boolean' as const } : {}) },
    });
  }
  return requests;
}
