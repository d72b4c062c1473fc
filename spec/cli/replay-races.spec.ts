/**
 * What comes during a long `session/load` replay through a real `warden acp --store FILE`:
 * a `session/delete` or `session/close` of that session is not undone by the load (it answers
 * the interruption, the session stays gone or closed), and a second load of a session that is
 * not running waits for the first one's answer (a refusal by the agent is not turned into a
 * success). The history is long (20,000 updates, 40 replay pages): the editor asks while the
 * replay is under way, and each test checks that it was.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { writeLongSession } from '../support/long-session.js';
import { PipeEditor, pipeEditorWorld, type WireMessage } from '../support/pipe-editor.js';
import { waitUntil } from '../support/processes.js';

const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const updates = 20_000;

describe('warden acp: requests that come during a session/load replay', function () {
  this.timeout(240_000);
  const world = pipeEditorWorld('warden-replay-races-', { claude: fakeClaude });

  /** Launches warden with an editor that counts the replayed updates of `sessionId` and keeps every answer. */
  function launch(sessionId: string, args: readonly string[]) {
    const answers = new Map<string | number, { message: WireMessage; replayedBefore: number }>();
    // Replayed history chunks the editor has seen, over every load.
    const seen = { replayed: 0 };
    // What to do when the editor has seen so many updates of the session.
    const onReplay: Array<{ at: number; act: () => void }> = [];
    world.editor = PipeEditor.launch({
      args,
      binDir: world.bin.dir,
      onMessage: (message) => {
        const text = message.params?.update?.content?.text as string | undefined;
        // The history's chunks ('#<n> …'); notices and the agent's own updates are not counted.
        if (message.method === 'session/update' && message.params?.sessionId === sessionId && text?.startsWith('#')) {
          seen.replayed++;
          for (const step of onReplay.filter((entry) => entry.at === seen.replayed)) step.act();
        } else if (message.method === undefined && message.id !== undefined && message.id !== null) {
          answers.set(message.id, { message, replayedBefore: seen.replayed });
        }
      },
    });
    const answered = async (id: string | number) => {
      await waitUntil(() => answers.has(id) || !(world.editor as PipeEditor).running, `the answer to ${id} (seen ${seen.replayed} updates; answered ${[...answers.keys()].join(', ')})`, 180_000);
      const answer = answers.get(id);
      expect(answer, `warden exited:\n${(world.editor as PipeEditor).stderr}`).to.not.equal(undefined);
      return answer as { message: WireMessage; replayedBefore: number };
    };
    const send = (id: string | number, method: string, params: unknown) => (world.editor as PipeEditor).writeLine(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return { answered, send, seen, onReplay };
  }

  async function initialize(wire: ReturnType<typeof launch>) {
    wire.send('init', 'initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'replay-races', version: '1' } });
    expect((await wire.answered('init')).message.error).to.equal(undefined);
  }

  it('session/delete during the replay: the load answers -32002 (not success), the session is not opened again, and it stays out of session/list', async () => {
    // As for the close below: an attempt where the delete was answered only after the whole
    // replay (this process starved of CPU) proves nothing about the race; set up again, at most 3 times.
    for (let attempt = 1; ; attempt++) {
      // A session of its own per attempt (an attempt set up again must not meet the last one's).
      const sessionId = writeLongSession(world.store, world.dir, updates, 1024, { agent: 'demo', sessionId: `long-${updates}-${attempt}` });
      const wire = launch(sessionId, ['--agent', 'demo', '--store', world.store, '--env', 'DEMO_WORD_DELAY_MS=0']);
      await initialize(wire);
      wire.onReplay.push({ at: 1, act: () => wire.send('delete', 'session/delete', { sessionId }) });
      wire.send('load', 'session/load', { sessionId, cwd: world.dir, mcpServers: [] });
      const deleted = await wire.answered('delete');
      expect(deleted.message.error).to.equal(undefined);
      if (deleted.replayedBefore >= updates) {
        const late = await wire.answered('load');
        expect([undefined, -32002], JSON.stringify(late.message)).to.include(late.message.error?.code);
        expect(attempt, 'the delete was answered during the replay in none of 3 attempts').to.be.below(3);
        await (world.editor as PipeEditor).close();
        continue;
      }
      const load = await wire.answered('load');
      expect(load.message.error?.code, JSON.stringify(load.message)).to.equal(-32002);
      wire.send('prompt', 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'still there?' }] });
      expect((await wire.answered('prompt')).message.error?.code).to.equal(-32002);
      wire.send('list', 'session/list', {});
      const listed = (await wire.answered('list')).message.result?.sessions as Array<{ sessionId: string }>;
      expect(listed.map((session) => session.sessionId)).to.not.include(sessionId);
      return;
    }
  });

  it('session/close during the replay of a second load of a running session: the load answers -32603 "closed while it was being loaded", the session is not opened again', async () => {
    // The close is read during the replay only while warden's stdout is not backed up: this
    // process, starved of CPU (a loaded machine, other test workers), reads slowly, warden stops
    // reading stdin until its stdout drains (flow control), and the close may then be answered
    // after the whole replay. Such an attempt proves nothing about the race: it is set up again,
    // with a fresh warden and session, at most three times.
    for (let attempt = 1; ; attempt++) {
      // A session of its own per attempt (an attempt set up again must not meet the last one's).
      const sessionId = writeLongSession(world.store, world.dir, updates, 1024, { agent: 'demo', sessionId: `long-${updates}-${attempt}` });
      const wire = launch(sessionId, ['--agent', 'demo', '--store', world.store, '--env', 'DEMO_WORD_DELAY_MS=0']);
      await initialize(wire);
      wire.send('load', 'session/load', { sessionId, cwd: world.dir, mcpServers: [] });
      expect((await wire.answered('load')).message.error).to.equal(undefined);
      // Well inside the second replay (the first load's answer may be followed by an update or two of the agent's).
      wire.onReplay.push({ at: wire.seen.replayed + 100, act: () => wire.send('close', 'session/close', { sessionId }) });
      wire.send('again', 'session/load', { sessionId, cwd: world.dir, mcpServers: [] });
      const closed = await wire.answered('close');
      expect(closed.message.error, JSON.stringify(closed.message)).to.equal(undefined);
      expect(closed.replayedBefore).to.be.above(updates);
      if (closed.replayedBefore >= 2 * updates) {
        // Answered after the replay: whichever order warden saw, the load's answer is one of the two it may give.
        const late = await wire.answered('again');
        expect([undefined, -32603], JSON.stringify(late.message)).to.include(late.message.error?.code);
        expect(attempt, 'the close was answered during the replay in none of 3 attempts').to.be.below(3);
        await (world.editor as PipeEditor).close();
        continue;
      }
      const again = await wire.answered('again');
      expect(again.message.error?.code, JSON.stringify(again.message)).to.equal(-32603);
      expect(again.message.error?.message).to.contain(`session ${sessionId} was closed while it was being loaded`);
      expect(again.message.error?.data).to.deep.include({ sessionId, reason: 'session_closed' });
      wire.send('prompt', 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'still there?' }] });
      expect((await wire.answered('prompt')).message.error?.code).to.equal(-32002);
      // The journal says closed, not open again.
      wire.send('list', 'session/list', {});
      const listed = (await wire.answered('list')).message.result?.sessions as Array<{ sessionId: string; _meta: Record<string, unknown> }>;
      expect(listed.find((session) => session.sessionId === sessionId)?._meta['acp-warden/state']).to.equal('closed');
      return;
    }
  });

  it('session/close, then at once session/load (the close still on its way to the agent): the load waits for the close, then replays and opens the session again', async () => {
    const sessionId = writeLongSession(world.store, world.dir, updates, 1024);
    const wire = launch(sessionId, ['--agent', 'demo', '--store', world.store, '--env', 'DEMO_WORD_DELAY_MS=0']);
    await initialize(wire);
    wire.send('load', 'session/load', { sessionId, cwd: world.dir, mcpServers: [] });
    expect((await wire.answered('load')).message.error).to.equal(undefined);
    // One write: warden reads both before the agent can answer the close.
    const line = (id: string, method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
    (world.editor as PipeEditor).writeLine(`${line('close', 'session/close', { sessionId })}\n${line('again', 'session/load', { sessionId, cwd: world.dir, mcpServers: [] })}`);
    const closed = await wire.answered('close');
    expect(closed.message.error).to.equal(undefined);
    expect(closed.replayedBefore, 'the close was answered before the second replay').to.equal(updates);
    const again = await wire.answered('again');
    expect(again.message.error, JSON.stringify(again.message)).to.equal(undefined);
    expect(again.replayedBefore).to.equal(2 * updates);
    wire.send('prompt', 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'open again?' }] });
    expect((await wire.answered('prompt')).message.result?.stopReason).to.equal('end_turn');
  });

  it('two loads of a Claude session not running (Claude Code found on PATH), its CLI crashing at every start: the second waits for the first, and both answer the failure', async () => {
    const few = 10;
    const sessionId = writeLongSession(world.store, world.dir, few, 1024, { agent: 'claude', resume: { claudeSessionId: randomUUID() } });
    const wire = launch(sessionId, ['--agent', 'claude', '--store', world.store, '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', 'FAKE_CLAUDE_CRASH_ALWAYS=1']);
    await initialize(wire);
    // One write: warden reads both before any CLI could start.
    const load = (id: string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'session/load', params: { sessionId, cwd: world.dir, mcpServers: [] } });
    (world.editor as PipeEditor).writeLine(`${load('first')}\n${load('second')}`);
    const first = await wire.answered('first');
    expect(first.message.error, JSON.stringify(first.message)).to.not.equal(undefined);
    const second = await wire.answered('second');
    expect(second.message.error, JSON.stringify(second.message)).to.not.equal(undefined);
    // The second replayed the history after the first's answer (the editor saw it twice before it).
    expect(second.replayedBefore).to.equal(2 * few);
  });
});
