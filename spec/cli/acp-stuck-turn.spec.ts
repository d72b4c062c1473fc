/**
 * A turn cancelled while its CLI is frozen (SIGSTOP), end to end over real stdio: what the
 * soak found (bench/soak, `--hang-after 2`: one prompt never settled in 586 s). The fake
 * Claude Code asks a permission for a Bash call (its `tool_use` printed: a tool "runs"); the
 * editor freezes the CLI right then, answers the permission (allowed, `cancelled`, or not at
 * all) and cancels the turn. The frozen CLI owes the cancelled turn's end: the watchdog must
 * catch it (killed as hung, restarted), and every prompt gets an outcome, none a hang. The
 * second part lets the cancel grace run out first (`--hang-after` longer than the grace): the
 * next prompt then reaches the adapter while the old turn is still in flight there. And the
 * editor going away meanwhile: warden exits at once (the soak's warden did not within 30 s:
 * the dropped prompt held its drain).
 */
import { client, methods } from '@agentclientprotocol/sdk';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAlive, waitUntil } from '../support/processes.js';
import { binDirectory } from '../support/path-editor.js';
import { connectOverStdio, exitCodeOf, killGroups, stderrOf } from '../support/warden-process.js';

const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));

/** How the editor answers the permission asked while the CLI is frozen. */
type Answer = 'allow' | 'cancelled' | 'none';

interface Warden {
  request<T = Record<string, unknown>>(method: string, params: unknown): Promise<T>;
  notify(method: string, params: unknown): Promise<void>;
  /** The permission was asked (and the CLI frozen). */
  readonly asked: Promise<void>;
  /** The editor sent `session/cancel`: a `cancelled` answer may go now. */
  cancelSent(): void;
  close(): Promise<number | null>;
  stderr(): string;
}

const launched: ChildProcess[] = [];

function startsIn(log: string): Array<{ pid: number }> {
  try {
    return readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as { pid: number });
  } catch {
    return [];
  }
}

/** How many prompts the journal holds: a prompt is journaled when its turn starts, as it goes to the agent. */
function promptsJournaled(store: string): number {
  const db = new Database(store, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare(`select count(*) as n from entries where entry like '%"kind":"prompt"%'`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** warden's log (`--log-file`), or nothing yet. */
function logOf(dir: string): string {
  try {
    return readFileSync(join(dir, 'warden.log'), 'utf8');
  } catch {
    return '';
  }
}

/** warden acp with the fake Claude Code; its editor freezes the CLI on the first permission request and answers it as `answer` says. */
async function launch(args: string[], argvLog: string, answer: Answer): Promise<Warden> {
  // As an editor launches it: the bare `warden` on PATH, and `claude` (the fake CLI) found there too.
  const bin = binDirectory(dirname(argvLog), { claude: fakeClaude });
  const child = spawn('warden', ['acp', '--agent', 'claude', ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` },
  });
  launched.push(child);
  const stderr = stderrOf(child);
  let asked!: () => void;
  const askedPromise = new Promise<void>((resolve) => (asked = resolve));
  let cancelSent!: () => void;
  const cancelled = new Promise<void>((resolve) => (cancelSent = resolve));
  let frozen = false;
  const app = client({ name: 'stuck-turn-editor' })
    .onNotification(methods.client.session.update, () => undefined)
    .onRequest(methods.client.session.requestPermission, async ({ params }) => {
      if (!frozen) {
        frozen = true;
        // The CLI printed its request and waits for the answer: frozen now, it reads nothing more.
        process.kill(startsIn(argvLog)[0]?.pid as number, 'SIGSTOP');
        asked();
        if (answer === 'none') return new Promise<never>(() => undefined);
        if (answer === 'cancelled') {
          await cancelled;
          return { outcome: { outcome: 'cancelled' as const } };
        }
      }
      const allow = params.options.find((option) => option.kind === 'allow_once');
      return { outcome: { outcome: 'selected' as const, optionId: allow?.optionId ?? 'allow' } };
    });
  const agent = connectOverStdio(app, child) as ReturnType<typeof connectOverStdio> & { notify(method: string, params: unknown): Promise<void> };
  const exited = exitCodeOf(child);
  const warden: Warden = {
    request: (method, params) => agent.request(method, params) as Promise<never>,
    notify: (method, params) => agent.notify(method, params),
    asked: askedPromise,
    cancelSent,
    async close() {
      child.stdin?.end();
      return exited;
    },
    stderr,
  };
  await warden.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'stuck-turn-editor', version: '1' } });
  return warden;
}

/** The outcome of a prompt: its stop reason, or its error's reason. */
async function outcomeOf(promise: Promise<{ stopReason: string }>): Promise<string> {
  return promise.then(
    (result) => result.stopReason,
    (error: { data?: { reason?: string }; message?: string }) => `error: ${error.data?.reason ?? error.message}`,
  );
}

/** A promise that fails naming `what` after `ms`: a hang is a failure, never a mocha timeout. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no outcome within ${ms} ms (a hang)`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('warden acp: a turn cancelled while its CLI is frozen (the soak\'s stuck turn)', function () {
  this.timeout(120_000);
  let dir: string;
  let argvLog: string;

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-stuck-')));
    argvLog = join(dir, 'starts.ndjson');
  });

  afterEach(async () => {
    // A frozen CLI left by a failing run: SIGKILL takes a stopped process too.
    for (const start of startsIn(argvLog)) {
      try {
        process.kill(start.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await killGroups(launched);
    for (const start of startsIn(argvLog)) await waitUntil(() => !isAlive(start.pid), `fake claude ${start.pid} to be gone`, 20_000);
    rmSync(dir, { recursive: true, force: true });
  });

  /** The soak's sequence: a prompt; permission asked, CLI frozen, the permission answered `answer`; a cancel; the next prompt. */
  async function frozenThenCancelled(hangAfter: string, answer: Answer): Promise<void> {
    const warden = await launch(['--store', join(dir, 'journal.sqlite'), '--hang-after', hangAfter, '--log-file', join(dir, 'warden.log'), '--env', 'FAKE_CLAUDE_FIXTURE=tool-bash-permission-partial', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`, '--env', 'FAKE_CLAUDE_LOOP=1'], argvLog, answer);
    const { sessionId } = await warden.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const first = outcomeOf(warden.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'write the file' }] }));
    await warden.asked;
    const frozen = startsIn(argvLog)[0]?.pid as number;
    await warden.notify(methods.agent.session.cancel, { sessionId });
    warden.cancelSent();
    // ACP: a cancelled prompt ends `cancelled`, whatever ended it (the grace, the watchdog's kill).
    expect(await within(first, 60_000, 'the cancelled prompt')).to.equal('cancelled');
    const second = outcomeOf(warden.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'write the file' }] }));
    await within(waitUntil(() => !isAlive(frozen), 'the frozen CLI to be killed by the watchdog', 60_000), 65_000, 'the watchdog');
    await waitUntil(() => /hung \(no output for/u.test(logOf(dir)), 'warden to log the CLI killed as hung', 20_000);
    // The next prompt gets an outcome: answered by the restarted CLI (or failed naming the crash, if it reached the frozen one).
    expect(await within(second, 60_000, 'the next prompt')).to.be.oneOf(['end_turn', 'error: agent_crashed']);
    const third = await within(outcomeOf(warden.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'write the file' }] })), 60_000, 'a prompt after the recovery');
    expect(third).to.equal('end_turn');
    expect(startsIn(argvLog).length).to.be.greaterThan(1);
    expect(await within(warden.close(), 30_000, 'warden exiting after stdin closed')).to.equal(0);
  }

  it('the editor goes away while the CLI is frozen in a turn (its permission asked): warden still exits 0, the frozen CLI killed', async () => {
    const warden = await launch(['--store', join(dir, 'journal.sqlite'), '--hang-after', '1', '--log-file', join(dir, 'warden.log'), '--env', 'FAKE_CLAUDE_FIXTURE=tool-bash-permission-partial', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`], argvLog, 'none');
    const { sessionId } = await warden.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    void outcomeOf(warden.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'write the file' }] }));
    await warden.asked;
    const frozen = startsIn(argvLog)[0]?.pid as number;
    expect(await within(warden.close(), 30_000, 'warden exiting after stdin closed')).to.equal(0);
    expect(isAlive(frozen)).to.equal(false);
  });

  it('the soak\'s sequence, then the editor goes away while the next prompt waits for the frozen CLI (--hang-after 9): every prompt gets an outcome, warden exits 0 well within 30 s', async () => {
    const warden = await launch(['--store', join(dir, 'journal.sqlite'), '--hang-after', '9', '--log-file', join(dir, 'warden.log'), '--env', 'FAKE_CLAUDE_FIXTURE=tool-bash-permission-partial', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`], argvLog, 'allow');
    const { sessionId } = await warden.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const first = outcomeOf(warden.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'write the file' }] }));
    await warden.asked;
    await warden.notify(methods.agent.session.cancel, { sessionId });
    expect(await within(first, 60_000, 'the cancelled prompt')).to.equal('cancelled');
    const second = outcomeOf(warden.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'write the file' }] }));
    const frozen = startsIn(argvLog)[0]?.pid as number;
    // Its turn started: it went to the adapter, whose CLI is still in the cancelled turn.
    await waitUntil(() => promptsJournaled(join(dir, 'journal.sqlite')) === 2, 'the second prompt to start its turn', 20_000);
    // Before the fix the second prompt was dropped by the adapter: warden waited out its 30 s drain for it (34 s in all).
    expect(await within(warden.close(), 20_000, 'warden exiting after stdin closed')).to.equal(0);
    expect(await within(second, 1000, 'the second prompt')).to.be.a('string');
    expect(isAlive(frozen)).to.equal(false);
  });

  describe('the watchdog fires before the cancel grace ends (--hang-after 1, grace 5 s)', () => {
    it('permission allowed, then cancel: the frozen CLI is killed as hung, the next prompts are answered', async () => {
      await frozenThenCancelled('1', 'allow');
    });
    it('permission answered `cancelled` after the cancel: the same', async () => {
      await frozenThenCancelled('1', 'cancelled');
    });
    it('permission never answered by the editor (warden cancels it): the same', async () => {
      await frozenThenCancelled('1', 'none');
    });
  });

  describe('the cancel grace ends first (--hang-after 9, grace 5 s): the next prompt reaches the adapter while the old turn is in flight', () => {
    it('permission allowed, then cancel: the next prompt is not lost', async () => {
      await frozenThenCancelled('9', 'allow');
    });
    it('permission never answered by the editor: the next prompt is not lost', async () => {
      await frozenThenCancelled('9', 'none');
    });
  });
});
