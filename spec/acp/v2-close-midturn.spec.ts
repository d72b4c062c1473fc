/**
 * A v2 editor (the SDK 2.4.0 v2 client) that closes its connection while a turn runs, against a
 * real `warden acp` (issue 30): the drain serves the turn to its end, the editor gets its `idle`,
 * warden exits 0, and the session is whole in the journal: the next connection (a new `warden
 * acp` on the same store) resumes it with `replayFrom: {type:"start"}` and gets the turn
 * replayed with the ids it had live, then `replay_complete`, then `idle`; a turn after that
 * works. When the turn outlives the drain timeout (`--drain-timeout`, the agent holding it
 * until cancelled), warden cancels it: the editor still gets `idle` `cancelled` before warden
 * exits 0, and the next connection replays it whole too. Nothing left running.
 */
import { client, ndJsonStream } from '@agentclientprotocol/sdk/experimental/v2';
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { waitUntil } from '../support/processes.js';
import { exitCodeOf, killGroups, stderrOf } from '../support/warden-process.js';
import { spawnWardenByName } from '../support/warden-by-name.js';

const v2Agent = fileURLToPath(new URL('../support/v2-agent.mjs', import.meta.url));

interface Notified {
  readonly sessionId: string;
  readonly update: { readonly sessionUpdate: string; readonly messageId?: string; readonly state?: string; readonly stopReason?: string };
}

describe('ACP v2 editor: the connection closed mid-turn, then resumed by the next one', function () {
  this.timeout(60_000);
  const launched: ChildProcess[] = [];
  let dir: string;

  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-v2-close-')));
  });

  after(async () => {
    await killGroups(launched, { descendants: true });
    rmSync(dir, { recursive: true, force: true });
  });

  /** `warden acp` with `args`, and the SDK v2 client on its stdio, initialized. */
  async function connect(args: readonly string[]) {
    const child = spawnWardenByName(['acp', ...args], dir, launched);
    const stderr = stderrOf(child);
    const exited = exitCodeOf(child);
    const updates: Notified[] = [];
    const app = client({ name: 'v2-close-spec' }).onNotification('session/update', ({ params }) => {
      updates.push(params as unknown as Notified);
    });
    const { agent } = app.connect(ndJsonStream(Writable.toWeb(child.stdin as Writable), Readable.toWeb(child.stdout as Readable) as ReadableStream<Uint8Array>));
    expect((await agent.request('initialize', { protocolVersion: 2, info: { name: 'v2-close-spec', version: '1' }, capabilities: {} })).protocolVersion).to.equal(2);
    return { child, agent, updates, stderr, exited };
  }

  const ofSession = (updates: readonly Notified[], sessionId: string) => updates.filter((entry) => entry.sessionId === sessionId).map((entry) => entry.update);
  const statesOf = (updates: readonly Notified['update'][]) => updates.filter((update) => update.sessionUpdate === 'state_update').map((update) => (update.stopReason ? `${update.state}:${update.stopReason}` : update.state));

  /** Resumes `sessionId` with a replay on a new warden with `args`: the replayed updates (through the state snapshot) and the connection. */
  async function replayOn(args: readonly string[], sessionId: string) {
    const next = await connect(args);
    await next.agent.request('session/resume', { sessionId, cwd: dir, replayFrom: { type: 'start' } });
    await waitUntil(() => statesOf(ofSession(next.updates, sessionId)).length > 0, `the state snapshot (${next.stderr()})`);
    return { next, replay: ofSession(next.updates, sessionId) };
  }

  /**
   * A whole replay: one `replay_complete`, after every replayed message of the turn and the turn's
   * journaled end (`idle` with `turnEnd`'s stop reason), the state snapshot `idle` last (the agent
   * re-opening the session in the new warden may send news, such as its commands, between the two:
   * docs/acp.md, replay markers).
   */
  function expectWholeReplay(replay: readonly Notified['update'][], turnEnd: string): void {
    const kinds = replay.map((update) => update.sessionUpdate);
    expect(kinds.filter((kind) => kind === 'replay_complete')).to.have.length(1);
    const marker = kinds.indexOf('replay_complete');
    const lastMessage = Math.max(kinds.lastIndexOf('user_message_chunk'), kinds.lastIndexOf('agent_message_chunk'));
    expect(lastMessage).to.be.greaterThan(-1).and.lessThan(marker);
    expect(kinds.at(-1)).to.equal('state_update');
    expect(statesOf(replay)).to.deep.equal([`idle:${turnEnd}`, 'idle']);
    const turnEndAt = replay.findIndex((update) => update.sessionUpdate === 'state_update' && statesOf([update])[0] === `idle:${turnEnd}`);
    expect(turnEndAt).to.be.greaterThan(lastMessage).and.lessThan(marker);
  }

  it('the turn runs to its end in the drain (idle end_turn), warden exits 0; the next connection replays it with the live ids, replay_complete, idle; a new turn works', async () => {
    const args = ['--store', join(dir, 'demo.sqlite'), '--agent', 'demo', '--env', 'DEMO_WORD_DELAY_MS=20'];
    const first = await connect(args);
    const active = await first.agent.buildSession(dir).start();
    const { sessionId } = active;
    const ack = await active.prompt('tell me a short story about editors that close too early');
    // The input ends while the turn streams (a first agent chunk came, the turn has not ended): the drain is what finishes it.
    await waitUntil(() => ofSession(first.updates, sessionId).some((update) => update.sessionUpdate === 'agent_message_chunk'), 'the turn to stream');
    expect(statesOf(ofSession(first.updates, sessionId))).to.deep.equal(['running']);
    first.child.stdin?.end();
    expect(await first.exited, first.stderr()).to.equal(0);
    const live = ofSession(first.updates, sessionId);
    expect(statesOf(live)).to.deep.equal(['running', 'idle:end_turn']);
    const liveAgentIds = [...new Set(live.filter((update) => update.sessionUpdate === 'agent_message_chunk').map((update) => update.messageId))];
    expect(liveAgentIds).to.deep.equal([ack.messageId.replace('user-', 'agent-')]);

    const { next, replay } = await replayOn(args, sessionId);
    expectWholeReplay(replay, 'end_turn');
    expect([...new Set(replay.filter((update) => update.sessionUpdate === 'user_message_chunk').map((update) => update.messageId))]).to.deep.equal([ack.messageId]);
    expect([...new Set(replay.filter((update) => update.sessionUpdate === 'agent_message_chunk').map((update) => update.messageId))]).to.deep.equal(liveAgentIds);
    const from = next.updates.length;
    const again = await next.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'and another' }] });
    expect(Number(again.messageId.replace('user-', ''))).to.be.greaterThan(Number(ack.messageId.replace('user-', '')));
    await waitUntil(() => statesOf(ofSession(next.updates.slice(from), sessionId)).includes('idle:end_turn'), 'the next turn');
    next.child.stdin?.end();
    expect(await next.exited).to.equal(0);
  });

  it('a turn that outlives the drain timeout is cancelled: idle cancelled reaches the editor before warden exits 0; the next connection replays it whole', async () => {
    const agent = `acp:${process.execPath} ${v2Agent} --state-dir ${join(dir, 'agent-state')}`;
    const args = ['--store', join(dir, 'slow.sqlite'), '--agent', agent, '--agent-protocol', 'v2', '--drain-timeout', '1'];
    const first = await connect(args);
    const active = await first.agent.buildSession(dir).start();
    const { sessionId } = active;
    const ack = await active.prompt('slow');
    await waitUntil(() => ofSession(first.updates, sessionId).some((update) => update.sessionUpdate === 'agent_message_chunk'), 'the turn to say something');
    first.child.stdin?.end();
    expect(await first.exited, first.stderr()).to.equal(0);
    expect(statesOf(ofSession(first.updates, sessionId))).to.deep.equal(['running', 'idle:cancelled']);

    const { next, replay } = await replayOn(args, sessionId);
    expectWholeReplay(replay, 'cancelled');
    expect(replay.find((update) => update.sessionUpdate === 'user_message_chunk')?.messageId).to.equal(ack.messageId);
    expect(replay.some((update) => update.sessionUpdate === 'agent_message_chunk')).to.equal(true);
    next.child.stdin?.end();
    expect(await next.exited).to.equal(0);
  });
});
