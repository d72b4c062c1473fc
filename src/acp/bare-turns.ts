/**
 * The turns of a bare native agent's session (one that does not own its turns), decided and
 * carried out as the host's sessions' are: by a session machine (src/session/session-machine.ts,
 * turn-queue.ts) with its prompts (session-prompts.ts), a child of the agent server. One prompt
 * at a time goes to the handler, FIFO; a cancel ends the waiting ones and cancels the running one
 * on the handler, which has the cancel grace to answer it; a cancelled prompt ends `cancelled`
 * and its turn's late updates are dropped. Nothing is journaled (the server has no journal).
 */
import { createActor, type AnyActorRef, type Subscription } from 'xstate';
import type { ErrorObject } from '../jsonrpc/rpc-error.js';
import { sessionMachine, type SessionMachineContext } from '../session/session-machine.js';
import { SessionPrompts, type PromptRequest } from '../session/session-prompts.js';
import { lateTurnUpdate, type Turns } from '../session/turn-queue.js';

/** What the agent server lends a bare agent's session for its turns. */
export interface BareTurnsHost {
  /** The agent server (the machine's parent: its timers run on the server's clock). */
  readonly parent: AnyActorRef;
  readonly agent: string;
  readonly cancelGraceMs: number;
  /** Sends a prompt whose turn started to the handler. */
  send(request: PromptRequest): void;
  /** Cancels the running prompt on the handler; `false`: the handler has no cancel (its grace is over at once). */
  cancel(requestId: string): boolean;
  /** Answers the editor's prompt. */
  answer(requestId: string, outcome: { readonly result: unknown } | { readonly error: ErrorObject }): void;
}

/**
 * Whom the handler's next updates are for, where the machine's turns do not say it yet:
 * - `turns`: the turns decide (an update of a cancelled turn's quiet is dropped);
 * - `answered`: the handler answered the running prompt `requestId` and the machine has not
 *   taken the answer yet (a handler may answer a cancel at once, inside the machine's step):
 *   what it says right after belongs to that turn, over once the machine takes it;
 * - `asked`: another request to the session came while its turns were quiet: what the handler
 *   says now answers it, not the cancelled turn, until the next prompt starts.
 */
type UpdatesFor = { readonly kind: 'turns' } | { readonly kind: 'answered'; readonly requestId: string } | { readonly kind: 'asked' };

const byTurns: UpdatesFor = { kind: 'turns' };

/** One bare agent session's turns (see the module comment). */
export class BareTurns {
  readonly machine: AnyActorRef;
  readonly #prompts: SessionPrompts;
  #updatesFor: UpdatesFor = byTurns;
  readonly #subscription: Subscription;

  constructor(sessionId: string, host: BareTurnsHost) {
    this.machine = createActor(sessionMachine, { parent: host.parent, id: `session:${sessionId}`, input: { sessionId, agent: host.agent, cancelGraceMs: host.cancelGraceMs } });
    const machine = this.machine;
    // The agent and the editor only: no journal, no permissions of its own, no re-apply, never elsewhere.
    this.#prompts = new SessionPrompts({
      send: (request) => host.send(request),
      cancel: (requestId) => {
        // A handler without a cancel transition: its grace is over at once.
        if (!host.cancel(requestId)) machine.send({ type: 'cancel.graceOver', requestId });
      },
      answer: (requestId, outcome) => host.answer(requestId, outcome),
    });
    this.#prompts.bind(machine);
    // `asked` lasts until the turns are no longer quiet (the next prompt starts); `answered` until the machine took the answer.
    this.#subscription = machine.subscribe((snapshot) => {
      const turns = (snapshot.context as SessionMachineContext).turns;
      const over = this.#updatesFor.kind === 'asked' ? !turns.quiet : this.#updatesFor.kind === 'answered' && turns.running !== this.#updatesFor.requestId;
      if (over) this.#updatesFor = byTurns;
    });
    machine.start();
    machine.send({ type: 'ready' });
  }

  #turns(): Turns {
    return (this.machine.getSnapshot().context as SessionMachineContext).turns;
  }

  /** A prompt came (`requestId`: the server's key for it): its turn is decided. */
  came(requestId: string, params: Record<string, unknown>): void {
    this.#prompts.came({ requestId, params });
  }

  /** Another request to the session: a quiet after a cancelled turn ends. */
  asked(): void {
    if (this.#turns().quiet) this.#updatesFor = { kind: 'asked' };
  }

  /** `session/cancel` (no `requestId`), or a `$/cancel_request` of one prompt. */
  cancel(requestId?: string): void {
    this.machine.send({ type: 'cancel', ...(requestId === undefined ? {} : { requestId }) });
  }

  /** The handler answered prompt `requestId` (`error`: it failed, or its result does not conform). */
  settled(requestId: string, result: unknown, error: ErrorObject | undefined): void {
    const stopReason = (result as { stopReason?: string } | undefined)?.stopReason;
    // While `asked` the turns are quiet (none runs): what the handler says is for that request still.
    if (this.#updatesFor.kind !== 'asked' && this.#turns().running === requestId) this.#updatesFor = { kind: 'answered', requestId };
    this.machine.send(error ? { type: 'prompt.settled', outcome: 'error', requestId, result, error } : { type: 'prompt.settled', outcome: stopReason ?? 'unknown', requestId, result });
  }

  /** Whether these turns hold prompt `requestId`: running, waiting, or answered without the handler (its late answer only leaves them). */
  holds(requestId: string): boolean {
    const turns = this.#turns();
    return turns.running === requestId || turns.waiting.includes(requestId) || turns.abandoned.includes(requestId);
  }

  /** Whether a prompt runs now. */
  get running(): boolean {
    return this.#turns().running !== undefined;
  }

  /** Whether an update of kind `sessionUpdate` belongs to a cancelled turn (dropped). */
  lateUpdate(sessionUpdate: string): boolean {
    if (this.#updatesFor.kind === 'asked') return false;
    const turns = this.#turns();
    // The running prompt was cancelled and answered, the machine has yet to take it: its turn is over.
    const over = turns.cancelled && this.#updatesFor.kind === 'answered' && turns.running === this.#updatesFor.requestId;
    return lateTurnUpdate(over ? { ...turns, quiet: true } : turns, sessionUpdate);
  }

  /** The session closed: what it still owes is answered (a prompt ends `cancelled`). */
  close(): void {
    this.machine.send({ type: 'close' });
  }

  /** The server fails everything: the prompts are answered `error` (a cancelled one still ends `cancelled`). */
  fail(error: ErrorObject): void {
    this.machine.send({ type: 'agent.failed', reason: error.message, error });
  }

  /** Stops listening (the server stops the machine, its child). */
  release(): void {
    this.#subscription.unsubscribe();
  }
}
