/**
 * Delivery through a cursor, through a real `warden acp --store FILE` and agents found on
 * PATH: an editor that reads slowly never holds a session (nor its agent, nor another
 * session's agent) back; the journal is the buffer. Every `session/update` carries its
 * journal sequence number in `_meta["acp-warden/seq"]`, live and replayed alike, and the
 * editor gets each journaled update once, in that order, with no gap and none lost.
 */
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { waitUntil } from '../support/processes.js';
import { writeLongSession } from '../support/long-session.js';
import { openSession, PipeEditor, pipeEditorWorld, type LaunchOptions, type WireMessage } from '../support/pipe-editor.js';

const streamAgent = fileURLToPath(new URL('../support/stream-agent.mjs', import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const SEQ = 'acp-warden/seq';

/** Reads the store warden writes (WAL: a reader does not disturb the writer). */
function journalOf(store: string) {
  const db = new Database(store, { readonly: true, fileMustExist: true });
  return {
    stops: (sessionId: string) => (db.prepare("SELECT COUNT(*) AS n FROM entries WHERE session_key = (SELECT key FROM sessions WHERE session_id = ?) AND json_extract(entry, '$.kind') = 'stop'").get(sessionId) as { n: number }).n,
    seqsOf: (sessionId: string, kind: string) =>
      (db.prepare("SELECT seq FROM entries WHERE session_key = (SELECT key FROM sessions WHERE session_id = ?) AND json_extract(entry, '$.kind') = ? ORDER BY seq").all(sessionId, kind) as Array<{ seq: number }>).map((row) => row.seq),
    close: () => db.close(),
  };
}

/** What an editor saw of one session: the updates' `#index` texts and seqs, and after how many updates each answer came. */
class SessionLog {
  readonly indexes: number[] = [];
  readonly seqs: number[] = [];
  readonly kinds: string[] = [];
  readonly answeredAfter = new Map<string | number, number>();
}

function recorder(logs: Map<string, SessionLog>, answers: Map<string | number, { message: WireMessage; sessionId: string | undefined }>, sessionOfRequest: Map<string | number, string>) {
  return (message: WireMessage) => {
    if (message.method === 'session/update') {
      const sessionId = message.params?.sessionId as string;
      let log = logs.get(sessionId);
      if (!log) logs.set(sessionId, (log = new SessionLog()));
      const text = message.params?.update?.content?.text as string | undefined;
      if (text?.startsWith('#')) log.indexes.push(Number(text.slice(1, text.indexOf(' '))));
      log.seqs.push(message.params?._meta?.[SEQ] as number);
      log.kinds.push(message.params?.update?.sessionUpdate as string);
    } else if (message.method === undefined && message.id !== undefined && message.id !== null) {
      const sessionId = sessionOfRequest.get(message.id);
      answers.set(message.id, { message, sessionId });
      const log = sessionId ? logs.get(sessionId) : undefined;
      if (log) log.answeredAfter.set(message.id, log.indexes.length);
    }
  };
}

const increasing = (values: readonly number[]) => values.every((value, index) => typeof value === 'number' && (index === 0 || value > (values[index - 1] as number)));

describe('warden acp: delivery through a cursor (the journal is the buffer)', function () {
  this.timeout(300_000);
  const world = pipeEditorWorld('warden-cursor-', { 'stream-agent': streamAgent });
  const launch = (options: LaunchOptions) => (world.editor = PipeEditor.launch(options));

  it('an editor that reads nothing while two sessions on two agents stream 60 MB: both turns end meanwhile, then every update arrives once, in seq order, no gaps, in a 128 MB heap', async () => {
    const count = 3000;
    const size = 10_000;
    const { dir: work, store, bin } = world;
    const logs = new Map<string, SessionLog>();
    const answers = new Map<string | number, { message: WireMessage; sessionId: string | undefined }>();
    const sessionOfRequest = new Map<string | number, string>();
    const journal = { current: undefined as ReturnType<typeof journalOf> | undefined };
    try {
      const editor = launch({
        args: ['--agent', `acp:stream-agent ${count} ${size}`, '--store', store],
        binDir: bin.dir,
        env: { NODE_OPTIONS: '--max-old-space-size=128' },
        onMessage: recorder(logs, answers, sessionOfRequest),
      });
      const first = await openSession(editor, work);
      // The second session runs on another agent (another process), named in _meta as the embedding API does.
      const created = await editor.request('session/new', { cwd: work, mcpServers: [], _meta: { 'acp-warden/agent': `acp:stream-agent ${count} ${size + 1}` } }, 'new-2');
      const second = created.result?.sessionId as string;
      expect(second, JSON.stringify(created)).to.be.a('string');
      for (const [id, sessionId] of [['p1', first], ['p2', second]] as const) {
        sessionOfRequest.set(id, sessionId);
        editor.writeLine(JSON.stringify({ jsonrpc: '2.0', id, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'say a lot' }] } }));
      }
      await waitUntil(() => (logs.get(first)?.indexes.length ?? 0) > 0 && (logs.get(second)?.indexes.length ?? 0) > 0, 'the first update of each session', 60_000, 50);
      editor.pauseReading();
      // Nothing read by the editor, yet both agents are read to their end and both turns journaled.
      journal.current = journalOf(store);
      await waitUntil(() => (journal.current?.stops(first) ?? 0) === 1 && (journal.current?.stops(second) ?? 0) === 1, 'both turns to end in the journal while the editor reads nothing', 120_000, 50);
      const seenWhilePaused = (logs.get(first)?.indexes.length ?? 0) + (logs.get(second)?.indexes.length ?? 0);
      expect(seenWhilePaused, 'the editor was really not reading').to.be.below(2 * count);
      expect(editor.running, `warden exited while the editor was not reading:\n${editor.stderr.slice(-600)}`).to.equal(true);
      editor.resumeReading();
      await waitUntil(() => (answers.has('p1') && answers.has('p2')) || !editor.running, 'both prompt answers', 180_000, 50);
      expect(editor.running, `warden exited:\n${editor.stderr.slice(-600)}`).to.equal(true);
      for (const [id, sessionId] of [['p1', first], ['p2', second]] as const) {
        const log = logs.get(sessionId) as SessionLog;
        expect(answers.get(id)?.message.result?.stopReason, JSON.stringify(answers.get(id)?.message)).to.equal('end_turn');
        expect(log.indexes, `${sessionId}: every update once, in order`).to.deep.equal(Array.from({ length: count }, (_, index) => index));
        expect(increasing(log.seqs), `${sessionId}: seqs increase`).to.equal(true);
        // No gap, none lost: the seqs seen are exactly the session's journaled updates.
        expect(log.seqs).to.deep.equal(journal.current.seqsOf(sessionId, 'update'));
        expect(log.answeredAfter.get(id), `${sessionId}: the answer after its updates`).to.equal(count);
      }
      console.log(`      peak RSS of warden: ${editor.peakRssMb()} MB (2 × ${(count * size) / 1e6} MB streamed while the editor read nothing)`);
    } finally {
      journal.current?.close();
    }
  });

  it('session/load of a live session replays each update with the seq it had live, the prompt with its own', async () => {
    const { dir: work, store, bin } = world;
    const logs = new Map<string, SessionLog>();
    const answers = new Map<string | number, { message: WireMessage; sessionId: string | undefined }>();
    const sessionOfRequest = new Map<string | number, string>();
    const editor = launch({ args: ['--agent', 'acp:stream-agent 300 200', '--store', store], binDir: bin.dir, onMessage: recorder(logs, answers, sessionOfRequest) });
    const sessionId = await openSession(editor, work);
    sessionOfRequest.set('prompt', sessionId);
    editor.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 'prompt', method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'go' }] } }));
    await waitUntil(() => answers.has('prompt'), 'the prompt answer', 60_000, 50);
    const live = logs.get(sessionId) as SessionLog;
    const liveSeqs = [...live.seqs];
    expect(liveSeqs).to.have.length(300);
    expect(increasing(liveSeqs)).to.equal(true);
    logs.delete(sessionId);
    sessionOfRequest.set('load', sessionId);
    editor.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 'load', method: 'session/load', params: { sessionId, cwd: work, mcpServers: [] } }));
    await waitUntil(() => answers.has('load'), 'the load answer', 60_000, 50);
    expect(answers.get('load')?.message.error).to.equal(undefined);
    const replayed = logs.get(sessionId) as SessionLog;
    const journal = journalOf(store);
    try {
      expect(replayed.kinds[0]).to.equal('user_message_chunk');
      expect(replayed.seqs).to.deep.equal([...journal.seqsOf(sessionId, 'prompt'), ...liveSeqs]);
    } finally {
      journal.close();
    }
  });

  it('session/load of a 60 MB history by an editor that reads in bursts: each update once, in seq order, no gaps, then the answer, in a 128 MB heap', async () => {
    const count = 30_000;
    const { dir: work, store } = world;
    const sessionId = writeLongSession(store, work, count, 2048);
    const logs = new Map<string, SessionLog>();
    const answers = new Map<string | number, { message: WireMessage; sessionId: string | undefined }>();
    const sessionOfRequest = new Map<string | number, string>([['load', sessionId]]);
    const editor = launch({ args: ['--agent', 'demo', '--store', store], env: { NODE_OPTIONS: '--max-old-space-size=128' }, onMessage: recorder(logs, answers, sessionOfRequest) });
    const init = await editor.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    expect(init.error).to.equal(undefined);
    editor.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 'load', method: 'session/load', params: { sessionId, cwd: work, mcpServers: [] } }));
    // A slow reader: it reads a moment (50 ms), then stops a while (150 ms), until the load is answered (at most 1,200 rounds: 240 s).
    for (let round = 0; round < 1200 && !answers.has('load') && editor.running; round++) {
      editor.pauseReading();
      await sleep(150);
      editor.resumeReading();
      await sleep(50);
    }
    expect(answers.has('load'), `the load answered; warden's stderr: ${editor.stderr.slice(-600)}`).to.equal(true);
    expect(answers.get('load')?.message.error, editor.stderr.slice(-600)).to.equal(undefined);
    const log = logs.get(sessionId) as SessionLog;
    expect(log.indexes).to.deep.equal(Array.from({ length: count }, (_, index) => index));
    expect(log.answeredAfter.get('load')).to.equal(count);
    const journal = journalOf(store);
    try {
      expect(log.seqs).to.deep.equal(journal.seqsOf(sessionId, 'update'));
    } finally {
      journal.close();
    }
    console.log(`      peak RSS of warden: ${editor.peakRssMb()} MB (replay of ${count} × 2 KB to a reader in bursts)`);
  });
});
