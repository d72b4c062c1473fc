/**
 * A slow reader next to a streaming session, through a real `warden serve --agent demo` (issue
 * 16; docs/serve.md, "Sessions that outlive connections" and `--keepalive`): an observer
 * (a raw `ws` client) that stops reading its socket holds back only its own cursor. The
 * controller's turn streams to its end while the observer's last delivered seq (as
 * `warden sessions --json` shows it) stays behind; the updates wait in the journal, not in the
 * daemon's memory, and once the observer reads again it gets every one of them, in order, once.
 * A reader that reads nothing at all for two keepalive intervals is closed as a half-open
 * connection (the documented limit), and the controller goes on.
 */
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WebSocket } from 'ws';
import { waitUntil } from '../support/processes.js';
import { agentText, initializeParams, lastSeqOf, listedSessions, seqUpdatesOf, socketClient, startServe, type ServeDaemon } from '../support/serve-daemon.js';
import { killGroups } from '../support/warden-process.js';

const launched: ChildProcess[] = [];
const sockets: WebSocket[] = [];
const initialize = initializeParams('slow-observer-test-editor');

/**
 * A prompt whose answer is `count` updates of about `bytes` each: far more than the kernel's
 * socket buffers and ws's high-water mark hold, so that a reader that stops reading is behind.
 */
const bigWords = (count: number, bytes: number) => Array.from({ length: count }, (_, n) => `w${n}-${'x'.repeat(bytes)}`).join(' ');

describe('warden serve: a slow observer does not slow the controller (issue 16)', function () {
  this.timeout(180_000);
  let state: string;

  beforeEach(() => {
    state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-slow-observer-')));
  });

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await killGroups(launched, { descendants: true });
    rmSync(state, { recursive: true, force: true });
  });

  /** A controller with a demo session, and an observer attached to it by session/load. */
  async function controllerAndObserver(daemon: ServeDaemon) {
    const controller = await socketClient(daemon, sockets);
    await controller.request(1, 'initialize', initialize);
    const sessionId = (await controller.request(2, 'session/new', { cwd: state, mcpServers: [] })).result?.sessionId as string;
    expect(sessionId).to.be.a('string');
    const observer = await socketClient(daemon, sockets);
    await observer.request(1, 'initialize', initialize);
    expect((await observer.request(2, 'session/load', { sessionId, cwd: state, mcpServers: [] })).error).to.equal(undefined);
    return { controller, observer, sessionId };
  }

  /** The observer's entry in `warden sessions --json`. */
  const observerEntry = (daemon: ServeDaemon, sessionId: string) => listedSessions(state, daemon).find((session) => session.sessionId === sessionId)?.clients.find((client) => client.role === 'observer');

  it('an observer that stops reading: the controller\'s turn streams to its end while the observer is held behind; read again, it gets every update once, in order', async () => {
    const daemon = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', join(state, 'journal.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=0'], launched);
    const { controller, observer, sessionId } = await controllerAndObserver(daemon);
    const words = bigWords(2000, 4000);
    observer.socket.pause();
    const answer = await controller.request(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: words }] }, 120_000);
    expect(answer.result).to.deep.equal({ stopReason: 'end_turn' });
    const streamed = seqUpdatesOf(controller.frames, sessionId);
    expect(agentText(streamed), 'the controller got the whole answer').to.include(`You said: ${words}.`);
    const controllerSeqs = streamed.map((update) => update.seq as number);
    expect(controllerSeqs, 'in order, once').to.deep.equal([...new Set(controllerSeqs)].sort((a, b) => a - b));

    // The turn is over; the observer, still not reading, was sent only part of it.
    const held = observerEntry(daemon, sessionId);
    expect(held?.delivered, JSON.stringify(held)).to.be.a('number');
    expect(held?.delivered as number, 'the observer is held behind the controller').to.be.below(lastSeqOf(streamed));

    observer.socket.resume();
    await waitUntil(() => seqUpdatesOf(observer.frames, sessionId).some((update) => update.turnEnded !== undefined), 'the observer to get the turn end', 120_000);
    const watched = seqUpdatesOf(observer.frames, sessionId);
    const seqs = watched.map((update) => update.seq as number);
    expect(seqs, 'the observer: each once, in order').to.deep.equal([...new Set(seqs)].sort((a, b) => a - b));
    expect(agentText(watched), 'the observer: the same answer').to.equal(agentText(streamed));
    expect(watched.filter((update) => update.kind === 'user_message_chunk').map((update) => update.text)).to.deep.equal([words]);
    expect(watched.at(-1)?.turnEnded).to.deep.equal({ stopReason: 'end_turn' });
    await waitUntil(() => observerEntry(daemon, sessionId)?.delivered === lastSeqOf(watched), 'the daemon to see the observer caught up', 30_000, 200);
  });

  it('an observer that reads nothing for two --keepalive intervals is closed as half-open; the controller\'s turns go on', async () => {
    const daemon = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', join(state, 'journal.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=0', '--keepalive', '2'], launched);
    const { controller, observer, sessionId } = await controllerAndObserver(daemon);
    observer.socket.pause();
    const words = bigWords(2000, 4000);
    const answer = await controller.request(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: words }] }, 120_000);
    expect(answer.result).to.deep.equal({ stopReason: 'end_turn' });
    // Neither pongs nor reads from it: gone from the session's clients once two pings went unanswered.
    await waitUntil(() => observerEntry(daemon, sessionId) === undefined, 'the silent observer to be closed', 60_000, 250);
    expect(listedSessions(state, daemon).find((session) => session.sessionId === sessionId)?.clients.map((client) => client.role)).to.deep.equal(['controller']);
    const again = await controller.request(4, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'still here' }] }, 60_000);
    expect(again.result).to.deep.equal({ stopReason: 'end_turn' });
    observer.socket.resume();
    expect(await observer.closed, 'the observer learns its connection is closed once it reads again').to.be.a('number');
  });
});
