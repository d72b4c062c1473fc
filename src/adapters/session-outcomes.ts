/**
 * What every session adapter tells the editor in the same situations, in one place: the
 * error of a prompt whose CLI died, and the permission options offered for a tool call.
 */
import type { PermissionOption } from '@agentclientprotocol/sdk';
import type { PortExit } from '../port/port-exit.js';
import type { SessionAdapterOutput } from './adapter.js';

/** The prompt in flight when the CLI died: `-32603`, naming the crash, the exit and the restart count. */
export function crashedPromptError(agent: string, requestId: string, exit: PortExit, restarts: number, resumes: string): SessionAdapterOutput {
  return {
    type: 'acp.error',
    requestId,
    error: {
      code: -32603,
      message: `${agent} stopped during the prompt (${exit.reason.kind}); acp-warden restarts it and ${resumes}`,
      data: { reason: 'agent_crashed', exit: exit.reason, stderrTail: exit.stderrTail, restarts },
    },
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
