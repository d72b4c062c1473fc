/**
 * `session/load` and `session/resume`: replaying the journal and opening a session on its agent (adopting one an agent keeps).
 */
import { CONTINUED_NOTICE_TITLE } from '../../adapters/continuation-text.js';
import { AGENT_METHODS } from '../../protocol/methods.js';
import { type AgentHandlerOutput, type AgentRequestEvent, PARENT_SESSION_META_KEY, RESUME_META_KEY } from '../../protocol/native-agent.js';
import { RpcError } from '../../jsonrpc/rpc-error.js';
import type { JournalRecord, JournalSession } from '../../journal/journal.js';
import type { PreviousOwner } from '../../journal/async-journal.js';
import { type Adopted, type AttachJob, type InnerAgent, type Live, type Pending } from './live.js';
import { AGENT_META_KEY, TAKEOVER_META_KEY } from './live.js';
import { notify } from './notify.js';
import { deliver, emit, fail } from './delivery.js';
import { beginAttach, endAttach, holdAttaches, interruption, releaseAttaches } from './attach-jobs.js';
import { claimThen, releaseOwnership } from './ownership.js';
import { innerAgent, sendTo } from './inner-agents.js';
import { abandon } from './fork-delete.js';
import { currentSetup, dropSession, openSession } from './session-record.js';
import { journaledChoices } from './session-settings.js';
import { failedWrite, journalFailure } from './journal-failures.js';
import { journalCall, journalFailureAnswers, record, safely } from './journal-writes.js';
import { linkChildren } from './subagents.js';

/**
 * `session/load` and `session/resume`. A session this host runs answers at once (load
 * replays the journal first). A session known only to the journal (a previous host) is
 * re-created on its agent with the journaled resume state: `session/resume` when the
 * agent can, else its own `session/load` whose replay is dropped (the host replayed).
 */
export function attach(live: Live, request: AgentRequestEvent, how: 'load' | 'resume'): void {
  const sessionId = request.params.sessionId as string;
  // Another load or resume is opening it, or its agent is closing or deleting it: this one waits for that answer, then goes on as it finds the session.
  const waiting = live.opening.get(sessionId);
  if (waiting) {
    waiting.push(() => journalFailureAnswers(live, request.requestId, sessionId, () => attach(live, request, how)));
    return;
  }
  const opens = !live.sessions.has(sessionId);
  // Later loads and resumes of it wait while the journal is asked (it may answer in a later turn).
  const held = opens && holdAttaches(live, sessionId);
  const giveUp = () => {
    if (held) releaseAttaches(live, sessionId);
  };
  journalCall(live, sessionId, (journal) => journal.getSession(sessionId), (found) => {
    if (!found.ok) {
      failedWrite(live, sessionId, found.error);
      fail(live, request.requestId, journalFailure(found.error, sessionId));
      return giveUp();
    }
    const known = found.value;
    // A subagent child runs in its parent's agent: its own history is replayed, nothing is opened.
    if (known?.parentSessionId !== undefined) return attachChild(live, request, how, known.parentSessionId, giveUp);
    const origin = known ? undefined : live.listed.get(sessionId);
    // `from`: the host the claim took the session from (lost, or handing it over), if any.
    const start = (from?: PreviousOwner) => {
      // What an adopted session came from: a refusal by its agent forgets it (and a listed one is listed again).
      const adopted: Adopted | undefined = known ? undefined : { listed: origin };
      // A session that failed (here or in a previous host) starts again in a fresh agent process.
      live.failed.delete(sessionId);
      live.moved.delete(sessionId);
      const job = beginAttach(live, sessionId, opens);
      const proceed = (cutTurns: number) => {
        if (how === 'load') replay(live, sessionId, request.requestId, () => reattach(live, request, how, job, adopted, from, cutTurns), () => endAttach(live, job));
        else reattach(live, request, how, job, adopted, from, cutTurns);
      };
      if (!opens) return proceed(0);
      // The turns a previous host left open end in the journal first: a load's replay shows their ends in order (a v2 editor's `idle` with the record).
      openTurnsOf(live, sessionId, (open) => {
        if (!job.interrupted) endCutTurns(live, sessionId, open, takeoverOf(request, from));
        proceed(open?.length ?? 0);
      });
    };
    // Live in another warden: running it here too would split its history (checked before the replay).
    const claimAndStart = () => (opens ? claimThen(live, request.requestId, sessionId, (claimed) => start(claimed.from), giveUp) : start());
    if (known) return claimAndStart();
    adopt(live, request, (adopted) => (adopted ? claimAndStart() : giveUp()));
  });
}

/**
 * `session/load` or `session/resume` of a subagent child (docs/acp.md, "Subagent sessions"):
 * a load replays the child's own entries of its top parent's journal (then the replay's end),
 * and both answer with the parent's id in `_meta` (a hub's cursors on the child read its
 * parent's journal by it). The child's live updates reach the editor while its parent runs here.
 */
function attachChild(live: Live, request: AgentRequestEvent, how: 'load' | 'resume', parentId: string, done: () => void): void {
  const sessionId = request.params.sessionId as string;
  const answer = () => {
    emit(live, { type: 'acp.respond', requestId: request.requestId, result: { _meta: { [PARENT_SESSION_META_KEY]: parentId } } }, sessionId);
    done();
  };
  linkAncestors(live, sessionId, parentId, () => (how === 'load' ? replay(live, sessionId, request.requestId, answer, done) : answer()));
}

/** Notes `sessionId`'s parent and theirs, as the journal records them, so that its cursor reads its top parent's journal. */
function linkAncestors(live: Live, sessionId: string, parentId: string, then: () => void): void {
  if (live.subagents.has(sessionId)) return then();
  live.subagents.set(sessionId, parentId);
  journalCall(live, parentId, (journal) => journal.getSession(parentId), (found) => {
    const grandparent = found.ok ? found.value?.parentSessionId : undefined;
    if (grandparent === undefined) return then();
    linkAncestors(live, parentId, grandparent, then);
  });
}

/**
 * Opens the session on its agent (or answers at once when it runs here already). `from`: the
 * host this host's claim took it from (see {@link takeoverOf}); `cutTurns`: how many turns that
 * host (or a killed warden) left open, which `attach` ended in the journal before (`endCutTurns`).
 */
export function reattach(live: Live, request: AgentRequestEvent, how: 'load' | 'resume', job: AttachJob, adopted: Adopted | undefined, from: PreviousOwner | undefined, cutTurns: number): void {
  const sessionId = request.params.sessionId as string;
  const answer = (output: AgentHandlerOutput) => {
    emit(live, output);
    endAttach(live, job);
  };
  const interrupted = () => job.interrupted && answer({ type: 'acp.error', requestId: request.requestId, error: interruption(sessionId, how, job.interrupted).toErrorObject() });
  if (interrupted()) return;
  const running = live.sessions.get(sessionId);
  if (running) {
    record(live, sessionId, { kind: 'attached', how });
    return answer({ type: 'acp.respond', requestId: request.requestId, result: currentSetup(running) });
  }
  journalCall(live, sessionId, (journal) => journal.getSession(sessionId), (found) => {
    if (interrupted()) return;
    if (!found.ok) {
      failedWrite(live, sessionId, found.error);
      releaseOwnership(live, sessionId);
      return answer({ type: 'acp.error', requestId: request.requestId, error: journalFailure(found.error, sessionId) });
    }
    const journaled = found.value;
    if (!journaled) {
      releaseOwnership(live, sessionId);
      return answer({ type: 'acp.error', requestId: request.requestId, error: RpcError.resourceNotFound(`session ${sessionId}`, { sessionId }).toErrorObject() });
    }
    let inner: InnerAgent;
    try {
      inner = innerAgent(live, journaled.agent);
    } catch (error) {
      releaseOwnership(live, sessionId);
      unadopt(live, sessionId, adopted);
      return answer({ type: 'acp.error', requestId: request.requestId, error: RpcError.internalError(`session ${sessionId} needs agent ${journaled.agent}: ${(error as Error).message}`, { sessionId, agent: journaled.agent }).toErrorObject() });
    }
    linkChildren(live, sessionId, () =>
      journaledChoices(live, sessionId, (chosen) => {
        if (interrupted()) return;
        const takeover = takeoverOf(request, from);
        if (takeover?.handedOver) {
          notify(live, sessionId, 'info', `${journaled.agent} handed over`, `The host that ran this session (${takeover.previousOwner}) stopped for a restart and handed it over: this host took it and resumes the conversation from the journal.`);
        } else if (takeover) {
          notify(live, sessionId, 'warning', `${journaled.agent} taken over`, `The host that ran this session (${takeover.previousOwner}) was lost: its lease ran out. This host took the session over and resumes the conversation from the journal${cutTurns > 0 ? `; the turn it left running ended (host_lost)` : ''}.`);
        }
        // What the agent advertised (its initialize answer), not what its definition assumed.
        const caps = inner.capabilities;
        const method = caps.sessionCapabilities?.resume || !caps.loadSession ? AGENT_METHODS.session_resume : AGENT_METHODS.session_load;
        const meta = { ...(request.params._meta as Record<string, unknown> | undefined), [RESUME_META_KEY]: journaled.resume ?? null };
        // Read after this host claimed it: its owner is this host, at the epoch the claim gave.
        const session = openSession(live, sessionId, journaled.agent, journaled.restarts, { chosen, resume: journaled.resume }, journaled.owner);
        session.replaying = method === AGENT_METHODS.session_load;
        live.pending.set(request.requestId, { kind: 'attach', agent: journaled.agent, sessionId, how, adopted, job, context: request.context });
        sendTo(inner, {
          type: method === AGENT_METHODS.session_resume ? 'session.resume' : 'session.load',
          requestId: request.requestId,
          method,
          params: { sessionId, cwd: request.params.cwd ?? journaled.cwd, mcpServers: request.params.mcpServers ?? [], _meta: meta },
          context: request.context,
        });
      }),
    );
  });
}

/**
 * The turns a previous host left open (it was killed or crashed mid-turn: the prompt journaled,
 * no stop or error after it), oldest first, each with how many times that host had begun to
 * continue it after its agent crashed (its journaled "Answer restarted" notices: issue 32), read
 * a page at a time (flat memory, as a load's replay); `undefined` when the journal could not say
 * (counted). Turns end in the order they were prompted, so an end closes the oldest.
 */
function openTurnsOf(live: Live, sessionId: string, then: (open: readonly number[] | undefined) => void): void {
  const open: number[] = [];
  const from = (afterSeq: number) =>
    journalCall(live, sessionId, (journal) => journal.readEntries(sessionId, { afterSeq, limit: 1000, maxBytes: 4 * 1024 * 1024 }), (page) => {
      if (!page.ok) {
        failedWrite(live, sessionId, page.error);
        return then(undefined);
      }
      if (page.value.length === 0) return then(open);
      for (const { entry } of page.value) {
        if (entry.kind === 'prompt') open.push(0);
        else if (entry.kind === 'stop' || entry.kind === 'error') open.shift();
        else if (entry.kind === 'notice' && entry.title === CONTINUED_NOTICE_TITLE && open.length > 0) open[open.length - 1] = (open.at(-1) as number) + 1;
      }
      from((page.value.at(-1) as JournalRecord).seq);
    });
  from(0);
}

/** What a cut turn's end says of the continuation its agent's crash had begun (`continuations` of them), if any. */
function whileContinuing(continuations: number): string {
  return continuations === 0 ? '' : `, while it continued the turn after ${continuations === 1 ? 'a crash' : `${continuations} crashes`} of its agent`;
}

/**
 * The turns a previous host left open end in the journal before the session runs again, as a
 * drain that gives up ends them (`shutdown`): a client reading the session from a cursor sees
 * every turn end (`warden serve`'s `turnEnded`), none waits for an answer no process will give.
 * A turn whose continuation was under way (issue 32) ends so too, once, with `data.continuations`:
 * the editor's request died with that host, so nobody waits for the continuation's answer; the
 * next prompt (or a keyed retry, answered with this end) goes on in the resumed conversation.
 */
function endCutTurns(live: Live, sessionId: string, open: readonly number[] | undefined, takeover: { readonly previousOwner: string } | undefined): void {
  for (const continuations of open ?? []) {
    const data = { sessionId, ...(continuations === 0 ? {} : { continuations }) };
    const cut = takeover
      ? RpcError.because('host_lost', `the turn was cut: the host that ran it (${takeover.previousOwner}) was lost (killed, frozen or cut off from the database)${whileContinuing(continuations)}; another host took the session over from the journal`, { ...data, previousOwner: takeover.previousOwner }).toErrorObject()
      : RpcError.because('shutdown', `the turn was cut: the warden that ran it stopped before it ended (killed or crashed)${whileContinuing(continuations)}; the session was restored from the journal`, data).toErrorObject();
    record(live, sessionId, { kind: 'error', error: cut });
  }
}

/**
 * The takeover a load or resume stands for: this host's claim took the session from another
 * host (`from`: lost, or handing it over), whoever asked (a client's own `session/resume` may
 * come before any takeover loop), or the host's cluster marked the request so (see
 * `TAKEOVER_META_KEY`: its claim, retried after an answer lost, can find the session its own
 * already and not say whom it took it from).
 */
function takeoverOf(request: AgentRequestEvent, from: PreviousOwner | undefined): { readonly previousOwner: string; readonly handedOver: boolean } | undefined {
  if (from) return { previousOwner: from.hostId, handedOver: from.handedOver };
  const marked = (request.params._meta as Record<string, unknown> | undefined)?.[TAKEOVER_META_KEY] as { previousOwner?: unknown; handedOver?: unknown } | undefined;
  return typeof marked?.previousOwner === 'string' ? { previousOwner: marked.previousOwner, handedOver: marked.handedOver === true } : undefined;
}

/**
 * A session the journal does not know but an agent keeps (its `session/list` listed it, or
 * the request's `_meta` names the agent and the resume state): journaled now (on that agent,
 * in the request's cwd, with that resume state), so that attaching resumes it there. An id
 * unknown to both is `-32002`. `then` gets the journaled session, or `undefined` when the
 * request was answered here.
 */
export function adopt(live: Live, request: AgentRequestEvent, then: (journaled: JournalSession | undefined) => void): void {
  const sessionId = request.params.sessionId as string;
  const meta = request.params._meta as Record<string, unknown> | undefined;
  const named = typeof meta?.[AGENT_META_KEY] === 'string' && isResumeState(meta[RESUME_META_KEY]) ? { agent: meta[AGENT_META_KEY] as string, resume: meta[RESUME_META_KEY] } : undefined;
  const origin = named ?? live.listed.get(sessionId);
  if (!origin) {
    fail(live, request.requestId, RpcError.resourceNotFound(`session ${sessionId}`, { sessionId }));
    return then(undefined);
  }
  try {
    innerAgent(live, origin.agent);
  } catch (error) {
    fail(live, request.requestId, RpcError.invalidParams(`session ${sessionId} is kept by agent ${origin.agent}: ${(error as Error).message}`, { sessionId, agent: origin.agent }));
    return then(undefined);
  }
  const refused = (error: unknown) => {
    failedWrite(live, sessionId, error);
    fail(live, request.requestId, journalFailure(error, sessionId));
    then(undefined);
  };
  journalCall(live, sessionId, (journal) => journal.createSession({ sessionId, agent: origin.agent, cwd: request.params.cwd as string }), (created) => {
    if (!created.ok) return refused(created.error);
    journalCall(live, sessionId, (journal) => journal.setResume(sessionId, origin.resume), (resumed) => {
      if (!resumed.ok) return refused(resumed.error);
      live.listed.delete(sessionId);
      then({ ...created.value, resume: origin.resume });
    });
  });
}

/**
 * An adopted session its agent refused (a resume state that fails its check, a session it
 * does not have): out of the journal again, so that `session/list` never shows what was never
 * accepted; one the agent listed goes back to the listing's map. A journal that cannot
 * forget it only counts (an error event).
 */
export function unadopt(live: Live, sessionId: string, adopted: Adopted | undefined): void {
  if (!adopted) return;
  safely(live, sessionId, (journal) => journal.deleteSession(sessionId));
  if (adopted.listed) live.listed.set(sessionId, adopted.listed);
}

const isResumeState = (value: unknown) => typeof value === 'object' && value !== null;

/**
 * Sends the journaled conversation as `session/update`s (the user's prompts and what the
 * agent said, each with its journal seq), then calls `then`: the editor's cursor on the
 * session goes back to 0 and reads the journal a page at a time, only while the editor keeps
 * up, so memory stays flat whatever the history's size. Updates the session's agent sends
 * meanwhile are journaled and reach the editor through the same read, in journal order.
 */
export function replay(live: Live, sessionId: string, requestId: string, then: () => void, failed: () => void): void {
  live.subscriber.replay(sessionId, {
    done: (seq) => {
      // The history is out (the cursor is live): the client is told so before anything newer.
      deliver(live, { type: 'acp.replayComplete', requestId, sessionId, seq }, undefined);
      then();
    },
    failed: (error) => {
      if (!live.sessions.has(sessionId)) releaseOwnership(live, sessionId);
      failedWrite(live, sessionId, error);
      fail(live, requestId, journalFailure(error, sessionId));
      failed();
    },
  });
}

/**
 * A load or resume its agent accepted (and, when the user had chosen a mode or config the
 * agent did not show, that re-applied): journaled and answered, unless a close or delete of
 * the session came meanwhile, or the session failed, which is answered instead.
 */
export function attached(live: Live, requestId: string, pending: Extract<Pending, { kind: 'attach' }>, result: unknown): void {
  const { sessionId, job } = pending;
  const session = live.sessions.get(sessionId);
  if (!session || job.interrupted) {
    dropSession(live, sessionId, { type: 'agent.failed', reason: `session ${job.interrupted ?? 'failed'}` });
    if (job.interrupted) abandon(live, pending.agent, sessionId, pending.context);
    releaseOwnership(live, sessionId);
    const why = live.failed.get(sessionId);
    fail(live, requestId, job.interrupted
      ? interruption(sessionId, pending.how, job.interrupted)
      : RpcError.because('session_failed', `Internal error: session ${sessionId} failed while it was being opened (${why ?? 'its agent stopped'}); session/${pending.how} starts it again`, { sessionId }));
    endAttach(live, job);
    return;
  }
  record(live, sessionId, { kind: 'attached', how: pending.how });
  safely(live, sessionId, (journal) => journal.setState(sessionId, 'open'));
  session.machine.send({ type: 'ready' });
  live.input.onEvent?.({ type: 'session.opened', sessionId, agent: pending.agent, how: pending.how });
  emit(live, { type: 'acp.respond', requestId, result });
  endAttach(live, job);
}
