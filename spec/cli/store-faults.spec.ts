/**
 * `warden acp --store FILE` over a damaged store (issue 14): a journal that fails fails the
 * request that met it (-32603 naming the file and the fix), never the host; warden goes on
 * serving and exits cleanly when the editor leaves.
 */
import { methods } from '@agentclientprotocol/sdk';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildStore, damagePage, rootPageOf } from '../support/store-damage.js';
import { killLaunched, launchWarden, wireErrorOf, type WireError } from '../support/warden-editor.js';

const main = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

describe('warden acp on a damaged store (issue 14)', function () {
  this.timeout(120_000);
  let dir: string;
  let store: string;

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-store-faults-')));
    store = join(dir, 'journal.sqlite');
  });

  afterEach(async () => {
    await killLaunched();
    rmSync(dir, { recursive: true, force: true });
  });

  const expectDamaged = (error: WireError) => {
    expect(error.code).to.equal(-32603);
    expect(error.message).to.contain(`the journal ${store} is damaged (SQLITE_CORRUPT): move it aside or restore a backup`);
  };

  it('a damaged page of the entries table: loading a known session fails naming the file; an unknown id, session/list, a new session and its prompt are served; warden exits 0 when the editor leaves', async () => {
    const [known] = buildStore(store, dir, 12);
    const entries = rootPageOf(store, 'entries');
    expect(entries.type).to.equal('internal'); // the page every read of an entry goes through
    damagePage(store, entries.page);

    const warden = await launchWarden(['--agent', 'demo', '--store', store, '--env', 'DEMO_WORD_DELAY_MS=0']);
    expectDamaged(await wireErrorOf(warden.request(methods.agent.session.load, { sessionId: known, cwd: dir, mcpServers: [] })));
    const unknown = await wireErrorOf(warden.request(methods.agent.session.load, { sessionId: 'never-seen', cwd: dir, mcpServers: [] }));
    expect(unknown.code).to.equal(-32002);
    const listed = await warden.request<{ sessions: Array<{ sessionId: string }> }>(methods.agent.session.list, {});
    expect(listed.sessions).to.have.length(12);
    const { sessionId } = await warden.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const answered = await warden.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(answered.stopReason).to.equal('end_turn');
    // Still serving: the damaged session answers the same again, not "shutting down".
    expectDamaged(await wireErrorOf(warden.request(methods.agent.session.load, { sessionId: known, cwd: dir, mcpServers: [] })));
    expect((await warden.request<{ sessions: unknown[] }>(methods.agent.session.list, {})).sessions).to.have.length(13);
    expect(warden.stderr()).to.contain(`the journal ${store} is damaged`);
    expect(await warden.close()).to.equal(0);
  });

  it('an entry that is not JSON (edited by hand, or damage SQLite cannot see): loading that session fails naming the file and the fix; another session loads, and warden goes on serving', async () => {
    const [edited, intact] = buildStore(store, dir, 2);
    const db = new Database(store);
    db.prepare("UPDATE entries SET entry = '{\"kind\": \"prompt\", ' WHERE session_key = (SELECT key FROM sessions WHERE session_id = ?) AND entry LIKE '%\"prompt\"%'").run(edited);
    db.close();

    const warden = await launchWarden(['--agent', 'demo', '--store', store, '--env', 'DEMO_WORD_DELAY_MS=0']);
    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = await wireErrorOf(warden.request(methods.agent.session.load, { sessionId: edited, cwd: dir, mcpServers: [] }));
      expect(refused.code).to.equal(-32603);
      expect(refused.message).to.contain(`the journal ${store} holds an entry that is not JSON (WARDEN_ENTRY_DAMAGED): move it aside or restore a backup`);
    }
    await warden.request(methods.agent.session.load, { sessionId: intact, cwd: dir, mcpServers: [] });
    const answered = await warden.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId: intact, prompt: [{ type: 'text', text: 'hello' }] });
    expect(answered.stopReason).to.equal('end_turn');
    expect(await warden.close()).to.equal(0);
  });

  it('a damaged page of the entries index: a prompt that cannot be journaled is refused naming the file, every time; warden goes on serving', async () => {
    buildStore(store, dir, 12);
    const index = rootPageOf(store, 'entries_by_session');
    damagePage(store, index.page);

    const warden = await launchWarden(['--agent', 'demo', '--store', store, '--env', 'DEMO_WORD_DELAY_MS=0']);
    const { sessionId } = await warden.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const refused = await wireErrorOf(warden.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] }));
    expectDamaged(refused);
    expect(refused.message).to.contain('the prompt was not sent to the agent');
    const again = await wireErrorOf(warden.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] }));
    expectDamaged(again);
    expect((await warden.request<{ sessions: unknown[] }>(methods.agent.session.list, {})).sessions).to.have.length(13);
    expect(await warden.close()).to.equal(0);
  });

  it('a damaged page of the sessions index: load of a known and of an unknown id and session/new fail naming the file; session/list and warden go on', async () => {
    const [known] = buildStore(store, dir, 12);
    const index = rootPageOf(store, 'sqlite_autoindex_sessions_1');
    expect(index.type).to.equal('leaf');
    damagePage(store, index.page);

    const warden = await launchWarden(['--agent', 'demo', '--store', store, '--env', 'DEMO_WORD_DELAY_MS=0']);
    expectDamaged(await wireErrorOf(warden.request(methods.agent.session.load, { sessionId: 'never-seen', cwd: dir, mcpServers: [] })));
    expectDamaged(await wireErrorOf(warden.request(methods.agent.session.load, { sessionId: known, cwd: dir, mcpServers: [] })));
    expectDamaged(await wireErrorOf(warden.request(methods.agent.session.resume, { sessionId: known, cwd: dir, mcpServers: [] })));
    const listed = await warden.request<{ sessions: Array<{ sessionId: string }> }>(methods.agent.session.list, {});
    expect(listed.sessions.map((session) => session.sessionId)).to.include(known);
    expectDamaged(await wireErrorOf(warden.request(methods.agent.session.new, { cwd: dir, mcpServers: [] })));
    expectDamaged(await wireErrorOf(warden.request(methods.agent.session.load, { sessionId: 'never-seen', cwd: dir, mcpServers: [] })));
    expect(await warden.close()).to.equal(0);
  });

  it('a damaged first page (the header): warden acp exits 2 at once naming the file and the fix, nothing on stdout', () => {
    buildStore(store, dir, 2);
    damagePage(store, 1, 0);
    const run = spawnSync(process.execPath, [main, 'acp', '--agent', 'demo', '--store', store], { input: '', encoding: 'utf8', timeout: 60_000 });
    expect(run.status).to.equal(2);
    expect(run.stdout).to.equal('');
    expect(run.stderr).to.contain(`cannot open the journal at ${store}: file is not a database (SQLITE_NOTADB): move it aside or restore a backup`);
  });
});
