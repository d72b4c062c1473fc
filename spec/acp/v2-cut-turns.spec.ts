/**
 * A turn warden cuts, as an ACP v2 editor sees it (issue 30): never a bare Internal error, always
 * `state_update` `idle` with stop reason `error` and the typed failure record a v1 editor gets as
 * the prompt's error (`data.reason`). The SDK 2.4.0 v2 client drives `warden acp` (found by name
 * on PATH, its own process group) over the fake Claude Code CLI replaying its recorded
 * transcripts: a CLI that hangs (SIGSTOP) past `--hang-after`, a CLI that keeps dying past the
 * restart intensity, and warden itself killed -9 mid-turn, whose cut turn a new warden on the
 * same journal replays to a v2 editor with its end. The crash of an agent is in v2-editor.spec.ts;
 * a lost host (`host_lost`, `peer_lost`) in spec/cluster/v2-routing.spec.ts.
 */
import type { ActiveSession } from '@agentclientprotocol/sdk/experimental/v2';
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAlive, waitUntil } from '../support/processes.js';
import { exitCodeOf, killGroups } from '../support/warden-process.js';
import { spawnWardenByName } from '../support/warden-by-name.js';
import { v2StdioEditor } from '../support/v2-stdio-editor.js';

const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));

interface Notified {
  readonly sessionId: string;
  readonly update: {
    readonly sessionUpdate: string;
    readonly messageId?: string;
    readonly state?: string;
    readonly stopReason?: string;
    readonly error?: { readonly code: number; readonly message: string; readonly data?: { readonly reason?: string; readonly exit?: unknown; readonly [key: string]: unknown } };
  };
}

const launched: ChildProcess[] = [];
let dir: string;
let starts: string;

/** The fake CLIs started so far (each logs its pid and argv at start). */
const startedClis = (): Array<{ pid: number; args: string[] }> => {
  try {
    return readFileSync(starts, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as { pid: number; args: string[] });
  } catch {
    return [];
  }
};

/** `warden acp --agent claude` over the fake CLI, with `args` and the fake's `env`; the SDK v2 client as its editor, initialized. */
async function v2Warden(args: string[], env: Record<string, string>) {
  const fakeEnv = Object.entries({ FAKE_CLAUDE_FIXTURE: 'hello', FAKE_CLAUDE_ARGV_LOG: starts, FAKE_CLAUDE_DELAY_MS: '200', ...env }).flatMap(([key, value]) => ['--env', `${key}=${value}`]);
  const child = spawnWardenByName(['acp', '--agent', 'claude', '--agent-command', fakeClaude, '--store', join(dir, 'journal.sqlite'), ...args, ...fakeEnv], dir, launched);
  child.stderr?.resume();
  const { agent, updates } = await v2StdioEditor<Notified>(child, 'v2-cut-turns-spec');
  return { child, agent, updates };
}

/** The updates of `sessionId`. */
const of = (updates: readonly Notified[], sessionId: string) => updates.filter((entry) => entry.sessionId === sessionId).map((entry) => entry.update);
/** `state` or `state:stopReason` of each `state_update`. */
const statesOf = (updates: ReadonlyArray<Notified['update']>) => updates.filter((update) => update.sessionUpdate === 'state_update').map((update) => (update.stopReason ? `${update.state}:${update.stopReason}` : update.state));
/** The last `idle` among `updates`. */
const lastIdle = (updates: ReadonlyArray<Notified['update']>) => updates.filter((update) => update.sessionUpdate === 'state_update' && update.state === 'idle').at(-1);

/** Waits for the first agent words of `session`'s turn. */
const firstWords = (updates: readonly Notified[], session: ActiveSession) =>
  waitUntil(() => of(updates, session.sessionId).some((update) => update.sessionUpdate === 'agent_message_chunk'), 'the first words', 20_000);

describe('ACP v2 editor: a turn warden cuts ends idle with a typed failure (issue 30)', function () {
  this.timeout(90_000);

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-v2-cut-')));
    starts = join(dir, 'starts.ndjson');
  });

  afterEach(async () => {
    await killGroups(launched, { descendants: true });
    launched.length = 0;
    for (const start of startedClis()) await waitUntil(() => !isAlive(start.pid), `fake claude ${start.pid} gone`, 20_000);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a CLI that hangs (SIGSTOP) mid-turn past --hang-after: idle, stop reason error, data.reason agent_crashed with the exit hung; the next turn ends end_turn', async () => {
    const { agent, updates } = await v2Warden(['--on-crash', 'fail', '--hang-after', '1'], {});
    const session = await agent.buildSession(dir).start();
    const ack = await session.prompt('hello');
    expect(ack.messageId).to.match(/^user-\d+$/u);
    await firstWords(updates, session);
    const frozen = startedClis()[0]?.pid as number;
    process.kill(frozen, 'SIGSTOP');
    await session.readTextUntilIdle();
    await waitUntil(() => lastIdle(of(updates, session.sessionId)) !== undefined, 'the idle recorded');
    const idle = lastIdle(of(updates, session.sessionId));
    expect(idle).to.include({ state: 'idle', stopReason: 'error' });
    expect(idle?.error?.data?.reason).to.equal('agent_crashed');
    expect(JSON.stringify(idle?.error?.data?.exit)).to.contain('hung');
    await waitUntil(() => !isAlive(frozen), 'the hung CLI killed');
    const from = of(updates, session.sessionId).length;
    await session.prompt('hello');
    await session.readTextUntilIdle();
    await waitUntil(() => statesOf(of(updates, session.sessionId).slice(from)).includes('idle:end_turn'), 'the next turn\'s idle');
    expect(statesOf(of(updates, session.sessionId).slice(from))).to.deep.equal(['running', 'idle:end_turn']);
  });

  it('a CLI that keeps dying past the restart intensity while its turn is continued: idle, stop reason error, data.reason session_failed; the session is listed failed', async () => {
    const { agent, updates } = await v2Warden(['--restart-intensity', '1/60', '--max-continuations', '5'], { FAKE_CLAUDE_CRASH_AFTER: '2', FAKE_CLAUDE_CRASH_RESUMED: '1' });
    const session = await agent.buildSession(dir).start();
    await session.prompt('hello');
    await session.readTextUntilIdle();
    await waitUntil(() => lastIdle(of(updates, session.sessionId)) !== undefined, 'the idle recorded');
    const idle = lastIdle(of(updates, session.sessionId));
    expect(idle).to.include({ state: 'idle', stopReason: 'error' });
    // The SDK's v2 client parses the record with v2's schema: the reason reaches it (v2-errors.ts).
    expect(idle?.error?.data?.reason).to.equal('session_failed');
    expect(idle?.error?.data?.restarts).to.equal(1);
    expect(statesOf(of(updates, session.sessionId)).filter((state) => state?.startsWith('idle'))).to.have.length(1);
    const listed = (await agent.request('session/list', {})) as { sessions: Array<{ sessionId: string; _meta?: Record<string, unknown> }> };
    expect(listed.sessions.find((entry) => entry.sessionId === session.sessionId)?._meta?.['acp-warden/state']).to.equal('failed');
  });

  it('warden killed -9 mid-turn: a new warden on the same journal replays the cut turn to a v2 editor (its messageId, its end idle with the record shutdown, replay_complete, then idle, not running); the keyed prompt sent again gets the cut turn\'s record (-32603, data.reason shutdown), nothing inserted; the session takes a new turn', async () => {
    const first = await v2Warden([], {});
    const session = await first.agent.buildSession(dir).start();
    const keyed = { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'hello' }], idempotencyKey: 'cut-by-kill-1' };
    const ack = (await first.agent.request('session/prompt', keyed as never)) as { messageId: string };
    await firstWords(first.updates, session);
    const exited = exitCodeOf(first.child);
    process.kill(-(first.child.pid as number), 'SIGKILL');
    await exited;
    const second = await v2Warden([], {});
    await second.agent.request('session/resume', { sessionId: session.sessionId, cwd: dir, replayFrom: { type: 'start' } } as never);
    await waitUntil(() => statesOf(of(second.updates, session.sessionId)).length > 0, 'the state after the replay');
    const replayed = of(second.updates, session.sessionId);
    const kinds = replayed.map((update) => update.sessionUpdate);
    expect(replayed.filter((update) => update.sessionUpdate === 'user_message_chunk').map((update) => update.messageId), kinds.join(' ')).to.deep.equal([ack.messageId]);
    expect(kinds.filter((kind) => kind === 'replay_complete')).to.have.length(1);
    // The cut turn's end is in the history: idle with its typed failure record, before the marker.
    const replayedIdle = replayed.slice(0, kinds.indexOf('replay_complete')).filter((update) => update.sessionUpdate === 'state_update');
    expect(replayedIdle.map((update) => [update.state, update.stopReason, update.error?.data?.reason])).to.deep.equal([['idle', 'error', 'shutdown']]);
    // The cut turn is over: right after the history, the session's state is idle, not running
    // (the resumed CLI's own updates, its commands say, may follow).
    expect(kinds[kinds.indexOf('replay_complete') + 1], kinds.join(' ')).to.equal('state_update');
    expect(statesOf(replayed)).to.deep.equal(['idle:error', 'idle']);
    const retried = await second.agent.request('session/prompt', keyed as never).then(
      () => undefined,
      (error: { code: number; data?: { reason?: string } }) => error,
    );
    expect(retried?.code).to.equal(-32603);
    expect(retried?.data?.reason).to.equal('shutdown');
    // A new prompt runs in the same session, on a CLI the new warden resumed.
    const from = of(second.updates, session.sessionId).length;
    const next = (await second.agent.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'hello' }] } as never)) as { messageId: string };
    expect(next.messageId).to.not.equal(ack.messageId);
    await waitUntil(() => statesOf(of(second.updates, session.sessionId).slice(from)).includes('idle:end_turn'), 'the new turn\'s idle', 30_000);
    expect(of(second.updates, session.sessionId).slice(from).filter((update) => update.sessionUpdate === 'user_message').map((update) => update.messageId)).to.deep.equal([next.messageId]);
  });
});
