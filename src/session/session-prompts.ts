/**
 * A session actor's prompts, end to end: the record of each prompt not answered yet (its
 * request, whether its turn's entry is journaled or being written) and what the session
 * machine decides of its turns, carried out by the session's own listener on its machine. A prompt
 * is journaled when its turn starts, then sent to the agent, unless a new agent process is
 * getting the user's choices first (it is held until then); its answer goes to the editor and
 * its end to the journal; a cancel goes to the agent, or ends unseen by the agent a prompt that
 * is held or whose entry is being written.
 *
 * The host hands the machine what it may not own: the journal's per-session write queue, the
 * line to the session's agent, the editor. Those are {@link PromptServices}; the prompts' state
 * is here, keyed by the session machine's actor (a live handle, never in its snapshot).
 */
import type { AnyActorRef } from 'xstate';
import type { ErrorObject } from '../jsonrpc/rpc-error.js';
import { holdsPrompts, type SessionMachineEmitted } from './session-machine.js';

/** A prompt as the session keeps it: the editor's request (its key, and its params with the prompt's content). */
export interface PromptRequest {
  readonly requestId: string;
  readonly params: { readonly prompt?: unknown; readonly [key: string]: unknown };
  /** Its idempotency key and the prompt's digest, journaled with it when the client gave a key (the host reads them from the params). */
  readonly identity?: { readonly idempotencyKey: string; readonly promptDigest: string };
}

/**
 * A turn's journal entry: its prompt when it starts, its stop reason or error when it ends,
 * each with the request's key (whose turn it is, for a reader that meets it before it is told).
 */
export type TurnRecord =
  | { readonly kind: 'prompt'; readonly prompt: readonly unknown[]; readonly requestId: string; readonly idempotencyKey?: string; readonly promptDigest?: string }
  | { readonly kind: 'stop'; readonly stopReason: string; readonly requestId: string }
  | { readonly kind: 'error'; readonly error: ErrorObject; readonly requestId: string };

/** The journal of a session's turns, as its host lends it. */
export interface PromptJournal {
  /**
   * Journals a turn's entry after what is queued for the session; `then` gets its seq once
   * durable, or `undefined` and why it was refused.
   */
  write(entry: TurnRecord, then: (seq: number | undefined, refused?: unknown) => void): void;
  /** The error of a prompt whose entry the journal refused (it never reached the agent). */
  refused(why: unknown): ErrorObject;
  /** A turn's entry is on record: whoever shows it to other connections hears it. */
  journaled(requestId: string, seq: number, entry: TurnRecord): void;
}

/**
 * What a session machine uses of its host to carry out its turns. A bare native agent's
 * session (kept by the agent server: acp/bare-turns.ts) has only the agent and the editor: no
 * journal (a prompt goes to the agent when its turn starts), no permissions of its own to
 * cancel, no re-apply, never elsewhere.
 */
export interface PromptServices<TRequest extends PromptRequest = PromptRequest> {
  /** The session's journal; absent: nothing is journaled. */
  readonly journal?: PromptJournal;
  /** Sends a prompt to the session's agent. */
  send(request: TRequest): void;
  /** Cancels the running prompt on the session's agent. */
  cancel(requestId: string): void;
  /** Answers the editor's prompt. */
  answer(requestId: string, outcome: { readonly result: unknown } | { readonly error: ErrorObject }): void;
  /** The session's permission requests still with the editor: the agent gets `cancelled` for each. */
  cancelPermissions?(): void;
  /** The new agent process has the user's choices: what waited for that in the host (a load's answer) goes on. */
  released?(): void;
  /** Whether the session still runs in this host (it may leave while a prompt's entry is written); absent: always. */
  here?(): boolean;
}

/**
 * Where a prompt stands: its turn has not started (`waiting`); its entry is being written
 * (`writing`; `writingCancelled`: a cancel came meanwhile, so it never reaches the agent); its
 * turn started and it is on record (`recorded`: journaled, or nothing to journal to; held while a
 * new agent process gets the user's choices); it went to the agent, which owes its answer (`sent`).
 */
type PromptStage = 'waiting' | 'writing' | 'writingCancelled' | 'recorded' | 'sent';

interface PromptRecord<TRequest> {
  readonly request: TRequest;
  stage: PromptStage;
}

/** Whether the prompt's turn started and its entry is on record (its end is journaled too). */
const onRecord = (prompt: PromptRecord<unknown> | undefined) => prompt?.stage === 'recorded' || prompt?.stage === 'sent';

/** Each bound session machine's prompts (a live handle, never in its snapshot). */
const promptsOfMachine = new WeakMap<AnyActorRef, SessionPrompts<PromptRequest>>();

/** Whether session machine `machine` keeps a record of prompt `requestId`. Read-only; for inspection and specs. */
export function holdsPrompt(machine: AnyActorRef, requestId: string): boolean {
  return promptsOfMachine.get(machine)?.holds(requestId) ?? false;
}

/** The request ids of the prompts session machine `machine` keeps, oldest first. Read-only; for inspection and specs. */
export function promptIdsOf(machine: AnyActorRef): readonly string[] {
  return promptsOfMachine.get(machine)?.ids() ?? [];
}

/** The prompts of one session actor (see the module comment). */
export class SessionPrompts<TRequest extends PromptRequest = PromptRequest> {
  readonly #services: PromptServices<TRequest>;
  /** The prompts not answered yet, by request id. */
  readonly #prompts = new Map<string, PromptRecord<TRequest>>();
  /** Prompts whose turn started while a new agent process is to get the user's choices first (journaled, not sent yet). */
  readonly #held: TRequest[] = [];
  #machine: AnyActorRef | undefined;

  constructor(services: PromptServices<TRequest>) {
    this.#services = services;
  }

  /**
   * Makes these the prompts of session machine `machine` (before it starts): what it decides of
   * its turns is carried out here, by its own listener, once each of its steps is done (its
   * snapshot says where it stands then).
   */
  bind(machine: AnyActorRef): void {
    this.#machine = machine;
    promptsOfMachine.set(machine, this as unknown as SessionPrompts<PromptRequest>);
    machine.on('*', (command: SessionMachineEmitted) => this.#carryOut(machine, command));
  }

  /** The prompts kept here (not answered yet), oldest first. */
  ids(): readonly string[] {
    return [...this.#prompts.keys()];
  }

  /** Whether prompt `requestId` is kept here (not answered yet). */
  holds(requestId: string): boolean {
    return this.#prompts.has(requestId);
  }

  /** A prompt came: kept until it is answered, and given to the machine, which decides its turn. */
  came(request: TRequest): void {
    this.#prompts.set(request.requestId, { request, stage: 'waiting' });
    this.#machine?.send({ type: 'prompt', requestId: request.requestId });
  }

  /**
   * The agent is gone and answered what it still owed with `error` (its session failed): each
   * prompt sent to it and not answered settles so, as if the agent had answered it.
   */
  agentGone(error: ErrorObject): void {
    const machine = this.#machine;
    if (!machine) return;
    for (const [requestId, prompt] of [...this.#prompts]) {
      if (prompt.stage === 'sent') machine.send({ type: 'prompt.settled', outcome: 'error', requestId, error });
    }
  }

  /** Carries out a command of the session machine `machine`. */
  #carryOut(machine: AnyActorRef, command: SessionMachineEmitted): void {
    if (command.type === 'turns.release') {
      this.#services.released?.();
      this.#releaseHeld();
      return;
    }
    const prompt = this.#prompts.get(command.requestId);
    switch (command.type) {
      case 'turn.start':
        if (prompt) this.#start(machine, command.requestId, prompt);
        return;
      case 'turn.cancelAgent':
        if (prompt?.stage === 'writing' || prompt?.stage === 'writingCancelled') {
          // Its entry is being written: once it is, it ends cancelled without reaching the agent.
          prompt.stage = 'writingCancelled';
          return;
        }
        // Never reached the agent: it ends here, cancelled.
        if (this.#dropHeld(command.requestId)) machine.send({ type: 'prompt.settled', outcome: 'cancelled', requestId: command.requestId, result: { stopReason: 'cancelled' } });
        else this.#services.cancel(command.requestId);
        return;
      case 'turn.permissionCancelled':
        this.#services.cancelPermissions?.();
        return;
      case 'turn.answer': {
        this.#forget(command.requestId);
        const stopReason = (command.result as { stopReason?: string } | undefined)?.stopReason;
        if (onRecord(prompt) && stopReason) this.#recordEnd({ kind: 'stop', stopReason, requestId: command.requestId });
        this.#services.answer(command.requestId, { result: command.result });
        return;
      }
      case 'turn.fail':
        this.#forget(command.requestId);
        if (onRecord(prompt)) this.#recordEnd({ kind: 'error', error: command.error, requestId: command.requestId });
        this.#services.answer(command.requestId, { error: command.error });
        return;
    }
  }

  /** Journaled before the agent sees it: a prompt the host lost track of is still on record. */
  #start(machine: AnyActorRef, requestId: string, prompt: PromptRecord<TRequest>): void {
    const { journal } = this.#services;
    if (!journal) {
      prompt.stage = 'recorded';
      this.#sendOrHold(machine, prompt.request);
      return;
    }
    // The key right after `kind`: where the journal's engines index it (journal.ts, `promptByKey`).
    const entry: TurnRecord = { kind: 'prompt', ...prompt.request.identity, prompt: prompt.request.params.prompt as unknown[], requestId };
    prompt.stage = 'writing';
    journal.write(entry, (seq, refused) => {
      const cancelled = prompt.stage === 'writingCancelled';
      if (seq === undefined) {
        prompt.stage = 'waiting';
        machine.send({ type: 'prompt.settled', outcome: 'error', requestId, error: journal.refused(refused) });
        return;
      }
      prompt.stage = 'recorded';
      // Cancelled while its entry was written (a journal that answers later): it never reaches the agent.
      if (cancelled) {
        journal.journaled(requestId, seq, entry);
        machine.send({ type: 'prompt.settled', outcome: 'cancelled', requestId, result: { stopReason: 'cancelled' } });
        return;
      }
      // The session left this host while its entry was written: its machine answered it.
      if (this.#services.here?.() === false || !this.#prompts.has(requestId)) {
        journal.journaled(requestId, seq, entry);
        return;
      }
      // A new agent process gets the user's mode and config first: the prompt waits for that.
      // Asked now, not when the turn started: a re-apply that ended while the entry was written
      // released what was held then, and one that began meanwhile is to be waited for.
      this.#sendOrHold(machine, prompt.request);
      // The agent has it first; then whoever shows it to other connections.
      journal.journaled(requestId, seq, entry);
    });
  }

  /** To the agent now, or held while a new agent process is to get the user's choices first. */
  #sendOrHold(machine: AnyActorRef, request: TRequest): void {
    if (holdsPrompts(machine)) this.#held.push(request);
    else this.#send(request);
  }

  /** To the agent, which owes its answer from now on. */
  #send(request: TRequest): void {
    const prompt = this.#prompts.get(request.requestId);
    if (prompt) prompt.stage = 'sent';
    this.#services.send(request);
  }

  /** Journals a turn's end and says so. */
  #recordEnd(entry: Extract<TurnRecord, { kind: 'stop' | 'error' }>): void {
    const { journal } = this.#services;
    journal?.write(entry, (seq) => {
      if (seq !== undefined) journal.journaled(entry.requestId, seq, entry);
    });
  }

  /** An answered prompt: no longer the session's to send or hold. */
  #forget(requestId: string): void {
    this.#prompts.delete(requestId);
    this.#dropHeld(requestId);
  }

  /** Takes a prompt out of those held for the re-apply; whether it was held. */
  #dropHeld(requestId: string): boolean {
    const held = this.#held.findIndex((request) => request.requestId === requestId);
    if (held < 0) return false;
    this.#held.splice(held, 1);
    return true;
  }

  /** The held prompts go to the agent (the re-apply is over, or there was nothing to re-apply). */
  #releaseHeld(): void {
    for (const request of this.#held.splice(0)) {
      if (this.#services.here?.() === false) return;
      this.#send(request);
    }
  }
}
