/**
 * An agent server draining: the editor's input ended (EOF) but it still reads, so what it asked
 * is served and answered, then the server closes (or the drain timeout cancels what still runs).
 */
import { RpcError } from '../jsonrpc/rpc-error.js';
import type { PeerLost } from '../jsonrpc/transport.js';
import { type AgentServerEvent, type Live, sync, requestsHandedOn } from './server-live.js';
import { defaultDrainTimeoutMs } from './drain-timeout.js';

/** After the drain timeout, how long cancelled turns get to end before what is left is answered -32603: 2 s. */
export const drainCancelGraceMs = 2000;

/** The -32603 message of a request still unanswered when draining gives up. */
export const drainGaveUpMessage = 'warden acp is shutting down: the editor closed its input';

/**
 * The editor wrote its last request and half-closed: what it asked is served (prompts run to
 * their end, queued ones too), and the server closes once nothing is left, or after the drain
 * timeout. A delegated initialize still with the agent is waited for first (what was held
 * behind it is served, then draining starts).
 */
export function startDraining(live: Live, inputEnded: PeerLost): void {
  if (live.phase.value !== 'ready' && live.phase.value !== 'awaitingInitialize') return;
  live.phase = { value: 'draining', inputEnded };
  // The drain's own deadline starts now (one set while initialize was with the agent gives way to it).
  live.scope.system.scheduler.cancel(live.scope.self, 'drain:timeout');
  scheduleDrainTimeout(live);
  sync(live);
  checkDrained(live);
}

/** Arms the drain timeout (`acp.drainTimeout`, `drainTimeoutMs` from now). */
export function scheduleDrainTimeout(live: Live): void {
  const self = live.scope.self;
  live.scope.system.scheduler.schedule(self, self, { type: 'acp.drainTimeout' } satisfies AgentServerEvent, live.input.drainTimeoutMs ?? defaultDrainTimeoutMs, 'drain:timeout');
}

/** What a request still unanswered when draining gives up is answered. */
export function drainGaveUp(): RpcError {
  return RpcError.because('shutdown', drainGaveUpMessage);
}

/** Draining and nothing left to answer: the server closes. */
export function checkDrained(live: Live): void {
  // A v2 editor's acknowledged prompts are answered already; their turns still owe it their `idle`.
  if (live.phase.value === 'draining' && requestsHandedOn(live).length === 0 && live.held.length === 0 && (live.v2?.inserted.size ?? 0) === 0) live.scope.self.send({ type: 'acp.drained' });
}
