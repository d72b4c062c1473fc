/**
 * An idempotent prompt through `warden serve` (issue 30), with the demo agent and a SQLite store:
 * the same `_meta["acp-warden/idempotencyKey"]` sent on one connection, again on another after a
 * reconnect, and again to a new daemon after a kill -9 of the first, is answered the same each
 * time; the journal (the proof) has one prompt entry of the key and one turn end. A turn the
 * kill cut is answered, on a retry after the restart, with the end the restore journaled.
 *
 * Then with Claude Code (the fake CLI) and a turn cut twice (issue 32, "Continuation of a cut
 * turn"): the agent is killed mid-turn, warden starts it again to continue the turn (the resumed
 * CLI held at its handshake by FAKE_CLAUDE_RESUME_GATE, so the continuation is surely under way;
 * or the continuation sent and the CLI's answer held by FAKE_CLAUDE_STALL_MS), and the daemon
 * is killed -9 there. The next daemon ends that turn once, `shutdown` with
 * `data.continuations`, in the journal: a retry of the key gets it (nothing inserted, nothing sent to the agent again), and a
 * client loading the session sees the turn end once.
 */
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WebSocket } from 'ws';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { pathDirectory } from '../support/launch-harness.js';
import { waitUntil } from '../support/processes.js';
import { initializeParams, seqUpdatesOf, socketClient, startServe, type ServeDaemon } from '../support/serve-daemon.js';
import { killGroups } from '../support/warden-process.js';

const launched: ChildProcess[] = [];
const sockets: WebSocket[] = [];
const initialize = initializeParams('idempotent-prompt-test-editor');
const keyMeta = 'acp-warden/idempotencyKey';
const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));

/** A WebSocket connection to `daemon` that initialized (request id 1). */
async function initialized(daemon: ServeDaemon) {
  const client = await socketClient(daemon, sockets);
  await client.request(1, 'initialize', initialize);
  return client;
}

/** A connection that initialized and attached `sessionId` (resumed, so it controls it; request ids 1 and 2). */
async function attached(daemon: ServeDaemon, sessionId: string, cwd: string) {
  const client = await initialized(daemon);
  const resumed = await client.request(2, 'session/resume', { sessionId, cwd, mcpServers: [] });
  expect(resumed.error, JSON.stringify(resumed)).to.equal(undefined);
  return client;
}

/** The journal's entries of `sessionId`, read from the store file. */
function entriesOf(store: string, sessionId: string) {
  const journal = sqliteJournal(store);
  try {
    return journal.entries(sessionId);
  } finally {
    journal.close();
  }
}

describe('warden serve: an idempotent prompt across a reconnect and a kill -9 of the daemon (issue 30)', function () {
  this.timeout(120_000);
  let state: string;
  let store: string;
  let cwd: string;

  const start = () => startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', store], launched);
  const promptEntries = (sessionId: string) => {
    const entries = entriesOf(store, sessionId);
    return { prompts: entries.filter((record) => record.entry.kind === 'prompt'), ends: entries.filter((record) => record.entry.kind === 'stop' || record.entry.kind === 'error') };
  };

  beforeEach(() => {
    state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-idem-serve-')));
    store = join(state, 'journal.sqlite');
    cwd = join(state, 'project');
    mkdirSync(cwd);
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await killGroups(launched, { descendants: true });
    rmSync(state, { recursive: true, force: true });
  });

  it('the same key on a connection, on another after a reconnect, and on a new daemon after kill -9: one prompt entry, one turn, the same answer each time', async () => {
    const first = await start();
    const client = await initialized(first);
    const sessionId = (await client.request(2, 'session/new', { cwd, mcpServers: [] })).result?.sessionId as string;
    const params = { sessionId, prompt: [{ type: 'text', text: 'hello' }], _meta: { [keyMeta]: 'retry-me' } };
    const original = await client.request(3, 'session/prompt', params);
    expect(original.result, JSON.stringify(original)).to.have.property('stopReason', 'end_turn');
    client.socket.close();

    const reconnected = await attached(first, sessionId, cwd);
    expect((await reconnected.request(3, 'session/prompt', params)).result).to.deep.equal(original.result);

    process.kill(first.process.pid as number, 'SIGKILL');
    await first.exited;
    const second = await start();
    const afterKill = await attached(second, sessionId, cwd);
    expect((await afterKill.request(3, 'session/prompt', params)).result).to.deep.equal(original.result);

    const { prompts, ends } = promptEntries(sessionId);
    expect(prompts.map((record) => record.entry)).to.have.length(1);
    expect(prompts[0]?.entry).to.deep.include({ idempotencyKey: 'retry-me' });
    expect(original.result).to.deep.include({ _meta: { 'acp-warden/promptSeq': prompts[0]?.seq } });
    expect(ends).to.have.length(1);
  });

  it('a turn cut by kill -9: its retry on the new daemon is answered with the end the restore journaled (shutdown), nothing inserted', async () => {
    const first = await start();
    const client = await initialized(first);
    const sessionId = (await client.request(2, 'session/new', { cwd, mcpServers: [] })).result?.sessionId as string;
    // The demo tool asks for permission (mode ask): the turn waits for this client's answer, which never comes.
    const params = { sessionId, prompt: [{ type: 'text', text: 'tool' }], _meta: { [keyMeta]: 'cut-me' } };
    client.send({ id: 3, method: 'session/prompt', params });
    await waitUntil(() => client.frames.some((frame) => frame.method === 'session/request_permission'), 'the permission request', 30_000);
    process.kill(first.process.pid as number, 'SIGKILL');
    await first.exited;

    const second = await start();
    const afterKill = await attached(second, sessionId, cwd);
    const retry = await afterKill.request(3, 'session/prompt', params);
    expect(retry.error, JSON.stringify(retry)).to.deep.include({ code: -32603 });
    expect(retry.error?.data).to.deep.include({ reason: 'shutdown' });
    expect(retry.error?.data, 'no continuation was under way').not.to.have.property('continuations');
    const { prompts, ends } = promptEntries(sessionId);
    expect(prompts).to.have.length(1);
    expect(ends.map((record) => record.entry.kind)).to.deep.equal(['error']);
  });
});

describe('warden serve: a turn whose continuation a kill -9 of the daemon cut ends once (issue 32)', function () {
  this.timeout(120_000);
  let state: string;
  let store: string;
  let cwd: string;
  let gate: string;
  let argvLog: string;
  let textLog: string;
  let bin: string;

  // The fake claude prints two lines of its answer, then kills itself (-9); started again with
  // --resume it reads nothing until the gate file exists (never, under the first daemon, unless
  // the test opens it to let the continuation run).
  const start = (extra: readonly string[] = []) => startServe(state, [...extra,
    '--listen', '127.0.0.1:0', '--agent', 'claude', '--store', store,
    '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', 'FAKE_CLAUDE_CRASH_AFTER=2', '--env', `FAKE_CLAUDE_RESUME_GATE=${gate}`,
    '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`, '--env', `FAKE_CLAUDE_TEXT_LOG=${textLog}`,
  ], launched, { env: { PATH: `${bin}:${process.env.PATH ?? ''}` } });
  const jsonLines = <T>(file: string): T[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as T) : []);
  const resumedStarts = () => jsonLines<{ args: string[] }>(argvLog).filter((line) => line.args.some((arg) => arg.startsWith('--resume')));
  const journaled = (sessionId: string) => entriesOf(store, sessionId).map((record) => record.entry);

  /**
   * A claude session whose prompt `params(sessionId)` was cut by the agent's kill -9, then the
   * daemon's: while the continuation waited for the resumed CLI (`restarting`), or once it was
   * sent to the resumed CLI (`running`: the CLI's answer held before its result line).
   */
  async function cutTwice(params: (sessionId: string) => Record<string, unknown>, stage: 'restarting' | 'running' = 'restarting'): Promise<string> {
    if (stage === 'running') writeFileSync(gate, '');
    const first = await start(stage === 'running' ? ['--env', 'FAKE_CLAUDE_STALL_MS=600000'] : []);
    const client = await initialized(first);
    const created = await client.request(2, 'session/new', { cwd, mcpServers: [] });
    const sessionId = created.result?.sessionId as string;
    expect(sessionId, JSON.stringify(created)).to.be.a('string');
    client.send({ id: 3, method: 'session/prompt', params: params(sessionId) });
    await waitUntil(() => resumedStarts().length === 1, 'the agent started again with --resume (the continuation under way)', 60_000);
    if (stage === 'running') await waitUntil(() => jsonLines(textLog).length === 2, 'the continuation sent to the resumed CLI', 60_000);
    expect(client.frames.some((frame) => frame.id === 3), 'the prompt is still open').to.equal(false);
    expect(journaled(sessionId).filter((entry) => entry.kind === 'notice').map((entry) => (entry as { title: string }).title)).to.include('Answer restarted');
    process.kill(first.process.pid as number, 'SIGKILL');
    await first.exited;
    if (stage === 'restarting') writeFileSync(gate, '');
    return sessionId;
  }

  /** The journal holds the prompt once and its end once: the restore's `shutdown`, after the crash's notice. */
  function endedOnce(sessionId: string, sent: readonly string[] = ['hello']): void {
    const entries = journaled(sessionId);
    expect(entries.filter((entry) => entry.kind === 'prompt'), 'one prompt').to.have.length(1);
    const ends = entries.filter((entry) => entry.kind === 'stop' || entry.kind === 'error');
    expect(ends.map((entry) => (entry as { error?: { data?: unknown } }).error?.data), JSON.stringify(ends)).to.deep.equal([{ reason: 'shutdown', sessionId, continuations: 1 }]);
    expect((ends[0] as { error: { message: string } }).error.message).to.include('while it continued the turn after a crash of its agent');
    const notice = entries.findIndex((entry) => entry.kind === 'notice' && (entry as { title: string }).title === 'Answer restarted');
    expect(entries.indexOf(ends[0] as (typeof entries)[number]), 'the end after the crash notice').to.be.above(notice);
    // What reached the agent: the prompt, and the continuation (no tool ran: the prompt again) if it went out before the kill; nothing after.
    expect(jsonLines<{ text: string }>(textLog).map((line) => line.text)).to.deep.equal(sent);
  }

  beforeEach(() => {
    state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-cut-cont-')));
    store = join(state, 'journal.sqlite');
    cwd = join(state, 'project');
    gate = join(state, 'resume-gate');
    argvLog = join(state, 'argv.ndjson');
    textLog = join(state, 'text.ndjson');
    bin = pathDirectory(join(state, 'bin'), { claude: fakeClaude });
    mkdirSync(cwd);
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await killGroups(launched, { descendants: true });
    rmSync(state, { recursive: true, force: true });
  });

  it('with an idempotency key: the retry on the new daemon gets the journaled end (shutdown, continuations 1); one prompt, one end, the prompt sent to the agent once', async () => {
    const params = (sessionId: string) => ({ sessionId, prompt: [{ type: 'text', text: 'hello' }], _meta: { [keyMeta]: 'cut-twice' } });
    const sessionId = await cutTwice(params);
    const client = await attached(await start(), sessionId, cwd);
    const retry = await client.request(3, 'session/prompt', params(sessionId));
    expect(retry.error, JSON.stringify(retry)).to.deep.include({ code: -32603 });
    expect(retry.error?.data).to.deep.include({ reason: 'shutdown', continuations: 1 });
    const again = await client.request(4, 'session/prompt', params(sessionId));
    expect(again, 'a second retry: the same end').to.deep.include({ error: retry.error });
    endedOnce(sessionId);
  });

  it('with a key, the continuation already sent to the resumed CLI when the daemon is killed: the retry gets the journaled end (shutdown, continuations 1); nothing sent again', async () => {
    const params = (sessionId: string) => ({ sessionId, prompt: [{ type: 'text', text: 'hello' }], _meta: { [keyMeta]: 'cut-while-running' } });
    const sessionId = await cutTwice(params, 'running');
    const client = await attached(await start(), sessionId, cwd);
    const retry = await client.request(3, 'session/prompt', params(sessionId));
    expect(retry.error?.data, JSON.stringify(retry)).to.deep.include({ reason: 'shutdown', continuations: 1 });
    endedOnce(sessionId, ['hello', 'hello']);
  });

  it('without a key: session/load on the new daemon replays the turn and its end once (shutdown); one prompt, one end', async () => {
    const sessionId = await cutTwice((id) => ({ sessionId: id, prompt: [{ type: 'text', text: 'hello' }] }));
    const loader = await initialized(await start());
    const loaded = await loader.request(2, 'session/load', { sessionId, cwd, mcpServers: [] });
    expect(loaded.error, JSON.stringify(loaded)).to.equal(undefined);
    const history = seqUpdatesOf(loader.frames.slice(0, loader.frames.indexOf(loaded)), sessionId);
    const ends = history.filter((update) => update.turnEnded !== undefined);
    expect(ends.map((update) => (update.turnEnded as { error?: { data?: { reason?: string } } }).error?.data?.reason), JSON.stringify(history)).to.deep.equal(['shutdown']);
    endedOnce(sessionId);
  });
});
