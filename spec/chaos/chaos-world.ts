/**
 * The real system the chaos walk runs against: a host (the embedding API, served to a raw
 * editor over an in-memory transport, as `warden acp` serves stdio) whose agents are fake
 * Claude Code CLIs replaying recorded transcripts as real subprocesses, each session in a
 * working directory of its own (so /proc tells which session a process belongs to), a
 * journal file that outlives host restarts, and the checks of every invariant.
 */
import type { Journal } from '../../src/journal/journal.js';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentFor } from '../../src/adapters/agent-factory.js';
import { createHost, type Host, type HostEvent } from '../../src/runtime/host.js';
import { AGENT_META_KEY } from '../../src/host/host-agent.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import type { JournalDelay } from '../../src/journal/delayed-journal.js';
import { deliveryViolations } from '../support/delivery-check.js';
import { createMemoryTransportPair } from '../../src/jsonrpc/index.js';
import { ChaosEditor, type LedgerEntry } from './chaos-editor.js';

const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));

/** The supervision every agent of the walk runs under. */
// The tool limit is short too: a fault can swallow the line a tool run ends with (a half line
// glued to Claude's permission request), and the CLI then waits in silence for an answer
// warden never saw; only the watchdog ends that turn (with the default, after 30 minutes).
// The window is long enough for a crash loop to exceed the intensity on a loaded machine: its 4th
// restart comes after three backoff delays (at most 240 + 480 + 960 ms) and three lives of a CLI
// that kills itself at start (a Node start: 0.1 s idle, about 1 s on 2 busy cores); in a 4 s
// window a loop on a busy machine never failed (a full run met it: 12 restarts, none refused).
export const chaosSupervision = { intensity: 3, period: 10_000, hangAfterMs: 700, toolHangAfterMs: 3_000 } as const;

/** The memory limits of the walk's agents (the `leak` fault crosses them): soft 250 MiB, hard 320 MiB, sampled every 100 ms. */
export const chaosMemoryLimits = { maxMemoryBytes: 250 * 1024 * 1024, maxMemoryHardBytes: 320 * 1024 * 1024, memoryPollMs: 100 } as const;

/** Agents of the walk: what each session's fake CLI replays. */
export type ChaosAgent = 'claude' | 'permission' | 'flaky';

/** A session as the walk knows it. */
export interface ChaosSession {
  readonly sessionId: string;
  readonly agent: ChaosAgent;
  readonly cwd: string;
  /** Its prompts, in the order sent. */
  readonly prompts: LedgerEntry[];
}

/** A violated invariant: the message says which, with the facts. */
export class InvariantError extends Error {
  override readonly name = 'InvariantError';
}

function invariant(condition: boolean, message: () => string): asserts condition {
  if (!condition) throw new InvariantError(message());
}

/** A fact of the walk, for the replay report. */
export interface WalkLogLine {
  readonly at: number;
  readonly line: string;
}

export class ChaosWorld {
  readonly root = mkdtempSync(join(tmpdir(), 'warden-chaos-'));
  readonly journalPath = join(this.root, 'journal.sqlite');
  /** Timing faults in the journal for the next host generation (the `journalTiming` step): none by default. */
  journalDelay: JournalDelay | undefined;
  /** The flaky agent's executable: a shell that execs the fake, made unexecutable to fail spawns. */
  readonly flakyCommand = join(this.root, 'flaky-claude');
  readonly sessions: ChaosSession[] = [];
  /** Supervision restarts, by supervisor path, with the supervisor's clock. */
  readonly restarts = new Map<string, number[]>();
  readonly events: HostEvent[] = [];
  /** Each session's state, from the host's `session.state` events. */
  readonly states = new Map<string, string>();
  readonly log: WalkLogLine[] = [];
  host!: Host;
  editor!: ChaosEditor;
  /** Editors of earlier host generations: their ledgers are checked too. */
  readonly pastEditors: ChaosEditor[] = [];
  generation = 0;
  faults = 0;
  #running = false;
  #ended = 0;
  #nextDir = 0;
  readonly #started = Date.now();

  constructor() {
    writeFileSync(this.flakyCommand, `#!/bin/sh\nexec "${process.execPath}" "${fakeClaude}" "$@"\n`);
    chmodSync(this.flakyCommand, 0o755);
  }

  say(line: string): void {
    this.log.push({ at: Date.now() - this.#started, line });
  }

  /** Starts a host generation on the journal file and an editor for it. */
  async startHost(): Promise<void> {
    this.generation++;
    // A 1 MiB line limit keeps the fake's `huge` fault (a 2 MiB line) over it: skipped, the CLI going on.
    // Memory limits well above a fake's own (about 50 MB): only the `leak` fault reaches them.
    const common = { restart: { intensity: chaosSupervision.intensity, period: chaosSupervision.period }, hangAfterMs: chaosSupervision.hangAfterMs, toolHangAfterMs: chaosSupervision.toolHangAfterMs, maxLineBytes: 1024 * 1024, ...chaosMemoryLimits };
    const env = (fixture: string) => ({ FAKE_CLAUDE_FIXTURE: fixture, FAKE_CLAUDE_LOOP: '1', FAKE_CLAUDE_DELAY_MS: '10' });
    const host = createHost({
      store: this.journalPath,
      ...(this.journalDelay ? { journalDelay: this.journalDelay } : {}),
      defaultAgent: 'claude',
      agents: {
        claude: agentFor('claude', { ...common, agentCommand: fakeClaude, env: env('partial') }),
        permission: agentFor('claude', { ...common, agentCommand: fakeClaude, env: env('tool-write-permission-allow') }),
        flaky: agentFor('claude', { ...common, agentCommand: this.flakyCommand, env: env('hello') }),
      },
    });
    host.on((event) => {
      this.events.push(event);
      if (event.type === 'session.state') this.states.set(event.sessionId, event.state);
      this.say(`  · ${describeEvent(event)}`);
      // A supervisor that shut down is gone; one started again under the same path counts afresh.
      if (event.type === 'supervisor.shutdown') {
        this.restarts.set(`${event.supervisor} (ended ${++this.#ended})`, this.restarts.get(event.supervisor) ?? []);
        this.restarts.delete(event.supervisor);
      }
      if (event.type === 'child.restarted') {
        const times = this.restarts.get(event.supervisor) ?? [];
        // When the supervisor counted it (`at` is later, after the child's start).
        // Children a strategy restarts together are one restart: they share countedAt.
        if (times.at(-1) !== event.countedAt) times.push(event.countedAt);
        this.restarts.set(event.supervisor, times);
      }
    });
    const [editorSide, agentSide] = createMemoryTransportPair();
    host.serve(agentSide);
    this.host = host;
    this.#running = true;
    this.editor = new ChaosEditor(editorSide);
    await this.editor.request('initialize', {
      protocolVersion: 1,
      clientCapabilities: { session: { notices: {} } },
      clientInfo: { name: 'chaos-editor', version: '1' },
    });
  }

  /** Stops the host; every process must be gone and every request answered. */
  async stopHost(): Promise<void> {
    this.#running = false;
    await this.host.stop();
    this.editor.close();
    this.pastEditors.push(this.editor);
  }

  newDir(): string {
    const dir = join(this.root, `s${this.#nextDir++}`);
    mkdirSync(dir);
    return dir;
  }

  async newSession(agent: ChaosAgent): Promise<ChaosSession> {
    const cwd = this.newDir();
    const result = (await this.editor.request('session/new', { cwd, mcpServers: [], _meta: { [AGENT_META_KEY]: agent } })) as { sessionId: string };
    const session: ChaosSession = { sessionId: result.sessionId, agent, cwd, prompts: [] };
    this.sessions.push(session);
    return session;
  }

  prompt(session: ChaosSession, text = 'hi'): LedgerEntry {
    const entry = this.editor.send('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text }] });
    session.prompts.push(entry);
    return entry;
  }

  /** The session's state chart now (`ready`, `prompting`, `recovering`, `failed`, …), as the host last told it. */
  stateOf(session: ChaosSession): string | undefined {
    return this.states.get(session.sessionId);
  }

  /** Live fake CLI processes working in the session's directory (zombies are dead). */
  processesOf(session: ChaosSession): number[] {
    return liveFakesIn(session.cwd);
  }

  /** Every live fake CLI process under the walk's root. */
  allProcesses(): number[] {
    return liveFakesIn(this.root, true);
  }

  fault(file: '.fake-fault' | '.fake-crash-loop', session: ChaosSession, content = ''): void {
    writeFileSync(join(session.cwd, file), content);
  }

  clearFaults(session: ChaosSession): void {
    rmSync(join(session.cwd, '.fake-fault'), { force: true });
    rmSync(join(session.cwd, '.fake-crash-loop'), { force: true });
  }

  setFlakyExecutable(executable: boolean): void {
    chmodSync(this.flakyCommand, executable ? 0o755 : 0o644);
  }

  everyLedger(): LedgerEntry[] {
    return [...this.pastEditors, this.editor].flatMap((editor) => [...editor.ledger.values()]);
  }

  /** The invariants that hold after every step. */
  checkAlways(): void {
    for (const editor of [...this.pastEditors, this.editor]) {
      invariant(editor.unsolicited.length === 0, () => `responses nobody asked for: ${JSON.stringify(editor.unsolicited.slice(0, 3))}`);
    }
    for (const entry of this.everyLedger()) {
      invariant(entry.responses <= 1, () => `request ${entry.id} (${entry.method}) answered ${entry.responses} times`);
    }
    for (const session of this.sessions) {
      const live = this.processesOf(session);
      invariant(live.length <= 1, () => `session ${session.sessionId} has ${live.length} live processes: ${live.join(', ')}`);
    }
    for (const [supervisor, times] of this.restarts) {
      for (let index = 0; index < times.length; index++) {
        const inWindow = times.filter((at) => at > (times[index] as number) - chaosSupervision.period && at <= (times[index] as number)).length;
        invariant(inWindow <= chaosSupervision.intensity, () => `${supervisor} restarted ${inWindow} times within ${chaosSupervision.period} ms (intensity ${chaosSupervision.intensity})`);
      }
    }
  }

  /** When nothing is in flight: every request settled, journals complete, no leaked actor or process. */
  checkQuiet(): void {
    this.checkAlways();
    for (const entry of this.everyLedger()) {
      invariant(entry.responses === 1, () => `request ${entry.id} (${entry.method} ${entry.sessionId ?? ''}) never settled`);
    }
    this.checkJournal(true);
    // No leaked actors or processes: a port runs only for a session the tree says is alive.
    const ports = this.host.processes();
    for (const port of ports) invariant(port.port.getSnapshot().status === 'active', () => `a stopped port actor is still listed (pid ${port.pid})`);
    const alive = new Set(ports.map((port) => port.pid));
    for (const pid of this.allProcesses()) invariant(alive.has(pid), () => `process ${pid} runs but no port owns it (ports: ${[...alive].join(', ')})`);
    const leak = this.leakedActors();
    invariant(leak === undefined, () => leak as string);
    for (const session of this.sessions) {
      const state = this.stateOf(session);
      if (state === 'failed' || state === 'closed' || state === undefined) {
        invariant(this.processesOf(session).length === 0, () => `session ${session.sessionId} is ${state ?? 'gone'} but its process lives`);
      }
    }
  }

  /**
   * No leaked actors: a session chart and a session supervisor exist exactly for the sessions
   * that are open; failed and closed ones left nothing behind. What is wrong, or `undefined`.
   * (A supervisor being terminated is still in the tree for a moment: `quiet` waits for this.)
   */
  leakedActors(): string | undefined {
    const open = this.sessions.filter((session) => this.stateOf(session) === 'ready').map((session) => session.sessionId).sort();
    const { charts, supervisors } = actorsOf(this.host.tree());
    if (JSON.stringify(charts.sort()) !== JSON.stringify(open)) return `session charts ${charts.join(', ')} but open sessions ${open.join(', ')}`;
    if (JSON.stringify(supervisors.sort()) !== JSON.stringify(open)) return `session supervisors ${supervisors.join(', ')} but open sessions ${open.join(', ')}`;
    return undefined;
  }

  /**
   * Every update an editor received (the host acknowledged it) is in the journal, in order, and
   * delivery was exact by seq (spec/support/delivery-check.ts): each carries the seq of a
   * journaled update or notice of its session, none twice, none out of order, none skipped
   * between the first and the last it got; once quiet, the current editor also got every one
   * journaled after its first (`quiet`). Reads the journal file itself (the host's may be delayed).
   */
  checkJournal(quiet = false): void {
    const journal = sqliteJournal(this.journalPath);
    try {
      this.checkJournalOf(journal);
      for (const editor of [...this.pastEditors, this.editor]) {
        for (const [sessionId, received] of editor.seqs) {
          const journaled = journal.entries(sessionId).filter(({ entry }) => entry.kind === 'update' || entry.kind === 'notice').map(({ seq }) => seq);
          const first = received.find((seq) => seq !== undefined) ?? 1;
          const last = Math.max(0, ...received.map((seq) => seq ?? 0));
          const complete = quiet && editor === this.editor;
          const violations = deliveryViolations(received, journaled.filter((seq) => complete || seq <= last), first - 1);
          invariant(violations.length === 0, () => `session ${sessionId}${editor === this.editor ? '' : ' (a past editor)'}: delivery not exact: ${violations.join('; ')}`);
        }
      }
    } finally {
      journal.close();
    }
  }

  /**
   * How many journaled updates and notices the current editor is still owed (after the first it
   * got of each session). The journal file is read directly, and a commit reaches it before the
   * host has its acknowledgement (a delayed journal pauses there too), so right after a session
   * settles an entry can be in the file and on its way: `quiet` waits for this to reach 0, with a
   * bound, before {@link checkJournal} judges; an update really lost stays owed and fails there.
   */
  owedToEditor(): number {
    const journal = sqliteJournal(this.journalPath);
    try {
      let owed = 0;
      for (const [sessionId, received] of this.editor.seqs) {
        const first = received.find((seq) => seq !== undefined) ?? 1;
        const got = new Set(received);
        owed += journal.entries(sessionId).filter(({ seq, entry }) => (entry.kind === 'update' || entry.kind === 'notice') && seq >= first && !got.has(seq)).length;
      }
      return owed;
    } finally {
      journal.close();
    }
  }

  checkJournalOf(journal: Journal): void {
    for (const [sessionId, received] of [...this.pastEditors, this.editor].flatMap((editor) => [...editor.updates])) {
      if (!journal.getSession(sessionId)) throw new InvariantError(`session ${sessionId} received updates but is not in the journal`);
      // Notices are journaled as their own kind (not conversation) and sent as notice updates.
      const journaled = journal.entries(sessionId).flatMap(({ entry }) => {
        if (entry.kind === 'update') return [JSON.stringify(entry.update)];
        if (entry.kind === 'notice') return [JSON.stringify({ sessionUpdate: 'notice', severity: entry.severity, title: entry.title, ...(entry.description !== undefined ? { description: entry.description } : {}) })];
        return [];
      });
      let at = 0;
      for (const update of received) {
        const wanted = JSON.stringify(update);
        while (at < journaled.length && journaled[at] !== wanted) at++;
        invariant(at < journaled.length, () => `session ${sessionId}: update ${wanted.slice(0, 160)} was delivered but is not in the journal (in order)`);
        at++;
      }
    }
  }

  /** After the host stopped: no process left, the journal on disk still has everything. */
  checkStopped(): void {
    invariant(this.allProcesses().length === 0, () => `processes left after stop: ${this.allProcesses().join(', ')}`);
    for (const entry of this.editor.ledger.values()) {
      invariant(entry.responses === 1, () => `request ${entry.id} (${entry.method}) was not answered before the host stopped`);
    }
    this.checkJournal();
  }

  async dispose(): Promise<void> {
    try {
      if (this.#running) await this.stopHost();
    } finally {
      for (const pid of this.allProcesses()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
      rmSync(this.root, { recursive: true, force: true });
    }
  }
}

/** The session charts and the session supervisors (children of an agent's `sessions`) in a host's tree. */
function actorsOf(tree: unknown): { charts: string[]; supervisors: string[] } {
  const charts: string[] = [];
  const supervisors: string[] = [];
  const walk = (node: { id: string; type?: string; children?: readonly unknown[] }, parent: string | undefined) => {
    if (node.type === 'session') charts.push(node.id.replace(/^session:/u, ''));
    if (parent === 'sessions') supervisors.push(node.id);
    for (const child of node.children ?? []) walk(child as typeof node, node.id);
  };
  walk(tree as { id: string }, undefined);
  return { charts, supervisors };
}

/** A host event in one short line, for the walk's log. */
function describeEvent(event: HostEvent): string {
  const fields = event as unknown as Record<string, unknown>;
  const who = fields.sessionId ?? (typeof fields.supervisor === 'string' ? `${String(fields.supervisor).split('/').at(-1)}/${String(fields.childId ?? '')}` : '');
  const what = fields.state ?? fields.exit ?? fields.reason ?? fields.pid ?? fields.restarts ?? '';
  return `${event.type} ${String(who)} ${typeof what === 'object' ? JSON.stringify(what).slice(0, 120) : String(what)}`;
}

/** Live processes running fake-claude whose working directory is `dir` (or under it). */
function liveFakesIn(dir: string, under = false): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/u.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z') continue;
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      if (under ? !cwd.startsWith(`${dir}/`) : cwd !== dir) continue;
      if (!readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('fake-claude')) continue;
      found.push(Number(entry));
    } catch {
      // gone while reading
    }
  }
  return found;
}
