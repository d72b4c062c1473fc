/**
 * `session/list`: the journal's sessions, then the agents that list their own.
 */
import type { SessionInfo } from '@agentclientprotocol/sdk';
import { AGENT_METHODS } from '../../protocol/methods.js';
import { type AgentRequestEvent, type NativeAgent, PARENT_SESSION_META_KEY, RESUME_META_KEY } from '../../protocol/native-agent.js';
import { asksForSubagents } from '../../acp/subagent-updates.js';
import { type ErrorObject, RpcError } from '../../jsonrpc/rpc-error.js';
import { InvalidCursorError, type JournalSession } from '../../journal/journal.js';
import { canonicalJson } from '../../journal/canonical-json.js';
import { decodeListCursor, encodeListCursor, type ListCursor } from '../../journal/list-cursor.js';
import { type InnerAgent, type ListJob, type Live } from './live.js';
import { AGENT_META_KEY, SKIPPED_META_KEY } from './live.js';
import { emit, fail } from './delivery.js';
import { innerAgent, sendTo } from './inner-agents.js';
import { failedWrite, journalFailure } from './journal-failures.js';
import { after } from './continuation.js';
import type { CallResult } from '../../journal/host-journal.js';

/**
 * `session/list`: the journal's sessions (newest first, a page at a time), then, once the
 * journal has no more, each listing agent's own sessions (by agent name, each agent's pages
 * in its order), leaving out those the journal already maps (a journaled session of that
 * agent with the same resume state, or the same id). The cursor is ours and opaque: it says
 * which phase goes on and carries the journal's or that agent's cursor. An agent that
 * cannot list (not found, its CLI failed) is skipped and named in `_meta`.
 */
export function listSessions(live: Live, request: AgentRequestEvent): void {
  const { params } = request;
  const raw = typeof params.cursor === 'string' ? params.cursor : undefined;
  // A cursor we did not wrap is the journal's own (or garbage, which the journal refuses).
  const cursor: ListCursor = raw === undefined ? { journal: undefined } : decodeListCursor(raw) ?? { journal: raw };
  const { agents, skipped } = listingAgents(live);
  const job: ListJob = { requestId: request.requestId, context: request.context, cwd: typeof params.cwd === 'string' ? params.cwd : undefined, agents, sessions: [], skipped };
  if ('agent' in cursor) {
    const index = agents.indexOf(cursor.agent);
    if (index < 0) {
      job.skipped.push({ agent: cursor.agent, reason: 'it is no longer available to list' });
      finishList(live, job, undefined);
      return;
    }
    askAgent(live, job, index, cursor.cursor);
    return;
  }
  const query = {
    ...(job.cwd !== undefined ? { cwd: job.cwd } : {}),
    ...(cursor.journal !== undefined ? { cursor: cursor.journal } : {}),
    ...(live.input.listPageSize ? { limit: live.input.listPageSize } : {}),
  };
  after(live, () => live.journal.listSessions(query), (read) => {
    if (!read.ok) {
      if (read.error instanceof InvalidCursorError) return fail(live, request.requestId, RpcError.invalidParams(read.error.message));
      failedWrite(live, undefined, read.error);
      return fail(live, request.requestId, journalFailure(read.error, undefined));
    }
    const page = read.value;
    // Subagent children are listed, naming their parent, to editors that take subagents only (ACP sends them nothing of subagents otherwise).
    const children = asksForSubagents(request.context);
    for (const session of page.sessions) {
      const parent = session.parentSessionId;
      if (parent !== undefined && !children) continue;
      const meta = { [AGENT_META_KEY]: session.agent, 'acp-warden/state': session.state, 'acp-warden/restarts': session.restarts, ...(parent !== undefined ? { [PARENT_SESSION_META_KEY]: parent } : {}) };
      job.sessions.push({ sessionId: session.sessionId, cwd: session.cwd, title: session.title ?? null, updatedAt: session.updatedAt, _meta: meta });
    }
    if (page.nextCursor) return finishList(live, job, encodeListCursor({ journal: page.nextCursor }));
    askAgent(live, job, 0, undefined);
  });
}

/**
 * The agents whose own sessions are listed: the default agent, the agents in use, and
 * `listAgents`, by name, when they advertise `sessionCapabilities.list`. One that cannot be
 * resolved (its CLI is not installed) is skipped, and said so.
 */
function listingAgents(live: Live): { agents: string[]; skipped: Array<{ agent: string; reason: string }> } {
  const names = new Set([live.input.defaultAgent, ...live.inner.keys(), ...(live.input.listAgents ?? [])]);
  const agents: string[] = [];
  const skipped: Array<{ agent: string; reason: string }> = [];
  for (const name of [...names].sort()) {
    let agent: NativeAgent;
    try {
      agent = live.inner.get(name)?.agent ?? (name === live.input.defaultAgent ? live.input.base : live.input.resolve(name));
    } catch (error) {
      skipped.push({ agent: name, reason: (error as Error).message });
      continue;
    }
    if (agent.capabilities?.sessionCapabilities?.list) agents.push(name);
  }
  return { agents, skipped };
}

/** Asks the `index`-th listing agent for a page (`cursor`: its own); past the last agent, answers. */
export function askAgent(live: Live, job: ListJob, index: number, cursor: string | undefined): void {
  const name = job.agents[index];
  if (name === undefined) {
    finishList(live, job, undefined);
    return;
  }
  let inner: InnerAgent;
  try {
    inner = innerAgent(live, name);
  } catch (error) {
    job.skipped.push({ agent: name, reason: (error as Error).message });
    askAgent(live, job, index + 1, undefined);
    return;
  }
  const key = `h${live.nextKey++}`;
  live.pending.set(key, { kind: 'list', job, index });
  sendTo(inner, {
    type: 'session.list',
    requestId: key,
    method: AGENT_METHODS.session_list,
    params: { ...(job.cwd !== undefined ? { cwd: job.cwd } : {}), ...(cursor !== undefined ? { cursor } : {}) },
    context: job.context,
  });
}

/** An agent's page: what the journal does not map joins the answer; its next page, or the next agent, follows. */
export function listed(live: Live, job: ListJob, index: number, result: unknown, error: ErrorObject | undefined): void {
  const name = job.agents[index] as string;
  if (error) {
    job.skipped.push({ agent: name, reason: error.message });
    askAgent(live, job, index + 1, undefined);
    return;
  }
  const page = (result ?? {}) as { sessions?: SessionInfo[]; nextCursor?: string | null };
  const failed = (journalError: unknown) => {
    failedWrite(live, undefined, journalError);
    fail(live, job.requestId, journalFailure(journalError, undefined));
  };
  journaledSessions(live, (journaled) => {
    if (!journaled.ok) return failed(journaled.error);
    const known = new Set<string>();
    const mapped = new Set<string>();
    for (const session of journaled.value) {
      known.add(session.sessionId);
      if (session.agent === name && session.resume != null) mapped.add(canonicalJson(session.resume));
    }
    for (const info of page.sessions ?? []) {
      const resume = (info._meta ?? {})[RESUME_META_KEY];
      if (known.has(info.sessionId) || (resume !== undefined && mapped.has(canonicalJson(resume)))) continue;
      live.listed.set(info.sessionId, { agent: name, resume });
      job.sessions.push({ ...info, _meta: { ...info._meta, [AGENT_META_KEY]: name } });
    }
    if (typeof page.nextCursor === 'string' && page.nextCursor.length > 0) return finishList(live, job, encodeListCursor({ agent: name, cursor: page.nextCursor }));
    askAgent(live, job, index + 1, undefined);
  });
}

export function finishList(live: Live, job: ListJob, nextCursor: string | undefined): void {
  emit(live, {
    type: 'acp.respond',
    requestId: job.requestId,
    result: {
      sessions: job.sessions,
      ...(nextCursor ? { nextCursor } : {}),
      ...(job.skipped.length > 0 ? { _meta: { [SKIPPED_META_KEY]: job.skipped } } : {}),
    },
  });
}

/** Every session the journal holds (every page of it), to `then`: what an agent's listing leaves out. */
function journaledSessions(live: Live, then: (result: CallResult<JournalSession[]>) => void): void {
  const found: JournalSession[] = [];
  const from = (cursor: string | undefined) =>
    after(live, () => live.journal.listSessions({ limit: 500, ...(cursor ? { cursor } : {}) }), (read) => {
      if (!read.ok) return then(read);
      found.push(...read.value.sessions);
      if (read.value.nextCursor) return from(read.value.nextCursor);
      then({ ok: true, value: found });
    });
  from(undefined);
}
