/**
 * `session/new` through a real `warden acp --store FILE` whose journal cannot record the new
 * session (a damaged page): the editor is answered -32603 and the session the agent opened for
 * it is closed there again. Nothing of it reaches the editor, no CLI process is left for it, and
 * the journal keeps no session the editor never got. Every journal failure is answered alike.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { PipeEditor, pipeEditorWorld, type WireMessage } from '../support/pipe-editor.js';
import { isAlive, waitUntil } from '../support/processes.js';
import { buildStore, damagePage, rootPageOf } from '../support/store-damage.js';

const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));

describe('warden acp: session/new whose journal write fails', function () {
  this.timeout(120_000);
  const world = pipeEditorWorld('warden-setup-faults-', { claude: fakeClaude });

  const initialize = async (target: PipeEditor) => {
    const init = await target.request('initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'setup-faults', version: '1' } });
    expect(init.error, JSON.stringify(init.error)).to.equal(undefined);
  };
  // No session was opened for the editor: any session/update it got is of a failed one.
  const updates = (target: PipeEditor) => target.notifications.filter((message) => message.method === 'session/update');
  const failedNew = async (target: PipeEditor): Promise<void> => {
    const answer: WireMessage = await target.request('session/new', { cwd: world.dir, mcpServers: [] });
    expect(answer.error?.code, JSON.stringify(answer)).to.equal(-32603);
    expect(answer.error?.message).to.contain(`the journal ${world.store} is damaged`);
  };

  it('the demo agent, the sessions index damaged: each session/new fails, and no update of the failed sessions reaches the editor', async () => {
    buildStore(world.store, world.dir, 12);
    damagePage(world.store, rootPageOf(world.store, 'sqlite_autoindex_sessions_1').page);
    world.editor = PipeEditor.launch({ args: ['--agent', 'demo', '--store', world.store, '--env', 'DEMO_WORD_DELAY_MS=0'] });
    await initialize(world.editor);
    await failedNew(world.editor);
    await failedNew(world.editor);
    // A round trip through the demo agent after both: what it said of them has come by now.
    const listed = await world.editor.request('session/list', {});
    expect(listed.error, JSON.stringify(listed.error)).to.equal(undefined);
    expect(updates(world.editor)).to.deep.equal([]);
  });

  it('Claude Code (found on PATH), the sessions index damaged: the CLI started for a failed session/new ends, nothing of it reaches the editor, warden goes on', async () => {
    buildStore(world.store, world.dir, 12);
    damagePage(world.store, rootPageOf(world.store, 'sqlite_autoindex_sessions_1').page);
    const argvLog = join(world.dir, 'argv.ndjson');
    world.editor = PipeEditor.launch({ args: ['--agent', 'claude', '--store', world.store, '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`], binDir: world.bin.dir });
    await initialize(world.editor);
    await failedNew(world.editor);
    const started = () => readFileSync(argvLog, 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { pid: number }).pid);
    const pids = started();
    expect(pids).to.have.length.greaterThan(0);
    await waitUntil(() => pids.every((pid) => !isAlive(pid)), `the CLI of the failed session (pids ${pids.join(', ')}) to end`, 30_000);
    expect(updates(world.editor)).to.deep.equal([]);
    expect(world.editor.running, world.editor.stderr).to.equal(true);
    await failedNew(world.editor);
  });

  it('the owners table damaged: session/new fails naming the file (not blaming the agent for a reused id), and the journal keeps no session the editor never got', async () => {
    const stored = buildStore(world.store, world.dir, 3);
    damagePage(world.store, rootPageOf(world.store, 'owners').page, 0);
    world.editor = PipeEditor.launch({ args: ['--agent', 'demo', '--store', world.store, '--env', 'DEMO_WORD_DELAY_MS=0'] });
    await initialize(world.editor);
    await failedNew(world.editor);
    const listed = await world.editor.request('session/list', {});
    expect((listed.result?.sessions as Array<{ sessionId: string }>).map((session) => session.sessionId)).to.have.members(stored);
    expect(updates(world.editor)).to.deep.equal([]);
    expect(await world.editor.close()).to.deep.include({ code: 0 });
    world.editor = undefined;
    const journal = sqliteJournal(world.store);
    try {
      expect(journal.listSessions({}).sessions.map((session) => session.sessionId)).to.have.members(stored);
    } finally {
      journal.close();
    }
  });

  it('journal failures are answered alike whatever the request (session/list, session/new): -32603, the journal\'s message, data naming the store and its code', async () => {
    buildStore(world.store, world.dir, 12);
    damagePage(world.store, rootPageOf(world.store, 'sessions_by_update').page);
    world.editor = PipeEditor.launch({ args: ['--agent', 'demo', '--store', world.store, '--env', 'DEMO_WORD_DELAY_MS=0'] });
    await initialize(world.editor);
    const listed = await world.editor.request('session/list', {});
    const created = await world.editor.request('session/new', { cwd: world.dir, mcpServers: [] });
    for (const answer of [listed, created]) {
      expect(answer.error?.code, JSON.stringify(answer)).to.equal(-32603);
      expect(answer.error?.message).to.equal(`Internal error: the journal ${world.store} is damaged (SQLITE_CORRUPT): move it aside or restore a backup`);
      expect(answer.error?.data).to.deep.include({ store: world.store, code: 'SQLITE_CORRUPT' });
    }
    expect(created.error?.data?.sessionId).to.be.a('string');
    expect(listed.error?.data).to.not.have.property('sessionId');
  });
});
