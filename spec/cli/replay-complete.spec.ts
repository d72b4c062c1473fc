/**
 * A replay's end, as an ACP v1 client reads it (issue 30, "complete replays"): the answer of a
 * `session/load` (and of a re-attach from a cursor in `warden serve`) carries
 * `_meta["acp-warden/replayComplete"] = { seq }`, the last journal entry of the history it
 * replayed, and comes after every replayed update; a `session/resume` that replays nothing
 * has no marker. Through a real `warden acp` (the host's own replay) and a real `warden serve`
 * (each connection's replay, the hub's).
 */
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WebSocket } from 'ws';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { writeLongSession } from '../support/long-session.js';
import { PipeEditor, type WireMessage } from '../support/pipe-editor.js';
import { waitUntil } from '../support/processes.js';
import { cursorKeys, initializeParams, seqUpdatesOf, socketClient, startServe, type Frame } from '../support/serve-daemon.js';
import { killGroups } from '../support/warden-process.js';

const marker = 'acp-warden/replayComplete';

/** The seq of the journal's last entry of `sessionId`, whatever its kind. */
function journalHead(store: string, sessionId: string): number {
  const journal = sqliteJournal(store);
  try {
    return Math.max(0, ...journal.entries(sessionId).map(({ seq }) => seq));
  } finally {
    journal.close();
  }
}

/** The journal seqs of `sessionId`'s updates among `messages`, in order. */
function seqsOf(messages: readonly WireMessage[], sessionId: string): number[] {
  return messages.flatMap((message) => (message.method === 'session/update' && message.params?.sessionId === sessionId && typeof message.params?._meta?.[cursorKeys.seq] === 'number' ? [message.params._meta[cursorKeys.seq] as number] : []));
}

/**
 * A whole replay: every update a client saw live before it came again before the answer, the
 * marker names a journal entry at or after the last of them (and no later than the journal's
 * head), and nothing at or before the marker comes after the answer. (What came before the
 * answer after the marker is live: the agent's own news while the load re-opened it.)
 */
function expectWholeReplay(mark: { seq: number } | undefined, seenLive: readonly number[], replayed: readonly number[], afterAnswer: readonly number[], head: number): void {
  expect(mark, 'the answer carries the marker').to.be.an('object');
  const missing = seenLive.filter((seq) => !replayed.includes(seq));
  expect(missing, 'history left out of the replay').to.deep.equal([]);
  expect(mark?.seq).to.be.at.least(Math.max(...seenLive));
  expect(mark?.seq).to.be.at.most(head);
  expect(afterAnswer.filter((seq) => seq <= (mark?.seq ?? 0)), 'history after the answer').to.deep.equal([]);
}

describe('replay completeness for ACP v1 clients: the marker on the answer of a replay', function () {
  this.timeout(120_000);
  let work: string;
  const launched: ChildProcess[] = [];
  const sockets: WebSocket[] = [];

  beforeEach(() => {
    work = realpathSync(mkdtempSync(join(tmpdir(), 'warden-replay-complete-')));
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await killGroups(launched.splice(0), { descendants: true });
    await PipeEditor.closeAll();
    rmSync(work, { recursive: true, force: true });
  });

  it('warden acp: session/load answers after the whole history, naming the last entry it replayed; session/resume has no marker', async () => {
    const store = join(work, 'journal.sqlite');
    const order: WireMessage[] = [];
    const editor = PipeEditor.launch({ args: ['--agent', 'demo', '--store', store], onMessage: (message) => order.push(message) });
    expect((await editor.request('initialize', { protocolVersion: 1, clientCapabilities: {} })).result).to.not.equal(undefined);
    const sessionId = (await editor.request('session/new', { cwd: work, mcpServers: [] })).result?.sessionId as string;
    const turn = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(turn.result?.stopReason).to.equal('end_turn');
    await editor.close();
    const seenLive = seqsOf(order, sessionId);
    expect(seenLive.length).to.be.greaterThan(2);

    // A new warden on the same journal: its load replays what the first one journaled.
    order.length = 0;
    const again = PipeEditor.launch({ args: ['--agent', 'demo', '--store', store], onMessage: (message) => order.push(message) });
    await again.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const loaded = await again.request('session/load', { sessionId, cwd: work, mcpServers: [] }, 'load');
    expect(loaded.error, JSON.stringify(loaded.error)).to.equal(undefined);
    const answerAt = order.findIndex((message) => message.id === 'load');
    const replayed = seqsOf(order.slice(0, answerAt), sessionId);
    const mark = markerOf(loaded.result) as { seq: number };
    expectWholeReplay(mark, seenLive, replayed, seqsOf(order.slice(answerAt + 1), sessionId), journalHead(store, sessionId));

    const resumed = await again.request('session/resume', { sessionId, cwd: work, mcpServers: [] }, 'resume');
    expect(resumed.error, JSON.stringify(resumed.error)).to.equal(undefined);
    expect(markerOf(resumed.result), 'a resume replays nothing: no marker').to.equal(undefined);
  });

  it('warden acp: a history of 20,000 updates (10 MB) read by an editor that stops reading for 2 s midway: the answer comes after all of it, its marker naming the last', async () => {
    const store = join(work, 'journal.sqlite');
    const count = 20_000;
    const sessionId = writeLongSession(store, work, count, 512);
    const history = journalHead(store, sessionId);
    const seqs: number[] = [];
    let answeredAfter = -1;
    let answer: WireMessage | undefined;
    const editor = PipeEditor.launch({
      args: ['--agent', 'demo', '--store', store],
      onMessage: (message) => {
        if (message.method === 'session/update' && message.params?.sessionId === sessionId) seqs.push(message.params?._meta?.[cursorKeys.seq] as number);
        else if (message.id === 'load') {
          answer = message;
          answeredAfter = seqs.length;
        }
      },
    });
    await editor.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    editor.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 'load', method: 'session/load', params: { sessionId, cwd: work, mcpServers: [] } }));
    await waitUntil(() => seqs.length >= count / 4, 'a quarter of the history', 60_000);
    editor.pauseReading();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    editor.resumeReading();
    await waitUntil(() => answer !== undefined, 'the load answer', 120_000);
    expect(answer?.error, JSON.stringify(answer?.error)).to.equal(undefined);
    // The whole history before the answer, its marker naming its last entry; what came after that (the agent re-opening it) is live news.
    expect(seqs.slice(0, answeredAfter).filter((seq) => seq <= history), 'the history, whole, before the answer').to.have.length(count);
    expect(markerOf(answer?.result)).to.deep.equal({ seq: history });
    expect(seqs.slice(answeredAfter).filter((seq) => seq <= history), 'history after the answer').to.deep.equal([]);
  });

  it('warden serve: a load replays to its marker; a re-attach from the last seq seen replays nothing and says so; a resume without a cursor has no marker', async () => {
    const store = join(work, 'journal.sqlite');
    const daemon = await startServe(work, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', store], launched);
    const first = await socketClient(daemon, sockets);
    await first.request(1, 'initialize', initializeParams('first'));
    const sessionId = (await first.request(2, 'session/new', { cwd: work, mcpServers: [] })).result?.sessionId as string;
    expect((await first.request(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] })).result?.stopReason).to.equal('end_turn');

    const second = await socketClient(daemon, sockets);
    await second.request(1, 'initialize', initializeParams('second'));
    const loaded = await second.request(2, 'session/load', { sessionId, cwd: work, mcpServers: [] });
    expect(loaded.error, JSON.stringify(loaded.error)).to.equal(undefined);
    const answerAt = second.frames.findIndex((frame) => frame.id === 2 && frame.method === undefined);
    const history = seqUpdatesOf(second.frames.slice(0, answerAt), sessionId);
    const mark = markerOf(loaded.result) as { seq: number };
    const seenLive = seqUpdatesOf(first.frames, sessionId).flatMap((update) => (update.seq === undefined ? [] : [update.seq]));
    const after = seqUpdatesOf(second.frames.slice(answerAt + 1), sessionId).flatMap((update) => (update.seq === undefined ? [] : [update.seq]));
    expectWholeReplay(mark, seenLive, history.flatMap((update) => (update.seq === undefined ? [] : [update.seq])), after, journalHead(store, sessionId));

    const third = await socketClient(daemon, sockets);
    await third.request(1, 'initialize', initializeParams('third'));
    const seen = mark.seq;
    const reattached = await third.request(2, 'session/resume', { sessionId, cwd: work, mcpServers: [], _meta: { [cursorKeys.after]: seen } });
    expect(reattached.error, JSON.stringify(reattached.error)).to.equal(undefined);
    expect(seqUpdatesOf(framesBefore(third.frames, 2), sessionId), 'nothing after the cursor').to.deep.equal([]);
    expect(markerOf(reattached.result), 'an empty replay is complete too').to.deep.equal({ seq: seen });

    const fourth = await socketClient(daemon, sockets);
    await fourth.request(1, 'initialize', initializeParams('fourth'));
    const resumed = await fourth.request(2, 'session/resume', { sessionId, cwd: work, mcpServers: [] });
    expect(resumed.error, JSON.stringify(resumed.error)).to.equal(undefined);
    expect(markerOf(resumed.result), 'no replay asked: no marker').to.equal(undefined);
  });
});

/** The replay marker of an answer's result, if any. */
function markerOf(result: unknown): unknown {
  return ((result as { _meta?: Record<string, unknown> } | undefined)?._meta ?? {})[marker];
}

/** The messages a client got before the answer with `id`. */
function framesBefore(frames: readonly Frame[], id: number): Frame[] {
  const at = frames.findIndex((frame) => frame.id === id && frame.method === undefined);
  return at < 0 ? [...frames] : frames.slice(0, at);
}
