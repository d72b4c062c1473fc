/**
 * The host on a journal that answers with promises: an update is never shown before its group
 * is durable, nor a turn's answer before its updates (a gated journal decides when writes
 * land); and the host on a real PostgreSQL, through the embedding API and through `warden acp
 * --store postgres://…` launched as an editor does: sessions journaled there, listed, replayed
 * and resumed by the next process, a session live in one warden refused to another, an
 * unreachable database named without its password.
 */
import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { demoAgent } from '../../src/acp/demo-agent.js';
import { asyncJournalOf } from '../../src/journal/async-journal-of.js';
import type { AsyncJournal } from '../../src/journal/async-journal.js';
import { createHost, type Host } from '../../src/runtime/host.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { requirePostgres, startPostgres, type TestPostgres } from '../support/postgres.js';
import { wireErrorOf } from '../support/warden-editor.js';
import { binDirectory, initializedEditor, stopAll } from '../support/path-editor.js';
import { exitCodeOf, killGroups, stderrOf, wardenMain } from '../support/warden-process.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { answerText, listedSessions, sdkOverWebSocket, startServe, wardenSessions } from '../support/serve-daemon.js';
import { parseAcpArgs } from '../../src/cli/acp.js';
import { isAlive, waitUntil } from '../support/processes.js';
import { fileURLToPath } from 'node:url';

const textOf = (updates: readonly SessionUpdate[]) => updates.map((update) => (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text' ? update.content.text : '')).join('');

/** An asynchronous journal whose group commits land only when the test lets them. */
function gatedJournal(inner: AsyncJournal) {
  const waiting: Array<() => void> = [];
  let open = true;
  const journal: AsyncJournal = {
    ...inner,
    appendGroup: (sessionId, entries) =>
      new Promise((resolve, reject) => {
        const land = () => void inner.appendGroup(sessionId, entries).then(resolve, reject);
        if (open) land();
        else waiting.push(land);
      }),
  };
  return {
    journal,
    waiting: () => waiting.length,
    closeGate() {
      open = false;
    },
    openGate() {
      open = true;
      for (const land of waiting.splice(0)) land();
    },
  };
}

describe('the host on a journal that answers with promises', () => {
  const hosts: Host[] = [];
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.stop();
  });

  it('shows no update before its group is durable, and answers the turn only after its updates', async () => {
    const sqlite = asyncJournalOf(sqliteJournal(':memory:'));
    const gate = gatedJournal(sqlite);
    const host = createHost({ store: gate.journal, agents: { demo: demoAgent({ wordDelayMs: 0 }) } });
    hosts.push(host);
    const session = await host.newSession({ cwd: '/tmp' });
    gate.closeGate();
    const run = session.prompt('hello there');
    const seen: SessionUpdate[] = [];
    let answered = false;
    void run.result.then(() => (answered = true), () => (answered = true));
    const reading = (async () => {
      for await (const update of run) seen.push(update);
    })();
    // The agent streams its whole answer while the first group waits at the gate.
    await waitUntil(async () => gate.waiting() >= 1 && (await sqlite.entries(session.sessionId)).some((record) => record.entry.kind === 'prompt'), 'a group waiting');
    // A negative check (nothing shown, no answer while the gate is closed): the wait is its point.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seen, 'nothing shown before it is durable').to.deep.equal([]);
    expect(answered, 'no answer before the updates').to.equal(false);
    gate.openGate();
    const { stopReason } = await run.result;
    await reading;
    expect(stopReason).to.equal('end_turn');
    const journaled = (await sqlite.entries(session.sessionId)).filter((record) => record.entry.kind === 'update').map((record) => (record.entry as { update: SessionUpdate }).update);
    expect(textOf(seen)).to.equal(textOf(journaled));
    expect(textOf(seen).length).to.be.greaterThan(0);
    const kinds = (await sqlite.entries(session.sessionId)).map((record) => record.entry.kind);
    expect(kinds.indexOf('prompt')).to.be.lessThan(kinds.indexOf('update', kinds.indexOf('prompt')));
    expect(kinds.at(-1)).to.equal('stop');
  });
  it('holds at most maxPendingWriteBytes unacknowledged: past it the agent process is not read (its output waits in its pipe) until the journal caught up, and nothing is lost', async function () {
    this.timeout(60_000);
    const sqlite = asyncJournalOf(sqliteJournal(':memory:'));
    const gate = gatedJournal(sqlite);
    const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
    const host = createHost({ store: gate.journal, maxPendingWriteBytes: 200, agentOptions: { agentCommand: fakeClaude, env: { FAKE_CLAUDE_FIXTURE: 'partial', FAKE_CLAUDE_LOOP: '1' } } });
    hosts.push(host);
    const session = await host.newSession({ cwd: '/tmp', agent: 'claude' });
    const port = host.processes().find((one) => one.agent === 'claude')?.port;
    const paused = () => (port?.getSnapshot() as { context: { readPaused: boolean } }).context.readPaused;
    expect(paused()).to.equal(false);
    gate.closeGate();
    const run = session.prompt('hello');
    const seen: SessionUpdate[] = [];
    const reading = (async () => {
      for await (const update of run) seen.push(update);
    })();
    await waitUntil(() => paused(), 'the agent not to be read while the journal is behind');
    expect(seen).to.deep.equal([]);
    gate.openGate();
    expect((await run.result).stopReason).to.equal('end_turn');
    await reading;
    await waitUntil(() => !paused(), 'the agent to be read again');
    const journaled = (await sqlite.entries(session.sessionId)).filter((record) => record.entry.kind === 'update').map((record) => (record.entry as { update: SessionUpdate }).update);
    expect(textOf(seen)).to.equal(textOf(journaled));
    expect(textOf(seen).length).to.be.greaterThan(0);
    expect(() => createHost({ store: ':memory:', maxPendingWriteBytes: 0 })).to.throw(TypeError, 'maxPendingWriteBytes');
  });
});

describe('the host on PostgreSQL', () => {
  let server: TestPostgres;
  let databases = 0;
  let url: string;
  let dir: string;
  const hosts: Host[] = [];

  before(async function () {
    requirePostgres(this);
    server = await startPostgres();
  });
  after(async () => server?.stop());
  beforeEach(async () => {
    url = await server.createDatabase(`host_${process.pid}_${++databases}`);
    dir = mkdtempSync(join(tmpdir(), 'warden-pg-host-'));
  });
  const launched: ChildProcess[] = [];
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.stop();
    await stopAll();
    // Their agents too: a daemon SIGKILLed leaves its agents' groups to the reaper.
    await killGroups(launched, { descendants: true });
    rmSync(dir, { recursive: true, force: true });
  });

  /** The session's owner host and epoch, as the database has them. */
  const ownerOf = async (sessionId: string): Promise<{ owner: string; epoch: number }> => {
    const client = new pg.Client(url);
    await client.connect();
    try {
      const { rows } = await client.query<{ owner_host: string; epoch: string }>('SELECT owner_host, epoch FROM sessions WHERE session_id = $1', [sessionId]);
      return { owner: rows[0]!.owner_host, epoch: Number(rows[0]!.epoch) };
    } finally {
      await client.end();
    }
  };

  const open = (options: { readonly lease?: number } = {}) => {
    const host = createHost({ store: url, agents: { demo: demoAgent({ wordDelayMs: 0 }) }, postgres: { lease: options.lease ?? 2000 } });
    hosts.push(host);
    return host;
  };

  it('createHost: a prompt is journaled in PostgreSQL in order; the next host lists it, replays it on load and goes on with it', async () => {
    const first = open();
    await first.opened;
    const session = await first.newSession({ cwd: dir });
    const run = session.prompt('tell me about supervisors');
    const streamed: SessionUpdate[] = [];
    for await (const update of run) streamed.push(update);
    expect((await run.result).stopReason).to.equal('end_turn');
    const records = await first.journal.entries(session.sessionId);
    expect(records.map((record) => record.entry.kind).filter((kind) => kind === 'prompt')).to.have.length(1);
    expect(records.at(-1)?.entry.kind).to.equal('stop');
    const seqs = records.map((record) => record.seq);
    expect(seqs, 'seqs increase').to.deep.equal([...seqs].sort((a, b) => a - b));
    const journaledText = textOf(records.filter((record) => record.entry.kind === 'update').map((record) => (record.entry as { update: SessionUpdate }).update));
    expect(journaledText).to.equal(textOf(streamed));
    await session.close();
    expect(session.state()).to.equal('closed');
    await first.stop();
    hosts.splice(hosts.indexOf(first), 1);

    const second = open();
    const listed = await second.listSessions();
    expect(listed.map((one) => one.sessionId)).to.include(session.sessionId);
    expect(listed.find((one) => one.sessionId === session.sessionId)?.title).to.equal('tell me about supervisors');
    const reopened = await second.openSession(session.sessionId, { how: 'load' });
    expect(textOf(reopened.replayed)).to.equal(textOf(streamed));
    const again = reopened.prompt('and the journal?');
    for await (const _ of again) void _;
    expect((await again.result).stopReason).to.equal('end_turn');
    const kinds = (await second.journal.entries(session.sessionId)).map((record) => record.entry.kind);
    expect(kinds.filter((kind) => kind === 'prompt')).to.have.length(2);
    expect(kinds).to.include('attached');
  });

  it('warden acp --store postgres://…: sessions journaled there; the next warden lists and loads them; a session live in one warden is refused to another', async () => {
    // As an editor runs it: the bare `warden` found on PATH, in the project's directory.
    const bin = binDirectory(dir);
    const editor = await initializedEditor(bin, ['--agent', 'demo', '--store', url], dir);
    const { sessionId } = await editor.request<{ sessionId: string }>('session/new', { cwd: dir, mcpServers: [] });
    const answer = await editor.request<{ stopReason: string }>('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello from pg' }] });
    expect(answer.stopReason).to.equal('end_turn');
    // Live here: another warden on the same database may not load it.
    const other = await initializedEditor(bin, ['--agent', 'demo', '--store', url], dir);
    const refused = await wireErrorOf(other.request('session/load', { sessionId, cwd: dir, mcpServers: [] }));
    expect(refused.code).to.equal(-32603);
    expect(refused.message).to.contain('is live in another warden');
    expect(refused.data?.reason).to.equal('session_owned');
    expect(await editor.close()).to.equal(0);
    // Closed with its editor: the other warden takes it now.
    const listed = await other.request<{ sessions: Array<{ sessionId: string; title: string | null }> }>('session/list', {});
    expect(listed.sessions.map((one) => one.sessionId)).to.include(sessionId);
    const loaded = await other.request('session/load', { sessionId, cwd: dir, mcpServers: [] });
    expect(loaded).to.be.an('object');
    const next = await other.request<{ stopReason: string }>('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'still there?' }] });
    expect(next.stopReason).to.equal('end_turn');
    expect(await other.close()).to.equal(0);
    const journal = createHost({ store: url, postgres: { lease: 2000 } });
    hosts.push(journal);
    const kinds = (await journal.journal.entries(sessionId)).map((record) => record.entry.kind);
    expect(kinds.filter((kind) => kind === 'prompt')).to.have.length(2);
    expect(kinds.filter((kind) => kind === 'stop')).to.have.length(2);
  });

  it('warden serve --store postgres://… --lease 2: a session journaled there; after the daemon is SIGKILLed another takes it once the lease ran out and replays it whole', async () => {
    const state = join(dir, 'state');
    const first = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', url, '--lease', '2', '--env', 'DEMO_WORD_DELAY_MS=1'], launched);
    const client = sdkOverWebSocket(first);
    await client.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'pg-serve-test', version: '1' } });
    const { sessionId } = (await client.agent.request('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string };
    const answer = await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello daemon' }] });
    expect(answer.stopReason).to.equal('end_turn');
    const said = answerText(client.updates, sessionId);
    expect(said.length).to.be.greaterThan(0);
    client.close();
    first.process.kill('SIGKILL');
    await first.exited;
    const second = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', url, '--lease', '2', '--env', 'DEMO_WORD_DELAY_MS=1'], launched);
    const again = sdkOverWebSocket(second);
    await again.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'pg-serve-test', version: '1' } });
    // Held by the killed daemon until its lease runs out (2 s), then this one takes it.
    let loaded: unknown;
    await waitUntil(async () => {
      loaded = await again.agent.request('session/load', { sessionId, cwd: dir, mcpServers: [] }).then(
        (result) => result,
        (error: { data?: { reason?: string } }) => (error.data?.reason === 'session_owned' ? undefined : Promise.reject(error)),
      );
      return loaded !== undefined;
    }, 'the session to be free', 15_000, 250);
    // The killed daemon was lost (its lease ran out): this one took the session over from it, and a notice says so (issue 28).
    const isNotice = (entry: { update: unknown }) => JSON.stringify(entry.update).includes('acp-warden/notice');
    expect(answerText(again.updates.filter((entry) => !isNotice(entry)), sessionId)).to.equal(said);
    await waitUntil(() => again.updates.some((entry) => isNotice(entry) && JSON.stringify(entry.update).includes('taken over')), 'the takeover notice', 15_000);
    const next = await again.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'and now?' }] });
    expect(next.stopReason).to.equal('end_turn');
    // warden sessions names the owner host and its epoch: the second daemon, at epoch 2, on this machine.
    const listed = listedSessions(state, second).find((one) => one.sessionId === sessionId) as { owner?: { hostId: string; epoch: number; hostName?: string } } | undefined;
    expect(listed?.owner?.epoch).to.equal(2);
    expect(listed?.owner?.hostName).to.equal(hostname());
    const table = wardenSessions(state, second, []);
    expect(table.stdout.split('\n')[0]).to.match(/^SESSION\s+AGENT\s+STATE\s+OWNER\s+EPOCH\s+CLIENTS/u);
    expect(table.stdout).to.contain(`${listed?.owner?.hostId}  2`);
    again.close();
  });

  it('a stale owner is fenced: once another host took the session, its next write is refused, its agent process stopped, its prompt answered session_moved naming the owner', async function () {
    this.timeout(60_000);
    const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
    const agentOptions = { agentCommand: fakeClaude, env: { FAKE_CLAUDE_FIXTURE: 'hello', FAKE_CLAUDE_LOOP: '1' } };
    // A never renews its lease: it runs out after 1 s, as if A had been frozen.
    const a = createHost({ store: url, agentOptions, postgres: { lease: 1000, renew: false } });
    const b = createHost({ store: url, agentOptions, postgres: { lease: 1000 } });
    hosts.push(a, b);
    await Promise.all([a.opened, b.opened]);
    const moved: unknown[] = [];
    a.on((event) => event.type === 'session.moved' && moved.push(event));
    const session = await a.newSession({ cwd: dir, agent: 'claude' });
    const first = session.prompt('first');
    expect((await first.result).stopReason).to.equal('end_turn');
    const cli = a.processes().find((port) => port.agent === 'claude');
    expect(isAlive(cli?.pid)).to.equal(true);
    const held = await ownerOf(session.sessionId);
    // B takes it once A's lease ran out (the database has been up for longer than a lease).
    await waitUntil(async () => (await b.openSession(session.sessionId, { how: 'resume' }).then(() => true, () => false)), 'B to take the session', 15_000, 200);
    const taken = await ownerOf(session.sessionId);
    expect(taken.epoch).to.equal(held.epoch + 1);
    expect(taken.owner).not.to.equal(held.owner);
    const entriesBefore = (await b.journal.entries(session.sessionId)).length;
    // A still thinks it runs the session: its prompt's entry is refused, its agent process stopped.
    const stale = session.prompt('second, on the stale owner');
    const refused = await stale.result.then(() => expect.fail('the stale owner may not run a turn'), (error: { code: number; message: string; data?: Record<string, unknown> }) => error);
    expect(refused.data?.reason, refused.message).to.equal('session_moved');
    expect(refused.data).to.deep.include({ owner: taken.owner, ownerName: hostname(), epoch: taken.epoch });
    expect(refused.message).to.contain(`host ${taken.owner} on ${hostname()} owns it now (epoch ${taken.epoch})`);
    await waitUntil(() => !isAlive(cli?.pid), 'the stale agent process to stop', 15_000);
    expect(a.tree().children.some((child) => child.id === `session:${session.sessionId}`)).to.equal(false);
    expect(moved).to.deep.equal([{ type: 'session.moved', sessionId: session.sessionId, owner: taken.owner, epoch: taken.epoch }]);
    expect((await b.journal.entries(session.sessionId)).length, 'nothing written by the stale owner').to.equal(entriesBefore);
    const again = await session.prompt('third, still on the stale owner').result.then(() => 'ran', (error: { data?: { reason?: string } }) => error.data?.reason);
    expect(again).to.equal('session_moved');
  });

  it('--lease and --advertise: refused without a PostgreSQL store, and a lease that is not a number of seconds, naming the fix', async () => {
    expect(parseAcpArgs(['--agent', 'demo', '--lease', '2'])).to.deep.equal({ error: 'warden acp: --lease applies to a PostgreSQL store only: add --store postgres://USER@HOST:PORT/DB, or leave --lease out' });
    expect(parseAcpArgs(['--agent', 'demo', '--store', url, '--lease', 'soon'])).to.have.property('error').that.contains('--lease expects a number of seconds');
    expect(parseAcpArgs(['--agent', 'demo', '--store', url, '--advertise', 'http://x'])).to.have.property('error').that.contains('--advertise expects the ws://HOST:PORT/acp address');
    expect(parseAcpArgs(['--agent', 'demo', '--store', url, '--lease', '2.5', '--advertise', 'ws://10.0.0.1:8600/acp'])).to.include({ lease: 2500, advertise: 'ws://10.0.0.1:8600/acp' });
  });

  it('an unreachable database: warden acp exits 2 naming it without its password; host.opened rejects the same way; no file is made', async () => {
    const port = server.port + 1;
    const unreachable = `postgres://warden:s3cret@127.0.0.1:${port}/journal`;
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const host = createHost({ store: unreachable });
      hosts.push(host);
      const error = await host.opened.then(() => expect.fail('cannot open'), (failure: unknown) => failure as Error);
      expect(error.message).to.contain(`cannot open the journal at postgres://warden:***@127.0.0.1:${port}/journal`);
      expect(error.message).not.to.contain('s3cret');
      expect(existsSync(join(dir, 'postgres:'))).to.equal(false);
    } finally {
      process.chdir(cwd);
    }
    const child = spawn(process.execPath, [wardenMain, 'acp', '--agent', 'demo', '--store', unreachable], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const stderr = stderrOf(child);
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    expect(await exitCodeOf(child)).to.equal(2);
    expect(stderr()).to.contain(`warden acp: cannot open the journal at postgres://warden:***@127.0.0.1:${port}/journal`);
    expect(stderr()).not.to.contain('s3cret');
    expect(stdout, 'nothing on the protocol channel').to.equal('');
    const daemon = spawn(process.execPath, [wardenMain, 'serve', '--listen', '127.0.0.1:0', '--agent', 'demo', '--store', unreachable], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    launched.push(daemon);
    const said = stderrOf(daemon);
    expect(await exitCodeOf(daemon)).to.equal(2);
    expect(said()).to.contain(`cannot open the journal at postgres://warden:***@127.0.0.1:${port}/journal`);
    expect(said()).not.to.contain('listening on');
  });
});
