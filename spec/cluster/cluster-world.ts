/**
 * The real system under the cluster walk (cluster-walk.spec.ts): three `warden serve` hosts on
 * one PostgreSQL reached through a timing proxy (latency, stalls, cuts), the clients of two
 * sessions (a controller each, an observer of the first) on hosts drawn at random, and the
 * faults the walk applies. Every client keeps each of its connections as a segment (the
 * frames it got, the cursor it started from, the prompts it sent), for the delivery invariant.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { ownerOf, startClusterHost, untilUnrenewedFor, type ClusterFixture, type ClusterHost } from '../support/cluster.js';
import { describeViolations, settledViolations, type ConnectionRecord, type JournalRow, type Violation } from '../support/delivery-invariant.js';
import { postgresJournal } from '../support/journal-rows.js';
import { isAlive, waitUntil } from '../support/processes.js';
import { cursorKeys, demoAgentsOf, initializeParams, socketClient, type Frame, type LineClient } from '../support/serve-daemon.js';
import { startTimingProxy, type TimingProxy } from '../support/timing-proxy.js';

type Connection = LineClient & { readonly socket: { close(): void }; readonly closed: Promise<number> };

/** One connection of a client: what it got, from where, what it sent. */
interface Segment {
  readonly client: string;
  readonly sessionId: string;
  readonly after: number;
  readonly frames: Frame[];
  readonly prompts: string[];
  /** The session's epoch before it attached: a later one means its host lost the session. */
  readonly epoch: number;
  readonly connection: Connection;
  readonly host: ClusterHost;
  closed: boolean;
  /** It no longer follows the session (sticky): closed, its host lost the session, or warden said so. */
  ended: boolean;
}

/** A client of one session: a controller (prompts, cancels) or an observer. */
export interface Walker {
  readonly name: string;
  readonly sessionId: string;
  readonly segments: Segment[];
  nextId: number;
}

/** What the walk did, for its report. */
export interface WalkTotals {
  steps: number;
  prompts: number;
  cancelled: number;
  kills: number;
  freezes: number;
  stalls: number;
  cuts: number;
  dbRestarts: number;
  reconnects: number;
  checks: number;
  /** Updates with a seq the clients received (over every connection), each checked against the journal. */
  updates: number;
}

/** Extra settle time for one check: delivery after the journal, takeovers after a fault. */
const deliveryDeadlineMs = 30_000;

export class ClusterWorld {
  readonly hosts: ClusterHost[] = [];
  readonly walkers: Walker[] = [];
  /** Every step and event with its time since the walk began. */
  readonly log: string[] = [];
  proxy: TimingProxy | undefined;
  readonly #fixture: ClusterFixture;
  readonly #dir: string;
  readonly #lease: number;
  readonly #totals: WalkTotals;
  readonly #began = Date.now();
  /** Agent processes of killed hosts: they must end with them. */
  readonly #orphans: number[] = [];
  /** The highest epoch seen per session: it never goes back. */
  readonly #epochs = new Map<string, number>();
  #started = 0;
  #prompts = 0;

  constructor(fixture: ClusterFixture, dir: string, lease: number, totals: WalkTotals) {
    this.#fixture = fixture;
    this.#dir = dir;
    this.#lease = lease;
    this.#totals = totals;
  }

  note(line: string): void {
    this.log.push(`${String(Date.now() - this.#began).padStart(7)} ms  ${line}`);
  }

  /** The proxy with `latencyMs` at most per chunk each way, three hosts behind it, two sessions made through random hosts (`via`), a controller each and an observer of the first. */
  async start(seed: number, latencyMs: number, via: readonly number[]): Promise<void> {
    this.proxy = await startTimingProxy(this.#fixture.server.port, { seed, toServer: [0, latencyMs], toClient: [0, latencyMs] });
    for (let index = 0; index < 3; index++) this.hosts.push(await this.#startHost());
    for (const [session, pick] of [0, 1].map((n) => [n, via[n] ?? n] as const)) {
      const host = this.hosts[pick % 3] as ClusterHost;
      const connection = await this.#open(host, `session ${session} controller`);
      const created = await connection.request(2, 'session/new', { cwd: this.#dir, mcpServers: [] });
      expect(created.error, `session/new on ${this.label(host)}: ${JSON.stringify(created.error)}`).to.equal(undefined);
      const sessionId = (created.result as { sessionId: string }).sessionId;
      const { epoch } = await ownerOf(this.#fixture.url, sessionId);
      const walker: Walker = { name: `session ${session} controller`, sessionId, segments: [], nextId: 3 };
      walker.segments.push(this.#segment(walker, connection, host, 0, epoch));
      this.walkers.push(walker);
      this.note(`${walker.name}: session/new ${sessionId} via ${this.label(host)}`);
    }
    const observer: Walker = { name: 'session 0 observer', sessionId: (this.walkers[0] as Walker).sessionId, segments: [], nextId: 1 };
    this.walkers.push(observer);
    await this.reconnect(observer, via[2] ?? 2);
  }

  label(host: ClusterHost): string {
    return `host ${this.hosts.indexOf(host)} (pid ${host.process.pid})`;
  }

  async #startHost(): Promise<ClusterHost> {
    const store = this.#fixture.url.replace(`:${this.#fixture.server.port}/`, `:${(this.proxy as TimingProxy).port}/`);
    // One token for the cluster: a client's host forwards to the session's owner with it.
    const args = ['--env', 'DEMO_WORD_DELAY_MS=20', '--token-file', join(this.#dir, 'token')];
    return startClusterHost(join(this.#dir, `host-${++this.#started}`), this.#fixture.launched, { store, lease: this.#lease, args });
  }

  async #open(host: ClusterHost, name: string): Promise<Connection> {
    const connection = await socketClient(host, this.#fixture.sockets);
    const init = await connection.request(1, 'initialize', initializeParams(name.replace(/ /gu, '-')));
    expect(init.error, JSON.stringify(init.error)).to.equal(undefined);
    return connection;
  }

  #segment(walker: Walker, connection: Connection, host: ClusterHost, after: number, epoch: number): Segment {
    const segment: Segment = { client: `${walker.name}, connection ${walker.segments.length + 1} via ${this.label(host)}`, sessionId: walker.sessionId, after, frames: connection.frames, prompts: [], epoch, connection, host, closed: false, ended: false };
    void connection.closed.then(() => (segment.closed = true));
    return segment;
  }

  /** The last seq the walker saw over all its connections (0: none). */
  lastSeq(walker: Walker): number {
    let last = 0;
    for (const segment of walker.segments) {
      for (const frame of segment.frames) {
        const seq = frame.method === 'session/update' && frame.params?.sessionId === walker.sessionId ? (frame.params._meta?.[cursorKeys.seq] as number | undefined) : undefined;
        if (seq !== undefined && seq > last) last = seq;
      }
    }
    return last;
  }

  /** Closes the walker's connection and resumes on host `via` (any host: not its owner's) from the last seq it saw; retried while the session has no reachable owner. */
  async reconnect(walker: Walker, via: number): Promise<void> {
    const current = walker.segments.at(-1);
    if (current) {
      current.ended = true;
      current.connection.socket.close();
    }
    this.#totals.reconnects++;
    for (let attempt = 1; ; attempt++) {
      const host = this.hosts[(via + attempt - 1) % 3] as ClusterHost;
      const after = this.lastSeq(walker);
      const { epoch } = await ownerOf(this.#fixture.url, walker.sessionId);
      const connection = await this.#open(host, walker.name);
      const resumed = await connection.request(2, 'session/resume', { sessionId: walker.sessionId, cwd: this.#dir, mcpServers: [], _meta: { 'acp-warden/after': after } }, 60_000);
      const segment = this.#segment(walker, connection, host, after, epoch);
      walker.segments.push(segment);
      walker.nextId = 3;
      if (!resumed.error) {
        this.note(`${walker.name}: session/resume after seq ${after} via ${this.label(host)}`);
        return;
      }
      segment.ended = true;
      connection.socket.close();
      this.note(`${walker.name}: session/resume via ${this.label(host)} refused: ${resumed.error.message}`);
      if (attempt >= 6) throw new Error(`${walker.name} could not re-attach ${walker.sessionId} in ${attempt} attempts: ${JSON.stringify(resumed.error)}`);
      await this.settleOwners();
      // A bounded retry's pause (6 attempts): a refusal names no event to wait for.
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  /**
   * A prompt of the walker's session (`words` words; the text is the walk's own, so the
   * checker knows it), settled: answered, or failed, or its connection gone. With `cancelAfter`,
   * a `session/cancel` once that many chunks of it arrived; with `during`, a fault once two
   * chunks arrived. Returns the answer (undefined: the connection went first).
   */
  async prompt(walker: Walker, words: number, options: { readonly cancelAfter?: number; readonly during?: () => Promise<void> } = {}): Promise<Frame | undefined> {
    const text = [`p${++this.#prompts}`, ...Array.from({ length: words }, (_, n) => `w${n}`)].join(' ');
    for (let attempt = 1; ; attempt++) {
      const segment = walker.segments.at(-1) as Segment;
      const id = walker.nextId++;
      segment.prompts.push(text);
      this.#totals.prompts++;
      this.note(`${walker.name}: prompt ${text.split(' ')[0]} (${words} words${options.cancelAfter ? `, cancel after ${options.cancelAfter} chunks` : ''}${options.during ? ', a fault during it' : ''})`);
      segment.connection.send({ id, method: 'session/prompt', params: { sessionId: walker.sessionId, prompt: [{ type: 'text', text }] } });
      const answered = () => segment.frames.find((frame) => frame.id === id && frame.method === undefined);
      if (options.cancelAfter !== undefined || options.during) {
        const chunks = () => segment.frames.filter((frame) => frame.method === 'session/update' && frame.params?.update?.sessionUpdate === 'agent_message_chunk' && frame.params.update.content?.text?.startsWith('w')).length;
        const before = chunks();
        const wanted = options.cancelAfter ?? 2;
        await waitUntil(() => chunks() - before >= wanted || answered() !== undefined || segment.closed, `${wanted} chunks of ${text.split(' ')[0]}`, 60_000);
        if (options.cancelAfter !== undefined && !answered()) segment.connection.send({ method: 'session/cancel', params: { sessionId: walker.sessionId } });
        if (options.during) await options.during();
      }
      await waitUntil(() => answered() !== undefined || segment.closed, `the answer to ${text.split(' ')[0]} (every prompt settles)`, 120_000);
      const answer = answered();
      const reason = answer?.error?.data?.reason;
      this.note(`${walker.name}: ${text.split(' ')[0]} ${answer ? (answer.error ? `failed: ${reason ?? answer.error.message}` : `answered ${String(answer.result?.stopReason)}`) : 'lost with its connection'}`);
      if (answer?.result?.stopReason === 'cancelled') this.#totals.cancelled++;
      // Another connection of this client still held control (its departure not yet seen): take it, then again.
      if (reason === 'not_controller' && attempt < 5) {
        const take = walker.nextId++;
        await segment.connection.request(take, '_acp-warden/take_control', { sessionId: walker.sessionId }, 30_000).catch(() => undefined);
        continue;
      }
      return answer;
    }
  }

  /** Starts a prompt that `fault` hits mid-turn (the first controller of `session`), or just runs the fault. */
  async faultDuring(session: number | undefined, fault: () => Promise<void>): Promise<void> {
    const walker = session === undefined ? undefined : this.walkers[session];
    if (!walker) return fault();
    await this.heal(walker, session as number);
    await this.prompt(walker, 60, { during: fault });
  }

  async kill(index: number): Promise<void> {
    const victim = this.hosts[index] as ClusterHost;
    this.note(`kill -9 ${this.label(victim)}`);
    this.#orphans.push(...demoAgentsOf(victim.process.pid));
    victim.process.kill('SIGKILL');
    await victim.exited;
    this.hosts[index] = await this.#startHost();
    this.note(`host ${index} is now pid ${this.hosts[index]?.process.pid}`);
    this.#totals.kills++;
  }

  async freeze(index: number): Promise<void> {
    const frozen = this.hosts[index] as ClusterHost;
    this.note(`SIGSTOP ${this.label(frozen)} past two leases (its lease unrenewed that long in the database)`);
    process.kill(frozen.process.pid as number, 'SIGSTOP');
    await untilUnrenewedFor(this.#fixture.url, frozen, this.#lease, 2);
    process.kill(frozen.process.pid as number, 'SIGCONT');
    this.note(`SIGCONT ${this.label(frozen)}`);
    this.#totals.freezes++;
  }

  async stall(ms: number): Promise<void> {
    this.note(`the database stalls for ${ms} ms`);
    await (this.proxy as TimingProxy).stall(ms);
    this.#totals.stalls++;
  }

  cut(): void {
    this.note(`every connection to the database cut (${(this.proxy as TimingProxy).stats.connections} made so far)`);
    (this.proxy as TimingProxy).cutAll();
    this.#totals.cuts++;
  }

  async restartDatabase(): Promise<void> {
    this.note('the database restarts (immediate: as a crash)');
    await this.#fixture.server.restart({ immediate: true });
    this.#totals.dbRestarts++;
  }

  /** Waits until every session has a live owner (a takeover after a kill or a freeze). */
  async settleOwners(): Promise<void> {
    for (const walker of this.walkers) {
      await waitUntil(async () => this.#byAdvertise((await ownerOf(this.#fixture.url, walker.sessionId)).advertise) !== undefined, `a live owner of ${walker.sessionId}`, 60_000, 200);
    }
  }

  #byAdvertise(advertise: string | null): ClusterHost | undefined {
    return this.hosts.find((one) => one.advertise === advertise);
  }

  /** Whether the segment still follows its session: open, its session not moved since it attached, and warden did not say otherwise (a notice without a seq). */
  #follows(segment: Segment, epoch: number): boolean {
    if (segment.ended) return false;
    const told = segment.frames.some((frame) => frame.method === 'session/update' && frame.params?.sessionId === segment.sessionId && frame.params._meta?.[cursorKeys.seq] === undefined);
    if (segment.closed || told || epoch !== segment.epoch) segment.ended = true;
    return !segment.ended;
  }

  /** A walker whose connection no longer follows its session resumes on host `via` (any host). */
  async heal(walker: Walker, via: number): Promise<void> {
    const { epoch } = await ownerOf(this.#fixture.url, walker.sessionId);
    const current = walker.segments.at(-1);
    if (!current || !this.#follows(current, epoch)) await this.reconnect(walker, via);
  }

  /**
   * The invariants after a step: each session owned by a live host at an epoch that never went
   * back; the delivery invariant over every connection of every client (once delivery settled);
   * no agent process of a killed host left.
   */
  async check(step: string): Promise<void> {
    this.#totals.checks++;
    await this.settleOwners();
    for (const walker of this.walkers) {
      const owner = await ownerOf(this.#fixture.url, walker.sessionId);
      expect(this.#byAdvertise(owner.advertise), `${step}: session ${walker.sessionId} is owned by a live host`).to.not.equal(undefined);
      expect(owner.epoch, `${step}: the epoch of ${walker.sessionId} never goes back`).to.be.at.least(this.#epochs.get(walker.sessionId) ?? 1);
      this.#epochs.set(walker.sessionId, owner.epoch);
    }
    const records = async (): Promise<ConnectionRecord[]> => {
      const epochs = new Map<string, number>();
      for (const walker of this.walkers) epochs.set(walker.sessionId, (await ownerOf(this.#fixture.url, walker.sessionId)).epoch);
      return this.walkers.flatMap((walker) => walker.segments.map((segment) => ({ client: segment.client, sessionId: segment.sessionId, after: segment.after, frames: segment.frames, prompts: segment.prompts, following: this.#follows(segment, epochs.get(segment.sessionId) ?? 0) })));
    };
    const violations = await settledViolations(records, (sessionIds) => postgresJournal(this.#fixture.url, sessionIds), deliveryDeadlineMs);
    if (violations.length > 0) {
      this.note(`${step}: ${violations.length} delivery violations`);
      throw new Error(`${step}: the delivery invariant broke:\n${describeViolations(violations)}\n\n${await this.#journalAround(violations)}`);
    }
    await waitUntil(() => this.#orphans.every((pid) => !isAlive(pid)), `${step}: no agent of a killed host left`, 15_000);
  }

  /** The journal of each session a violation names, around its seqs (seq, kind, what), and its owner: what a report needs. */
  async #journalAround(violations: readonly Violation[]): Promise<string> {
    const sessions = [...new Set(violations.map((one) => one.sessionId))];
    const journals = await postgresJournal(this.#fixture.url, sessions);
    const parts: string[] = [];
    for (const sessionId of sessions) {
      const seqs = violations.filter((one) => one.sessionId === sessionId && one.seq !== undefined).map((one) => one.seq as number);
      const rows = journals.get(sessionId) ?? [];
      const at = rows.findIndex((row) => row.seq >= Math.min(...seqs));
      const shown = seqs.length === 0 ? rows.slice(-12) : rows.slice(Math.max(0, at - 8), at + 8);
      const owner = await ownerOf(this.#fixture.url, sessionId);
      const what = (row: JournalRow) => (row.entry.kind === 'update' ? `update ${row.entry.update.sessionUpdate}` : row.entry.kind === 'notice' ? `notice "${row.entry.title}"` : row.entry.kind === 'stop' ? `stop ${row.entry.stopReason}` : row.entry.kind === 'attached' ? `attached (${row.entry.how})` : row.entry.kind);
      parts.push(`journal of ${sessionId} (owner ${owner.advertise ?? 'none'}, epoch ${owner.epoch}), around the violations:\n${shown.map((row) => `  ${row.seq} ${what(row)}`).join('\n')}`);
    }
    return parts.join('\n');
  }

  /** How many updates with a seq the walk's clients received, over all their connections. */
  updatesReceived(): number {
    let count = 0;
    for (const walker of this.walkers) {
      for (const segment of walker.segments) count += segment.frames.filter((frame) => frame.method === 'session/update' && frame.params?._meta?.[cursorKeys.seq] !== undefined).length;
    }
    return count;
  }

  async dispose(): Promise<void> {
    for (const walker of this.walkers) for (const segment of walker.segments) segment.connection.socket.close();
    for (const host of this.hosts) host.process.kill('SIGKILL');
    await Promise.all(this.hosts.map((host) => host.exited));
    await this.proxy?.close();
  }
}
