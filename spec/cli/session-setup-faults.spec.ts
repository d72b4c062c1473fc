/**
 * `session/new` through a real `warden acp --store FILE` whose journal cannot record the new
 * session (a damaged page): the editor is answered -32603 and the session the agent opened for
 * it is closed there again. Nothing of it reaches the editor, no CLI process is left for it, and
 * the journal keeps no session the editor never got. Every journal failure is answered alike.
 */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sqliteJournal } from '../../src/host/sqlite-journal.js';
import { binDirWith, PipeEditor, type WireMessage } from '../support/pipe-editor.js';
import { isAlive, waitUntil } from '../support/processes.js';
import { buildStore, damagePage, rootPageOf } from '../support/store-damage.js';

const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));

describe('warden acp: session/new whose journal write fails', function () {
  this.timeout(120_000);
  let dir: string;
  let store: string;
  let bin: ReturnType<typeof binDirWith>;
  let editor: PipeEditor | undefined;

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-setup-faults-')));
    store = join(dir, 'journal.sqlite');
    bin = binDirWith({ claude: fakeClaude });
  });

  afterEach(async () => {
    await PipeEditor.closeAll();
    await editor?.close();
    editor = undefined;
    bin.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  const initialize = async (target: PipeEditor) => {
    const init = await target.request('initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'setup-faults', version: '1' } });
    expect(init.error, JSON.stringify(init.error)).to.equal(undefined);
  };
  // No session was opened for the editor: any session/update it got is of a failed one.
  const updates = (target: PipeEditor) => target.notifications.filter((message) => message.method === 'session/update');
  const failedNew = async (target: PipeEditor): Promise<void> => {
    const answer: WireMessage = await target.request('session/new', { cwd: dir, mcpServers: [] });
    expect(answer.error?.code, JSON.stringify(answer)).to.equal(-32603);
    expect(answer.error?.message).to.contain(`the journal ${store} is damaged`);
  };

  it('the demo agent, the sessions index damaged: each session/new fails, and no update of the failed sessions reaches the editor', async () => {
    buildStore(store, dir, 12);
    damagePage(store, rootPageOf(store, 'sqlite_autoindex_sessions_1').page);
    editor = PipeEditor.launch({ args: ['--agent', 'demo', '--store', store, '--env', 'DEMO_WORD_DELAY_MS=0'] });
    await initialize(editor);
    await failedNew(editor);
    await failedNew(editor);
    // A round trip through the demo agent after both: what it said of them has come by now.
    const listed = await editor.request('session/list', {});
    expect(listed.error, JSON.stringify(listed.error)).to.equal(undefined);
    expect(updates(editor)).to.deep.equal([]);
  });

  it('Claude Code (found on PATH), the sessions index damaged: the CLI started for a failed session/new ends, nothing of it reaches the editor, warden goes on', async () => {
    buildStore(store, dir, 12);
    damagePage(store, rootPageOf(store, 'sqlite_autoindex_sessions_1').page);
    const argvLog = join(dir, 'argv.ndjson');
    editor = PipeEditor.launch({ args: ['--agent', 'claude', '--store', store, '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`], binDir: bin.dir });
    await initialize(editor);
    await failedNew(editor);
    const started = () => readFileSync(argvLog, 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { pid: number }).pid);
    const pids = started();
    expect(pids).to.have.length.greaterThan(0);
    await waitUntil(() => pids.every((pid) => !isAlive(pid)), `the CLI of the failed session (pids ${pids.join(', ')}) to end`, 30_000);
    expect(updates(editor)).to.deep.equal([]);
    expect(editor.running, editor.stderr).to.equal(true);
    await failedNew(editor);
  });

  it('the owners table damaged: session/new fails naming the file (not blaming the agent for a reused id), and the journal keeps no session the editor never got', async () => {
    const stored = buildStore(store, dir, 3);
    damagePage(store, rootPageOf(store, 'owners').page, 0);
    editor = PipeEditor.launch({ args: ['--agent', 'demo', '--store', store, '--env', 'DEMO_WORD_DELAY_MS=0'] });
    await initialize(editor);
    await failedNew(editor);
    const listed = await editor.request('session/list', {});
    expect((listed.result?.sessions as Array<{ sessionId: string }>).map((session) => session.sessionId)).to.have.members(stored);
    expect(updates(editor)).to.deep.equal([]);
    expect(await editor.close()).to.deep.include({ code: 0 });
    editor = undefined;
    const journal = sqliteJournal(store);
    try {
      expect(journal.listSessions({}).sessions.map((session) => session.sessionId)).to.have.members(stored);
    } finally {
      journal.close();
    }
  });

  it('journal failures are answered alike whatever the request (session/list, session/new): -32603, the journal\'s message, data naming the store and its code', async () => {
    buildStore(store, dir, 12);
    damagePage(store, rootPageOf(store, 'sessions_by_update').page);
    editor = PipeEditor.launch({ args: ['--agent', 'demo', '--store', store, '--env', 'DEMO_WORD_DELAY_MS=0'] });
    await initialize(editor);
    const listed = await editor.request('session/list', {});
    const created = await editor.request('session/new', { cwd: dir, mcpServers: [] });
    for (const answer of [listed, created]) {
      expect(answer.error?.code, JSON.stringify(answer)).to.equal(-32603);
      expect(answer.error?.message).to.equal(`Internal error: the journal ${store} is damaged (SQLITE_CORRUPT): move it aside or restore a backup`);
      expect(answer.error?.data).to.deep.include({ store, code: 'SQLITE_CORRUPT' });
    }
    expect(created.error?.data?.sessionId).to.be.a('string');
    expect(listed.error?.data).to.not.have.property('sessionId');
  });
});
