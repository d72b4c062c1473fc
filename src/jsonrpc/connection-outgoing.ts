/**
 * The bookkeeping of our requests to the peer once sent: each settled exactly once (its
 * pending-request actor told how), deadlines (fixed or idle) scheduled and fired, answers to
 * requests we stopped waiting for remembered so that they are dropped quietly, and every
 * request failed at once when the peer's input ends or the peer is lost.
 */
import type { JsonRpcId } from './message.js';
import type { RequestOutcome } from './pending-request.js';
import { RpcError } from './rpc-error.js';
import type { PeerLost } from './transport.js';
import type { ConnectionEvent, Timeout } from './connection-contract.js';
import { holdReading, type Live, type Outgoing } from './connection-state.js';

/** Answers to at most this many abandoned requests are recognised (and dropped quietly). */
const abandonedLimit = 1024;

/** Ends a request's pending-request actor with its outcome, and its deadline timer with it. */
export function settle(live: Live, id: JsonRpcId, entry: Outgoing, outcome: RequestOutcome): void {
  if (entry.timeout !== 'none') live.scope.system.scheduler.cancel(live.scope.self, `timeout:${id}`);
  entry.ref.send({ type: 'request.settle', outcome });
}

/** Stops waiting for a request: its late answer will be dropped quietly. */
export function abandon(live: Live, id: JsonRpcId): void {
  live.abandoned.add(id);
  if (live.abandoned.size > abandonedLimit) {
    const oldest = live.abandoned.values().next().value as JsonRpcId;
    live.abandoned.delete(oldest);
  }
}

/** The deadline of a request: its own, its method's, the connection's default, or none. */
export function timeoutFor(live: Live, method: string, override: Timeout | undefined): Timeout {
  return override ?? live.input.timeouts?.methods?.[method] ?? live.input.timeouts?.default ?? 'none';
}

/** Schedules the deadline of request `id` on the system's clock. */
export function scheduleTimeout(live: Live, id: JsonRpcId, delay: number): void {
  const self = live.scope.self;
  const due: ConnectionEvent = { type: 'rpc.timeout', id };
  live.scope.system.scheduler.schedule(self, self, due, Math.max(0, delay), `timeout:${id}`);
}

/** A deadline fired: an idle deadline moves if the peer spoke meanwhile, else the request fails. */
export function onTimeout(live: Live, id: JsonRpcId): void {
  const entry = live.outgoing.get(id);
  if (!entry || typeof entry.timeout !== 'object' && typeof entry.timeout !== 'number') return;
  if (typeof entry.timeout === 'object') {
    // An idle deadline: any message from the peer since then moves it.
    const quiet = live.now() - Math.max(live.lastActivity, entry.sentAt);
    if (quiet < entry.timeout.idleMs) {
      scheduleTimeout(live, id, entry.timeout.idleMs - quiet);
      return;
    }
  }
  live.outgoing.delete(id);
  abandon(live, id);
  const ms = typeof entry.timeout === 'number' ? entry.timeout : entry.timeout.idleMs;
  settle(live, id, entry, 'timedOut');
  holdReading(live);
  entry.reject(RpcError.because('timeout', 'Request cancelled', { method: entry.method, timeoutMs: ms }));
}

/** The error of a request to a peer whose input ended: it can never answer. */
export function inputEndedError(reason: PeerLost, method: string): RpcError {
  return RpcError.because('input_ended', `The peer can no longer answer ${method}: ${reason.message}`, { method });
}

/** The peer sends nothing more: what we asked it fails now; what it asked us is still answered. */
export function onInputEnded(live: Live, reason: PeerLost): void {
  if (live.closed || live.inputEnded) return;
  live.inputEnded = reason;
  const entries = [...live.outgoing];
  live.outgoing.clear();
  for (const [id, entry] of entries) {
    settle(live, id, entry, 'peerLost');
    entry.reject(inputEndedError(reason, entry.method));
  }
  live.scope.emit({ type: 'rpc.inputEnded', reason });
}

/** The peer is gone: every request of ours fails `peer_lost`; what it asked us is forgotten. */
export function settleAll(live: Live, reason: PeerLost): void {
  const entries = [...live.outgoing];
  live.outgoing.clear();
  live.incoming.clear();
  for (const [id, entry] of entries) {
    // Through settle, so that each request's deadline timer goes with it.
    settle(live, id, entry, 'peerLost');
    const error = RpcError.because('peer_lost', `The peer is gone: ${reason.message}`, { method: entry.method, exit: reason.exit });
    entry.reject(error);
  }
}
