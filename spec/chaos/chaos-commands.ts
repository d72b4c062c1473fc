/**
 * The steps of the chaos walk, as fast-check model commands: each checks against the model
 * whether it may run, drives the real host (and its real fake CLIs), updates the model, and
 * ends with the invariants of {@link ChaosWorld.checkAlways} (or the stronger
 * `checkQuiet` when it waited for everything to settle).
 */
import fc from 'fast-check';
import { existsSync, readFileSync } from 'node:fs';
import type { LedgerEntry } from './chaos-editor.js';
import { InvariantError, type ChaosAgent, type ChaosSession, type ChaosWorld } from './chaos-world.js';

/** What the model knows of a session. */
export interface ModelSession {
  readonly agent: ChaosAgent;
  status: 'open' | 'failed' | 'closed';
}

export interface ChaosModel {
  readonly sessions: ModelSession[];
  readonly maxSessions: number;
}

type Command = fc.AsyncCommand<ChaosModel, ChaosWorld>;

/** Generous deadline for anything real processes do (never a timing assertion). */
const deadlineMs = 30_000;

async function within<T>(promise: Promise<T>, what: string, ms = deadlineMs): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new InvariantError(`not settled within ${ms} ms: ${what}`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

async function until(predicate: () => boolean, what: string, ms = deadlineMs): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new InvariantError(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function signal(pid: number | undefined, name: NodeJS.Signals): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false;
  }
}

/** The `pick`-th (modulo) session of the model with one of `statuses` (and agents), with its real twin. */
function pickSession(model: ChaosModel, world: ChaosWorld | undefined, pick: number, statuses: ReadonlyArray<ModelSession['status']>, agents?: readonly ChaosAgent[]) {
  const candidates = model.sessions.map((session, index) => ({ session, index })).filter(({ session }) => statuses.includes(session.status) && (!agents || agents.includes(session.agent)));
  if (candidates.length === 0) return undefined;
  const chosen = candidates[pick % candidates.length] as { session: ModelSession; index: number };
  return { model: chosen.session, real: world?.sessions[chosen.index] as ChaosSession };
}

/** Sends a prompt and waits until it is under way: its first update came, or it already ended. */
async function promptUnderWay(world: ChaosWorld, session: ChaosSession): Promise<LedgerEntry> {
  const before = world.editor.updates.get(session.sessionId)?.length ?? 0;
  const entry = world.prompt(session);
  await until(() => entry.responses > 0 || (world.editor.updates.get(session.sessionId)?.length ?? 0) > before || world.stateOf(session) === 'failed', `prompt ${entry.id} to start`);
  return entry;
}

/** The model follows a session the host gave up on (the intensity invariant says it may). */
function syncFailures(model: ChaosModel, world: ChaosWorld): void {
  model.sessions.forEach((session, index) => {
    const real = world.sessions[index];
    if (session.status === 'open' && real && world.stateOf(real) === 'failed') {
      session.status = 'failed';
      world.say(`session ${real.sessionId} failed (restart intensity)`);
    }
  });
}

/** Waits until no request is pending and no session is between states, then checks everything. */
async function quiet(model: ChaosModel, world: ChaosWorld): Promise<void> {
  world.editor.holdPermissions.clear();
  world.editor.releasePermissions();
  await within(Promise.all(world.editor.pending().map((entry) => entry.settled)), `requests ${world.editor.pending().map((entry) => `${entry.id} ${entry.method}`).join(', ')}`);
  const stable = new Set(['ready', 'failed', 'closed']);
  await until(() => world.sessions.every((session) => stable.has(world.stateOf(session) ?? 'closed')), `every session to settle (${world.sessions.map((session) => world.stateOf(session)).join(', ')})`);
  // A port restarted a moment ago may still be spawning: wait for one pid per live port.
  await until(() => world.allProcesses().every((pid) => world.host.processes().some((port) => port.pid === pid)), 'every process to belong to a port');
  syncFailures(model, world);
  // A closed or failed session's supervisor ends asynchronously (its port stops gracefully).
  await until(() => world.leakedActors() === undefined, `no leaked actors (${world.leakedActors() ?? ''})`);
  // Committed is not yet delivered: give what the file holds a moment to arrive (checkQuiet
  // names whatever is still owed after it as lost).
  const delivered = Date.now() + 5_000;
  while (world.owedToEditor() > 0 && Date.now() < delivered) await new Promise((resolve) => setTimeout(resolve, 20));
  world.checkQuiet();
}

class NewSession implements Command {
  constructor(readonly agent: ChaosAgent) {}
  check(model: Readonly<ChaosModel>): boolean {
    return model.sessions.filter((session) => session.status !== 'closed').length < model.maxSessions;
  }
  async run(model: ChaosModel, world: ChaosWorld): Promise<void> {
    const session = await within(world.newSession(this.agent), 'session/new');
    model.sessions.push({ agent: this.agent, status: 'open' });
    world.say(`new ${this.agent} session ${session.sessionId}`);
    world.checkAlways();
  }
  toString(): string {
    return `new(${this.agent})`;
  }
}

class Prompt implements Command {
  constructor(readonly pick: number) {}
  check(model: Readonly<ChaosModel>): boolean {
    return pickSession(model, undefined, this.pick, ['open', 'failed']) !== undefined;
  }
  async run(model: ChaosModel, world: ChaosWorld): Promise<void> {
    const { real } = pickSession(model, world, this.pick, ['open', 'failed'])!;
    const entry = world.prompt(real);
    world.say(`prompt ${entry.id} to ${real.sessionId}`);
    world.checkAlways();
  }
  toString(): string {
    return `prompt(${this.pick})`;
  }
}

class Settle implements Command {
  check(): boolean {
    return true;
  }
  async run(model: ChaosModel, world: ChaosWorld): Promise<void> {
    await quiet(model, world);
    world.say('settled');
  }
  toString(): string {
    return 'settle';
  }
}

type KillPoint = 'idle' | 'mid-prompt' | 'mid-permission';

class Kill implements Command {
  constructor(readonly pick: number, readonly when: KillPoint) {}
  check(model: Readonly<ChaosModel>): boolean {
    return pickSession(model, undefined, this.pick, ['open'], this.when === 'mid-permission' ? ['permission'] : undefined) !== undefined;
  }
  async run(model: ChaosModel, world: ChaosWorld): Promise<void> {
    const { real } = pickSession(model, world, this.pick, ['open'], this.when === 'mid-permission' ? ['permission'] : undefined)!;
    let entry: LedgerEntry | undefined;
    if (this.when === 'mid-prompt') entry = await promptUnderWay(world, real);
    if (this.when === 'mid-permission') {
      world.editor.holdPermissions.add(real.sessionId);
      entry = world.prompt(real);
      await until(() => entry!.responses > 0 || world.editor.heldPermissions.some((ask) => ask.sessionId === real.sessionId), `a permission request of ${real.sessionId}`);
    }
    const [pid] = world.processesOf(real);
    const killed = signal(pid, 'SIGKILL');
    world.faults += killed ? 1 : 0;
    world.say(`kill -9 ${pid ?? '(none)'} of ${real.sessionId} ${this.when}${entry ? ` (prompt ${entry.id})` : ''}`);
    if (this.when === 'mid-permission') {
      // The editor answers after the crash: a late answer must be taken quietly.
      world.editor.holdPermissions.delete(real.sessionId);
      world.editor.releasePermissions(real.sessionId);
    }
    if (entry) await within(entry.settled, `prompt ${entry.id} after kill -9`);
    world.checkAlways();
  }
  toString(): string {
    return `kill(${this.pick}, ${this.when})`;
  }
}

class Hang implements Command {
  constructor(readonly pick: number, readonly continueAfter: boolean) {}
  check(model: Readonly<ChaosModel>): boolean {
    return pickSession(model, undefined, this.pick, ['open'], ['claude', 'flaky']) !== undefined;
  }
  async run(model: ChaosModel, world: ChaosWorld): Promise<void> {
    const { real } = pickSession(model, world, this.pick, ['open'], ['claude', 'flaky'])!;
    const entry = await promptUnderWay(world, real);
    const [pid] = world.processesOf(real);
    const stopped = signal(pid, 'SIGSTOP');
    world.faults += stopped ? 1 : 0;
    world.say(`SIGSTOP ${pid ?? '(none)'} of ${real.sessionId} (prompt ${entry.id})`);
    // The watchdog (hangAfterMs) must end it; unless the prompt had finished first, then the next prompt meets the hang.
    await within(entry.settled, `prompt ${entry.id} of a hung agent`);
    if (this.continueAfter && pid !== undefined) {
      await until(() => world.processesOf(real)[0] !== pid || world.stateOf(real) !== 'prompting', 'the hung process to be replaced or idle');
      signal(pid, 'SIGCONT');
      world.say(`SIGCONT ${pid}`);
    }
    world.checkAlways();
  }
  toString(): string {
    return `hang(${this.pick}${this.continueAfter ? ', then SIGCONT' : ''})`;
  }
}

/** A CLI that starts leaking memory (100 MB/s), idle or mid-prompt: warden's memory limits replace it, with exit reason memory_exceeded. */
class Leak implements Command {
  constructor(readonly pick: number, readonly midPrompt: boolean) {}
  check(model: Readonly<ChaosModel>): boolean {
    return pickSession(model, undefined, this.pick, ['open']) !== undefined;
  }
  async run(model: ChaosModel, world: ChaosWorld): Promise<void> {
    const { real } = pickSession(model, world, this.pick, ['open'])!;
    world.fault('.fake-fault', real, 'leak');
    const entry = this.midPrompt ? await promptUnderWay(world, real) : undefined;
    const [pid] = world.processesOf(real);
    const heard = world.events.length;
    const sent = signal(pid, 'SIGUSR2');
    world.faults += sent ? 1 : 0;
    world.say(`leak in ${pid ?? '(none)'} of ${real.sessionId}${entry ? ` (prompt ${entry.id})` : ''}`);
    if (entry) await within(entry.settled, `prompt ${entry.id} of a leaking agent`);
    // A process stopped by an earlier hang never handles the signal (nor leaks): then nothing is owed here.
    const stopped = () => pid !== undefined && processState(pid) === 'T';
    // Replaced for its memory (recycled or killed: exit memory_exceeded), unless the session
    // failed first (the intensity) or the process was stopped by an earlier hang.
    if (sent && pid !== undefined) {
      const replaced = () => world.events.slice(heard).some((event) => event.type === 'session.restarting' && event.sessionId === real.sessionId && event.exitKind === 'memory_exceeded');
      await until(() => replaced() || world.stateOf(real) === 'failed' || stopped(), `the leaking process ${pid} of ${real.sessionId} to be replaced with exit memory_exceeded`);
    }
    world.clearFaults(real);
    world.checkAlways();
  }
  toString(): string {
    return `leak(${this.pick}${this.midPrompt ? ', mid-prompt' : ''})`;
  }
}

/** The state letter of `pid` in /proc (`T`: stopped), or undefined when gone. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0];
  } catch {
    return undefined;
  }
}

type Noise = 'garbage' | 'half' | 'huge' | 'close-stdin';

class Misbehave implements Command {
  constructor(readonly pick: number, readonly noise: Noise, readonly midPrompt: boolean) {}
  check(model: Readonly<ChaosModel>): boolean {
    return pickSession(model, undefined, this.pick, ['open']) !== undefined;
  }
  async run(model: ChaosModel, world: ChaosWorld): Promise<void> {
    const { real } = pickSession(model, world, this.pick, ['open'])!;
    world.fault('.fake-fault', real, this.noise);
    const entry = this.midPrompt ? await promptUnderWay(world, real) : undefined;
    const [pid] = world.processesOf(real);
    const sent = signal(pid, 'SIGUSR2');
    world.faults += sent ? 1 : 0;
    world.say(`${this.noise} from ${pid ?? '(none)'} of ${real.sessionId}${entry ? ` (prompt ${entry.id})` : ''}`);
    // Closing stdin shows only at the next write: a prompt makes one, once the CLI has really
    // closed it (the signal is handled asynchronously; a line written just before would be
    // lost unnoticed, which only the hang watchdog can catch).
    // (A process stopped by an earlier hang never handles the signal: then it is the watchdog's.)
    const closed = this.noise === 'close-stdin' && sent && pid !== undefined
      ? await until(() => !existsSync(`/proc/${pid}/fd/0`), `process ${pid} to close its stdin`, 5_000).then(() => true, () => false)
      : false;
    const next = this.noise === 'close-stdin' ? world.prompt(real) : undefined;
    for (const pending of [entry, next]) if (pending) await within(pending.settled, `prompt ${pending.id} after ${this.noise}`);
    // A closed stdin is found by the write that fails, not left to the hang watchdog (off by default in warden acp).
    const exit = next?.outcome && 'error' in next.outcome ? (next.outcome.error.data as { exit?: { kind?: string } } | undefined)?.exit?.kind : undefined;
    if (closed && exit === 'hung') throw new InvariantError(`prompt ${next?.id} to a CLI that closed its stdin was ended only by the hang watchdog`);
    world.clearFaults(real);
    world.checkAlways();
  }
  toString(): string {
    return `${this.noise}(${this.pick}${this.midPrompt ? ', mid-prompt' : ''})`;
  }
}

class CrashLoop implements Command {
  constructor(readonly pick: number) {}
  check(model: Readonly<ChaosModel>): boolean {
    return pickSession(model, undefined, this.pick, ['open']) !== undefined;
  }
  async run(model: ChaosModel, world: ChaosWorld): Promise<void> {
    const chosen = pickSession(model, world, this.pick, ['open'])!;
    const real = chosen.real;
    world.fault('.fake-crash-loop', real);
    const [pid] = world.processesOf(real);
    signal(pid, 'SIGKILL');
    world.faults++;
    world.say(`crash loop in ${real.sessionId} (first kill: ${pid ?? 'none'})`);
    await until(() => world.stateOf(real) === 'failed', `session ${real.sessionId} to fail in a crash loop`);
    chosen.model.status = 'failed';
    world.clearFaults(real);
    world.checkAlways();
  }
  toString(): string {
    return `crashLoop(${this.pick})`;
  }
}

class Reopen implements Command {
  constructor(readonly pick: number) {}
  check(model: Readonly<ChaosModel>): boolean {
    return pickSession(model, undefined, this.pick, ['failed']) !== undefined;
  }
  async run(model: ChaosModel, world: ChaosWorld): Promise<void> {
    const chosen = pickSession(model, world, this.pick, ['failed'])!;
    world.clearFaults(chosen.real);
    await within(world.editor.request('session/resume', { sessionId: chosen.real.sessionId, cwd: chosen.real.cwd, mcpServers: [] }), 'session/resume');
    chosen.model.status = 'open';
    world.say(`resumed ${chosen.real.sessionId}`);
    world.checkAlways();
  }
  toString(): string {
    return `reopen(${this.pick})`;
  }
}

class Cancel implements Command {
  constructor(readonly pick: number) {}
  check(model: Readonly<ChaosModel>): boolean {
    return pickSession(model, undefined, this.pick, ['open']) !== undefined;
  }
  async run(model: ChaosModel, world: ChaosWorld): Promise<void> {
    const { real } = pickSession(model, world, this.pick, ['open'])!;
    world.editor.notify('session/cancel', { sessionId: real.sessionId });
    world.say(`cancel ${real.sessionId}`);
    world.checkAlways();
  }
  toString(): string {
    return `cancel(${this.pick})`;
  }
}

/** A prompt under way, then a cancel and a kill -9 in an order the scheduler picks. */
class CancelRacingCrash implements Command {
  constructor(readonly pick: number, readonly scheduler: fc.Scheduler) {}
  check(model: Readonly<ChaosModel>): boolean {
    return pickSession(model, undefined, this.pick, ['open']) !== undefined;
  }
  async run(model: ChaosModel, world: ChaosWorld): Promise<void> {
    const { real } = pickSession(model, world, this.pick, ['open'])!;
    const entry = await promptUnderWay(world, real);
    const [pid] = world.processesOf(real);
    const order: string[] = [];
    void this.scheduler.schedule(Promise.resolve('cancel'), 'cancel').then(() => {
      order.push('cancel');
      world.editor.notify('session/cancel', { sessionId: real.sessionId });
    });
    void this.scheduler.schedule(Promise.resolve('kill'), 'kill -9').then(() => {
      order.push('kill');
      if (signal(pid, 'SIGKILL')) world.faults++;
    });
    await this.scheduler.waitAll();
    world.say(`${order.join(' then ')} on ${real.sessionId} (pid ${pid ?? 'none'}, prompt ${entry.id})`);
    await within(entry.settled, `prompt ${entry.id} with a cancel racing a crash`);
    const outcome = entry.outcome!;
    if ('result' in outcome) {
      const reason = (outcome.result as { stopReason?: string }).stopReason;
      if (reason !== 'cancelled' && reason !== 'end_turn') throw new InvariantError(`prompt ${entry.id} ended ${reason} after cancel/crash`);
    }
    world.checkAlways();
  }
  toString(): string {
    return `cancelRacingCrash(${this.pick}, ${this.scheduler.toString().replace(/\s+/gu, ' ')})`;
  }
}

class SpawnFailure implements Command {
  constructor(readonly pick: number) {}
  check(): boolean {
    return true;
  }
  async run(model: ChaosModel, world: ChaosWorld): Promise<void> {
    world.setFlakyExecutable(false);
    try {
      // A new session of an agent that cannot start is refused, naming the problem.
      const refused = await within(world.newSession('flaky').then(() => undefined, (error: { rpc?: { code: number; message: string } }) => error.rpc), 'session/new of an unstartable agent');
      if (!refused || refused.code !== -32603) throw new InvariantError(`session/new with an unexecutable agent gave ${JSON.stringify(refused)}, not -32603`);
      // …naming the executable and the fix, in words (it was once a JSON dump of the exit reason).
      if (!refused.message.includes(`"${world.flakyCommand}" is not executable`) || !refused.message.includes('chmod +x') || refused.message.includes('{"')) {
        throw new InvariantError(`the spawn failure is not told clearly: ${refused.message}`);
      }
      world.say(`spawn failure refused: ${refused.message.slice(0, 100)}`);
      // A running session whose agent cannot start again fails after its restarts.
      const victim = pickSession(model, world, this.pick, ['open'], ['flaky']);
      if (victim) {
        const [pid] = world.processesOf(victim.real);
        signal(pid, 'SIGKILL');
        world.faults++;
        world.say(`kill -9 ${pid ?? 'none'} of ${victim.real.sessionId} while its agent cannot start`);
        await until(() => world.stateOf(victim.real) === 'failed', `session ${victim.real.sessionId} to fail when restarts cannot spawn`);
        victim.model.status = 'failed';
      }
    } finally {
      world.setFlakyExecutable(true);
    }
    world.checkAlways();
  }
  toString(): string {
    return `spawnFailure(${this.pick})`;
  }
}

/** Kills a session's agent, stops the host while it restarts, then starts a new host on the journal. */
class HostStopDuringRestart implements Command {
  constructor(readonly pick: number) {}
  check(model: Readonly<ChaosModel>): boolean {
    return pickSession(model, undefined, this.pick, ['open']) !== undefined;
  }
  async run(model: ChaosModel, world: ChaosWorld): Promise<void> {
    const { real } = pickSession(model, world, this.pick, ['open'])!;
    const [pid] = world.processesOf(real);
    signal(pid, 'SIGKILL');
    world.faults++;
    await until(() => world.stateOf(real) !== 'ready' || world.processesOf(real)[0] !== pid, 'the restart to begin', 5_000).catch(() => undefined);
    world.say(`stop host ${world.generation} while ${real.sessionId} restarts (state ${world.stateOf(real)})`);
    await within(world.stopHost(), 'host.stop()');
    world.checkStopped();
    await world.startHost();
    await resumeAll(model, world);
    world.say(`host ${world.generation} resumed ${model.sessions.filter((session) => session.status === 'open').length} sessions`);
    world.checkAlways();
  }
  toString(): string {
    return `hostStopDuringRestart(${this.pick})`;
  }
}

/** After a host restart: every session not closed is resumed on the new host (a failed one too: resuming it starts it again). */
async function resumeAll(model: ChaosModel, world: ChaosWorld): Promise<void> {
    for (const [index, session] of model.sessions.entries()) {
      if (session.status === 'closed') continue;
      const twin = world.sessions[index] as ChaosSession;
      world.clearFaults(twin);
      await within(world.editor.request('session/resume', { sessionId: twin.sessionId, cwd: twin.cwd, mcpServers: [] }), `session/resume of ${twin.sessionId}`);
      session.status = 'open';
    }
}

/**
 * Timing faults in the journal (issue 28): the host is stopped and a new one opens the journal
 * with every read and commit delayed by a seeded random time (or, when they were on, without
 * them), then resumes the open sessions. The steps after it race replays and catch-ups against
 * commits, as a PostgreSQL store does.
 */
class JournalTiming implements Command {
  constructor(readonly seed: number, readonly maxMs: number) {}
  check(): boolean {
    return true;
  }
  async run(model: ChaosModel, world: ChaosWorld): Promise<void> {
    await quiet(model, world);
    await within(world.stopHost(), 'host.stop()');
    world.checkStopped();
    world.journalDelay = world.journalDelay ? undefined : { seed: this.seed, maxMs: this.maxMs };
    world.faults += world.journalDelay ? 1 : 0;
    await world.startHost();
    await resumeAll(model, world);
    world.say(world.journalDelay ? `host ${world.generation}: journal calls delayed up to ${this.maxMs} ms (seed ${this.seed})` : `host ${world.generation}: journal timing faults off`);
    world.checkAlways();
  }
  toString(): string {
    return `journalTiming(${this.seed}, ${this.maxMs})`;
  }
}

class Close implements Command {
  constructor(readonly pick: number) {}
  check(model: Readonly<ChaosModel>): boolean {
    return pickSession(model, undefined, this.pick, ['open', 'failed']) !== undefined;
  }
  async run(model: ChaosModel, world: ChaosWorld): Promise<void> {
    const chosen = pickSession(model, world, this.pick, ['open', 'failed'])!;
    await within(world.editor.request('session/close', { sessionId: chosen.real.sessionId }), 'session/close');
    chosen.model.status = 'closed';
    await until(() => world.processesOf(chosen.real).length === 0, `the process of closed session ${chosen.real.sessionId} to end`);
    world.say(`closed ${chosen.real.sessionId}`);
    world.checkAlways();
  }
  toString(): string {
    return `close(${this.pick})`;
  }
}

const pick = fc.nat({ max: 15 });

/** Every command of the walk, weighted towards prompts and faults. */
export const chaosCommands = [
  fc.constantFrom<ChaosAgent>('claude', 'claude', 'permission', 'flaky').map((agent) => new NewSession(agent)),
  pick.map((at) => new Prompt(at)),
  pick.map((at) => new Prompt(at)),
  fc.constant(new Settle()),
  fc.tuple(pick, fc.constantFrom<KillPoint>('idle', 'mid-prompt', 'mid-permission')).map(([at, when]) => new Kill(at, when)),
  fc.tuple(pick, fc.constantFrom<KillPoint>('mid-prompt', 'mid-permission')).map(([at, when]) => new Kill(at, when)),
  fc.tuple(pick, fc.boolean()).map(([at, resume]) => new Hang(at, resume)),
  fc.tuple(pick, fc.constantFrom<Noise>('garbage', 'half', 'huge', 'close-stdin'), fc.boolean()).map(([at, noise, mid]) => new Misbehave(at, noise, mid)),
  fc.tuple(pick, fc.boolean()).map(([at, mid]) => new Leak(at, mid)),
  pick.map((at) => new CrashLoop(at)),
  pick.map((at) => new Reopen(at)),
  pick.map((at) => new Cancel(at)),
  fc.tuple(pick, fc.scheduler()).map(([at, scheduler]) => new CancelRacingCrash(at, scheduler)),
  pick.map((at) => new SpawnFailure(at)),
  pick.map((at) => new HostStopDuringRestart(at)),
  pick.map((at) => new Close(at)),
  fc.tuple(fc.nat(), fc.integer({ min: 1, max: 25 })).map(([seed, maxMs]) => new JournalTiming(seed, maxMs)),
];

/** The end of every walk: everything settles, the host stops, nothing is left. */
export async function endWalk(model: ChaosModel, world: ChaosWorld): Promise<void> {
  await quiet(model, world);
  await within(world.stopHost(), 'host.stop() at the end');
  world.checkStopped();
}
