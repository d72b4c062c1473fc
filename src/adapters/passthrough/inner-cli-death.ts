/**
 * An ACP adapter that answered with its inner CLI's death (claude-agent-acp #338,
 * ../inner-cli-dead.ts): the passthrough treats it as a crash. The adapter's process is killed
 * with exit reason `inner_cli_dead` (its supervisor restarts it, the sessions are re-attached)
 * and the prompt is failed as under a kill (`agent_crashed`), so the crash policy continues it.
 */
import type { AnyActorRef } from 'xstate';
import { RpcError, type ErrorObject } from '../../jsonrpc/rpc-error.js';
import type { PortExitReason } from '../../port/port-exit.js';
import { agentSupervisorOf, childOf } from './agent-supervisor.js';

/** The crash error of a prompt the adapter answered with its inner CLI's death `detail`. */
export function innerCliDeathError(name: string, detail: string, restarts: number): ErrorObject {
  const exit: PortExitReason = { kind: 'inner_cli_dead', detail };
  return RpcError.because('agent_crashed', `Internal error: ${name} answered that its inner CLI is dead (${detail}); acp-warden restarts it and re-attaches the session`, { exit, restarts }).toErrorObject();
}

/** Kills the passthrough `owner`'s agent process with `reason` (its exit), when one runs. */
export function killAgentProcess(owner: AnyActorRef, reason: PortExitReason): void {
  const supervisor = agentSupervisorOf(owner);
  const port = supervisor ? childOf(supervisor, 'port') : undefined;
  port?.send({ type: 'port.internal.kill', reason });
}
