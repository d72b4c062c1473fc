/**
 * The load generator: many sessions, each sending prompts at random (exponential) intervals,
 * some cancelled shortly after; a session that failed (restart intensity exceeded) is started
 * again with `session/resume` from the journal, as an editor would. Every request is tracked
 * until it settles: the soak's first question is whether any never does.
 */
import type { SoakOptions } from './args.js';
import { exponential, pick } from './random.js';
import type { AgentCalls } from './warden.js';

/** One session the soak drives. */
export interface SoakSession {
  readonly dir: string;
  readonly fixture: string;
  sessionId: string | undefined;
  /** warden refused a prompt with `session_failed`: the next step is `session/resume`. */
  failed: boolean;
}

/** What the load did, for the report. */
export interface LoadStats {
  readonly requests: { sent: number; ok: number; failed: number };
  readonly byMethod: Record<string, { sent: number; ok: number; failed: number }>;
  /** Requests sent and not settled yet: id → method and when. */
  readonly pending: Map<number, { readonly method: string; readonly sentAt: number }>;
  readonly prompts: { sent: number; endTurn: number; cancelled: number; otherStop: number; failed: Record<string, number> };
  /** Milliseconds from sending a prompt to its answer, for prompts that got one (not errors). */
  readonly latencies: number[];
  /** Milliseconds to an error answer. */
  readonly errorLatencies: number[];
  cancelsSent: number;
  sessionsFailed: number;
  sessionsResumed: number;
}

export function emptyStats(): LoadStats {
  return {
    requests: { sent: 0, ok: 0, failed: 0 },
    byMethod: {},
    pending: new Map(),
    prompts: { sent: 0, endTurn: 0, cancelled: 0, otherStop: 0, failed: {} },
    latencies: [],
    errorLatencies: [],
    cancelsSent: 0,
    sessionsFailed: 0,
    sessionsResumed: 0,
  };
}

type Outcome = { readonly ok: true; readonly value: unknown; readonly ms: number } | { readonly ok: false; readonly error: { code?: number; message?: string; data?: { reason?: string } }; readonly ms: number };

const prompts = ['hello', 'why does the build fail?', 'write the file', 'run the tests', 'explain this function', 'a longer answer, please'];

/** Fixtures replayed by the sessions, in turn: with and without permission requests. */
export const fixtures = ['hello', 'tool-write-permission-allow', 'partial', 'tool-bash-permission-partial', 'tool-bash-readonly', 'tool-write-permission-deny'] as const;

/** Drives the sessions until `stop()` is called. */
export class LoadGenerator {
  readonly stats = emptyStats();
  #nextId = 0;
  #stopping = false;
  readonly #wake = new Set<() => void>();

  constructor(
    private readonly agent: AgentCalls,
    private readonly options: Pick<SoakOptions, 'promptGapMs' | 'cancelShare'>,
    private readonly random: () => number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Sends a request and records it until it settles; never rejects. */
  async track(method: string, params: unknown): Promise<Outcome> {
    const id = this.#nextId++;
    const sentAt = this.now();
    const counts = (this.stats.byMethod[method] ??= { sent: 0, ok: 0, failed: 0 });
    this.stats.requests.sent++;
    counts.sent++;
    this.stats.pending.set(id, { method, sentAt });
    try {
      const value = await this.agent.request(method, params);
      this.stats.requests.ok++;
      counts.ok++;
      return { ok: true, value, ms: this.now() - sentAt };
    } catch (error) {
      this.stats.requests.failed++;
      counts.failed++;
      return { ok: false, error: error as Extract<Outcome, { ok: false }>['error'], ms: this.now() - sentAt };
    } finally {
      this.stats.pending.delete(id);
    }
  }

  /** Opens the session of `session.dir`; `false` when warden refused. */
  async open(session: SoakSession): Promise<boolean> {
    const opened = await this.track('session/new', { cwd: session.dir, mcpServers: [] });
    if (opened.ok) session.sessionId = (opened.value as { sessionId: string }).sessionId;
    return opened.ok;
  }

  /** Runs one session's loop until `stop()`. */
  async drive(session: SoakSession): Promise<void> {
    while (!this.#stopping) {
      await this.#sleep(exponential(this.random, this.options.promptGapMs));
      if (this.#stopping) break;
      if (session.sessionId === undefined) {
        await this.open(session);
        continue;
      }
      if (session.failed) {
        // What an editor does with a session that gave up: start it again from the journal.
        const resumed = await this.track('session/resume', { sessionId: session.sessionId, cwd: session.dir, mcpServers: [] });
        if (!resumed.ok) continue;
        session.failed = false;
        this.stats.sessionsResumed++;
        if (this.#stopping) break; // the load ended while the session came back
      }
      await this.#prompt(session, session.sessionId);
    }
  }

  async #prompt(session: SoakSession, sessionId: string): Promise<void> {
    const cancel = this.random() < this.options.cancelShare;
    const cancelAfterMs = this.random() * 300;
    this.stats.prompts.sent++;
    const answer = this.track('session/prompt', { sessionId, prompt: [{ type: 'text', text: pick(this.random, prompts) }] });
    let timer: NodeJS.Timeout | undefined;
    if (cancel) {
      timer = setTimeout(() => {
        this.stats.cancelsSent++;
        this.agent.notify('session/cancel', { sessionId }).catch(() => undefined); // a closed connection shows in the requests
      }, cancelAfterMs);
    }
    const outcome = await answer;
    clearTimeout(timer);
    if (outcome.ok) {
      this.stats.latencies.push(outcome.ms);
      const stop = (outcome.value as { stopReason?: string }).stopReason;
      if (stop === 'end_turn') this.stats.prompts.endTurn++;
      else if (stop === 'cancelled') this.stats.prompts.cancelled++;
      else this.stats.prompts.otherStop++;
      return;
    }
    this.stats.errorLatencies.push(outcome.ms);
    // warden's typed reason, else the JSON-RPC code, else (the connection itself failed) the message.
    const reason = outcome.error.data?.reason ?? (outcome.error.code !== undefined ? `code ${outcome.error.code}` : (outcome.error.message ?? 'unknown error').slice(0, 60));
    this.stats.prompts.failed[reason] = (this.stats.prompts.failed[reason] ?? 0) + 1;
    if (reason === 'session_failed' && !session.failed) {
      session.failed = true;
      this.stats.sessionsFailed++;
    }
  }

  /** Stops every session's loop after its current request; pending requests still settle. */
  stop(): void {
    this.#stopping = true;
    for (const wake of this.#wake) wake();
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake.add(done);
    });
  }
}
