/**
 * When the agent handler itself fails (the host agent actor ends in error), `warden acp`
 * never exits as if the editor had left (issue 14, "never a silent exit"): what was pending
 * is answered -32603 first, then warden exits 1 with one line on stderr naming what failed.
 * The real path that fails it here: a journal entry edited into text that is not JSON, met
 * by the replay of `session/load` (the journal wraps SQLite's errors, not a bad entry's).
 */
import { methods } from '@agentclientprotocol/sdk';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteJournal } from '../../src/host/sqlite-journal.js';
import { killLaunched, launchWarden, wireErrorOf } from '../support/warden-editor.js';

describe('warden acp: the agent handler fails', function () {
  this.timeout(60_000);
  let dir: string;

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-handler-')));
  });

  afterEach(async () => {
    await killLaunched();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a journal entry that is not JSON, met by session/load: the load is answered -32603, then warden exits 1 naming the failure on stderr', async () => {
    const store = join(dir, 'journal.sqlite');
    const journal = sqliteJournal(store);
    journal.createSession({ sessionId: 'edited', agent: 'demo', cwd: dir });
    journal.append('edited', { kind: 'prompt', prompt: [{ type: 'text', text: 'hello' }] });
    journal.close();
    const db = new Database(store);
    db.prepare("UPDATE entries SET entry = '{\"kind\": \"prompt\", ' WHERE session_id = 'edited'").run();
    db.close();

    const warden = await launchWarden(['--agent', 'demo', '--store', store]);
    const refused = await wireErrorOf(warden.request(methods.agent.session.load, { sessionId: 'edited', cwd: dir, mcpServers: [] }));
    expect(refused.code).to.equal(-32603);
    expect(refused.message).to.contain('the agent failed');
    expect(await warden.exited).to.equal(1);
    expect(warden.stderr()).to.match(/^warden acp: the agent handler failed: .*JSON/mu);
  });
});
