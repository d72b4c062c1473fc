/**
 * What every session adapter tells the editor in the same situations, in one place: how a
 * turn ends, the error of a prompt whose CLI died, and the permission options offered for a
 * tool call. (What a session does with prompts while its CLI is (re)starting is the CLI-session
 * skeleton's, in cli-session.ts.)
 */
import type { PermissionOption, StopReason } from '@agentclientprotocol/sdk';
import type { PortExit } from '../port/port-exit.js';
import type { SessionAdapterOutput } from './adapter.js';
import { RpcError } from '../jsonrpc/rpc-error.js';

/** The prompt in flight when the CLI died: `-32603`, naming the crash, the exit and the restart count. */
export function crashedPromptError(agent: string, requestId: string, exit: PortExit, restarts: number, resumes: string): SessionAdapterOutput {
  return {
    type: 'acp.error',
    requestId,
    error: RpcError.because('agent_crashed', `${agent} stopped during the prompt (${exit.reason.kind}); acp-warden restarts it and ${resumes}`, { exit: exit.reason, stderrTail: exit.stderrTail, restarts }).toErrorObject(),
  };
}

/** The options of a tool-call permission request: always (for the session), once, reject. */
export function permissionOptions(alwaysName: string): PermissionOption[] {
  return [
    { optionId: 'allow_always', name: alwaysName, kind: 'allow_always' },
    { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
    { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
  ];
}

/** How a turn ended, as the adapter's mapping saw it. */
export type TurnOutcome = { readonly stopReason: StopReason } | { readonly error: { readonly message: string; readonly data: Record<string, unknown> } };

/** The answer to the prompt `requestId`: its stop reason, or `-32603` with the agent's error. */
export function promptOutcome(requestId: string, outcome: TurnOutcome): SessionAdapterOutput {
  return 'error' in outcome
    ? { type: 'acp.error', requestId, error: { code: -32603, message: outcome.error.message, data: outcome.error.data } }
    : { type: 'acp.respond', requestId, result: { stopReason: outcome.stopReason } };
}
