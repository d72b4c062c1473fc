/**
 * An idempotent prompt through `warden serve` (issue 30), with the demo agent and a SQLite store:
 * the same `_meta["acp-warden/idempotencyKey"]` sent on one connection, again on another after a
 * reconnect, and again to a new daemon after a kill -9 of the first, is answered the same each
 * time; the journal (the proof) has one prompt entry of the key and one turn end. A turn the
 * kill cut is answered, on a retry after the restart, with the end the restore journaled.
 */
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WebSocket } from 'ws';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { waitUntil } from '../support/processes.js';
import { initializeParams, socketClient, startServe, type ServeDaemon } from '../support/serve-daemon.js';
import { killGroups } from '../support/warden-process.js';

const launched: ChildProcess[] = [];
const sockets: WebSocket[] = [];
const initialize = initializeParams('idempotent-prompt-test-editor');
const keyMeta = 'acp-warden/idempotencyKey';

describe('warden serve: an idempotent prompt across a reconnect and a kill -9 of the daemon (issue 30)', function () {
  this.timeout(120_000);
  let state: string;
  let store: string;
  let cwd: string;

  const start = () => startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', store], launched);
  /** A connection that initialized and attached `sessionId` (resumed, so it controls it). */
  const attached = async (daemon: ServeDaemon, sessionId: string) => {
    const client = await socketClient(daemon, sockets);
    await client.request(1, 'initialize', initialize);
    const resumed = await client.request(2, 'session/resume', { sessionId, cwd, mcpServers: [] });
    expect(resumed.error, JSON.stringify(resumed)).to.equal(undefined);
    return client;
  };
  const promptEntries = (sessionId: string) => {
    const journal = sqliteJournal(store);
    try {
      const entries = journal.entries(sessionId);
      return { prompts: entries.filter((record) => record.entry.kind === 'prompt'), ends: entries.filter((record) => record.entry.kind === 'stop' || record.entry.kind === 'error') };
    } finally {
      journal.close();
    }
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
    const client = await socketClient(first, sockets);
    await client.request(1, 'initialize', initialize);
    const sessionId = (await client.request(2, 'session/new', { cwd, mcpServers: [] })).result?.sessionId as string;
    const params = { sessionId, prompt: [{ type: 'text', text: 'hello' }], _meta: { [keyMeta]: 'retry-me' } };
    const original = await client.request(3, 'session/prompt', params);
    expect(original.result, JSON.stringify(original)).to.have.property('stopReason', 'end_turn');
    client.socket.close();

    const reconnected = await attached(first, sessionId);
    expect((await reconnected.request(3, 'session/prompt', params)).result).to.deep.equal(original.result);

    process.kill(first.process.pid as number, 'SIGKILL');
    await first.exited;
    const second = await start();
    const afterKill = await attached(second, sessionId);
    expect((await afterKill.request(3, 'session/prompt', params)).result).to.deep.equal(original.result);

    const { prompts, ends } = promptEntries(sessionId);
    expect(prompts.map((record) => record.entry)).to.have.length(1);
    expect(prompts[0]?.entry).to.deep.include({ idempotencyKey: 'retry-me' });
    expect(original.result).to.deep.include({ _meta: { 'acp-warden/promptSeq': prompts[0]?.seq } });
    expect(ends).to.have.length(1);
  });

  it('a turn cut by kill -9: its retry on the new daemon is answered with the end the restore journaled (shutdown), nothing inserted', async () => {
    const first = await start();
    const client = await socketClient(first, sockets);
    await client.request(1, 'initialize', initialize);
    const sessionId = (await client.request(2, 'session/new', { cwd, mcpServers: [] })).result?.sessionId as string;
    // The demo tool asks for permission (mode ask): the turn waits for this client's answer, which never comes.
    const params = { sessionId, prompt: [{ type: 'text', text: 'tool' }], _meta: { [keyMeta]: 'cut-me' } };
    client.send({ id: 3, method: 'session/prompt', params });
    await waitUntil(() => client.frames.some((frame) => frame.method === 'session/request_permission'), 'the permission request', 30_000);
    process.kill(first.process.pid as number, 'SIGKILL');
    await first.exited;

    const second = await start();
    const afterKill = await attached(second, sessionId);
    const retry = await afterKill.request(3, 'session/prompt', params);
    expect(retry.error, JSON.stringify(retry)).to.deep.include({ code: -32603 });
    expect(retry.error?.data).to.deep.include({ reason: 'shutdown' });
    const { prompts, ends } = promptEntries(sessionId);
    expect(prompts).to.have.length(1);
    expect(ends.map((record) => record.entry.kind)).to.deep.equal(['error']);
  });
});
