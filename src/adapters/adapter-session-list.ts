/**
 * `session/list` of an adapter agent whose definition lists (`ListingAdapterDefinition`): a
 * short-lived CLI of its own under the agent's `sessions` supervisor, stopped once it answered.
 */
import { nanoid } from 'nanoid';
import { type Subscription } from 'xstate';
import { type AgentRequestEvent } from '../protocol/native-agent.js';
import { RpcError } from '../jsonrpc/rpc-error.js';
import { portLogic, portStopBudgetMs, type PortEmitted, type PortInput } from '../port/port.js';
import { createSupervisor } from '../supervision/supervisor.js';
import { whichChildren } from '../supervision/introspection.js';
import type { StartChildResult } from '../supervision/events.js';
import { describeExit, type ExitReason } from '../supervision/exit-reason.js';
import type { SessionAdapterOutput } from './adapter.js';
import { relayPortLines } from './port-link.js';
import { type SessionListing, type Live } from './adapter-agent-live.js';

/**
 * Runs the definition's lister against a CLI started for this request, under the `sessions`
 * supervisor: `list-<id>` (autoShutdown `any_significant`) with the lister (significant) and
 * the port, neither restarted. The lister's final state ends the supervisor, which stops the
 * CLI gracefully; whatever ends it first (the CLI could not start, exited, hung; the lister
 * crashed; the agent is stopping) fails the request instead.
 */
/** How long an agent's listing process may stay silent (at start and after), unless its listing says: 20 s. */
const listingTimeoutMs = 20_000;

export function listSessions(live: Live, request: AgentRequestEvent, listing: SessionListing): void {
  const { definition, executable, envPolicy, env, passthrough } = live.options;
  const id = `list-${nanoid(8)}`;
  const cwd = process.cwd();
  const base = listing.command?.({ executable, cwd }) ?? definition.command?.({ executable, cwd, params: request.params, resume: undefined, restarts: 0 }) ?? { args: [], env: {} };
  const port: PortInput = {
    oversize: 'skip',
    ...definition.port,
    // Owed an answer and silent this long, from its start on (a lister has one budget): hung.
    watchdog: { idleMs: listing.timeoutMs ?? listingTimeoutMs, startupMs: listing.timeoutMs ?? listingTimeoutMs },
    command: executable,
    args: base.args,
    cwd,
    env: {
      ...base.env,
      policy: envPolicy ?? base.env.policy ?? 'isolated',
      passthrough: [...(base.env.passthrough ?? []), ...(passthrough ?? [])],
      explicit: { ...base.env.explicit, ...env },
    },
  };
  const logic = createSupervisor({
    name: `list ${id}`,
    strategy: 'one_for_all',
    intensity: 0,
    period: 1000,
    autoShutdown: 'any_significant',
    children: [
      { id: 'lister', start: { logic: listing.logic, input: { requestId: request.requestId, params: request.params, pageSize: listing.pageSize ?? 50 } }, restart: 'temporary', significant: true },
      { id: 'port', start: { logic: portLogic, input: port }, restart: 'temporary', shutdown: portStopBudgetMs(definition.port?.shutdown) },
    ],
  });
  let answered = false;
  const subscriptions: Subscription[] = [];
  const answer = (output: SessionAdapterOutput) => {
    if (answered) return;
    answered = true;
    live.scope.emit(output);
  };
  // Answered at once, or later when the sessions supervisor is busy stopping a session: the
  // lister only subscribes and emits, which is safe from the supervisor's reply.
  live.sessionsSupervisor.send({
    type: 'supervisor.startChild',
    spec: { id, restart: 'temporary', type: 'supervisor', start: { logic } },
    reply: (started: StartChildResult) => listerStarted(started),
  });

  function listerStarted(started: StartChildResult): void {
    if (!started.ok) {
      answer({ type: 'acp.error', requestId: request.requestId, error: RpcError.because('start_failed', `${definition.name} could not list its sessions: ${startFailure(started.reason)}`).toErrorObject() });
      return;
    }
    const supervisor = started.ref;
    const children = whichChildren(supervisor);
    const lister = children.find((row) => row.id === 'lister')?.ref;
    const cli = children.find((row) => row.id === 'port')?.ref;
    if (lister) {
      subscriptions.push(lister.on('*', (output: SessionAdapterOutput) => {
        if (output.type === 'port.write' || output.type === 'port.busy') cli?.send(output);
        else if ((output.type === 'acp.respond' || output.type === 'acp.error') && output.requestId === request.requestId) answer(output);
      }));
    }
    if (lister && cli) {
      // The lister hears its CLI's lines as a session adapter does (port-link.ts).
      subscriptions.push(...relayPortLines(cli, (event) => lister.send(event)));
      const pid = (cli.getSnapshot() as { context?: { pid?: number } }).context?.pid;
      if (pid !== undefined) lister.send({ type: 'port.started', pid, restarts: 0 });
      else subscriptions.push(cli.on('port.spawned', (event: Extract<PortEmitted, { type: 'port.spawned' }>) => lister.send({ type: 'port.started', pid: event.pid, restarts: 0 })));
    }
    subscriptions.push(supervisor.subscribe({
      complete: () => {
        for (const subscription of subscriptions) subscription.unsubscribe();
        const output = supervisor.getSnapshot().output as ExitReason | undefined;
        answer({ type: 'acp.error', requestId: request.requestId, error: RpcError.because('list_failed', `${definition.name} stopped before listing its sessions (${output ? describeExit(output) : 'stopped'})`).toErrorObject() });
      },
    }));
  }
}

/** Why a supervisor could not start, in words: the innermost cause's message (a port's "could not start (ENOENT) …"). */
export function startFailure(reason: unknown): string {
  let current: unknown = reason;
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
    const object = current as { startFailed?: unknown; detail?: { cause?: unknown }; shortMessage?: unknown; message?: unknown };
    if (typeof object.shortMessage === 'string') return object.shortMessage;
    if (object.startFailed !== undefined) current = object.startFailed;
    else if (object.detail?.cause !== undefined) current = object.detail.cause;
    else if (typeof object.message === 'string') return object.message;
    else break;
  }
  return typeof reason === 'string' ? reason : JSON.stringify(reason);
}
