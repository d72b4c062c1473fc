/**
 * Draining a session's replay: waiting, by round trips of a cheap request, until the agent
 * has written everything it had queued for a session (an agent may go on streaming a
 * `session/load` replay after its answer).
 */
import type { AnyActorRef } from 'xstate';
import { sendRequest } from '../jsonrpc/connection.js';
import type { RpcError } from '../jsonrpc/rpc-error.js';
import { readGateOf } from '../port/read-gate.js';
import type { AgentClientEmitted } from './agent-client-contract.js';
import { liveOf, requireInitialized } from './agent-client-state.js';

/** The extension request of {@link drainReplay}: any answer will do, `-32601` included. */
export const DRAIN_METHOD = '_acp-warden/drain';

/** How {@link drainReplay} ended. */
export interface DrainOutcome {
  /** The session's updates that arrived while it waited. */
  readonly updates: number;
  /** Round trips made. */
  readonly rounds: number;
  /** `false` when it gave up (a round trip unanswered in `timeoutMs`, or `maxRounds` used): the replay may go on. */
  readonly drained: boolean;
}

/**
 * Waits until the agent has written everything it had queued for `sessionId`, such as a
 * `session/load` replay it goes on streaming after its answer (Gemini CLI 0.61.0). It sends
 * a cheap request ({@link DRAIN_METHOD}) and waits for the answer, again and again, until two
 * round trips in a row bring no update of the session. One stdio pipe is FIFO, so an update
 * written before an answer arrives before it; an agent still writing its replay one update
 * after the other has written the next one before it reads the next request, so a round trip
 * that brings none means the replay is over (the second one covers an answer and an update
 * finishing in either order). A call made while nothing is pending costs two round trips.
 * A round gives up after `timeoutMs` (10 s) of the read gate being open: time the editor
 * stalls (the gate closed, the agent's output unread) does not count.
 * Rejects as the request does when the agent dies (`peer_lost`).
 */
export async function drainReplay(client: AnyActorRef, sessionId: string, options: { readonly timeoutMs?: number; readonly maxRounds?: number } = {}): Promise<DrainOutcome> {
  const live = liveOf(client);
  requireInitialized(live, DRAIN_METHOD);
  const maxRounds = options.maxRounds ?? 1000;
  let window = 0;
  let updates = 0;
  const listener = client.on('acp.update', (event: Extract<AgentClientEmitted, { type: 'acp.update' }>) => {
    if (event.sessionId === sessionId) window++;
  });
  try {
    let quiet = 0;
    for (let rounds = 1; rounds <= maxRounds; rounds++) {
      window = 0;
      if ((await drainRound(client, live.connection, sessionId, options.timeoutMs ?? 10_000)) === 'timed_out') return { updates: updates + window, rounds, drained: false };
      updates += window;
      quiet = window === 0 ? quiet + 1 : 0;
      if (quiet === 2) return { updates, rounds, drained: true };
    }
    return { updates, rounds: maxRounds, drained: false };
  } finally {
    listener.unsubscribe();
  }
}

/**
 * One round trip of {@link drainReplay}. Its deadline runs only while the read gate is open:
 * while the editor's output is backed up, the agent's answer is not read (the port waits), so
 * a stalled editor must not look like an agent that never answers.
 */
async function drainRound(client: AnyActorRef, connection: AnyActorRef, sessionId: string, timeoutMs: number): Promise<'answered' | 'timed_out'> {
  const deadline = readGateOf(client.system).openDeadline(timeoutMs);
  const abort = new AbortController();
  const timedOut = deadline.expired.then(() => 'timed_out' as const);
  const answered = sendRequest(connection, DRAIN_METHOD, { sessionId }, { timeout: 'none', signal: abort.signal }).then(
    () => 'answered' as const,
    (error: unknown) => {
      // Any answer is the agent's: an error answer (method not found) is as good as a result.
      if ((error as RpcError).failure === 'error_response') return 'answered' as const;
      if (abort.signal.aborted) return 'timed_out' as const;
      throw error;
    },
  );
  try {
    const outcome = await Promise.race([answered, timedOut]);
    if (outcome === 'timed_out') {
      abort.abort();
      await answered.catch(() => undefined);
    }
    return outcome;
  } finally {
    deadline.cancel();
  }
}
