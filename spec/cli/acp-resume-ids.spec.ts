/**
 * Resume ids from outside never reach an agent's command line unchecked (issue 14,
 * "Injection and secrets"): `warden acp --agent claude` / `--agent codex`, the fake CLIs
 * found by name on the PATH, an editor that asks to resume a session with a hostile
 * `_meta["acp-warden/resume"]`. The answer is -32602 naming the field and its form; no CLI is
 * started; a well-formed id still resumes, passed as one `--resume=<id>` argument.
 */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { launchWarden, pathWithFakeAgents, stopWardens } from '../support/acp-editor.js';
import { isAlive, waitUntil } from '../support/processes.js';

/** The starts a fake CLI logged (one JSON line each: pid and argv). */
function startsIn(log: string): Array<{ pid: number; args: string[] }> {
  try {
    return readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as { pid: number; args: string[] });
  } catch {
    return [];
  }
}

const resumeMeta = (agent: string, state: unknown) => ({ 'acp-warden/agent': agent, 'acp-warden/resume': state });

describe('warden acp: resume ids from the editor or the journal are checked before they reach a CLI', function () {
  this.timeout(60_000);
  let dir: string;
  let argvLog: string;
  let path: string;

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-resume-ids-')));
    argvLog = join(dir, 'starts.ndjson');
    path = pathWithFakeAgents(dir);
  });

  afterEach(async () => {
    await stopWardens();
    for (const start of startsIn(argvLog)) await waitUntil(() => !isAlive(start.pid), `fake CLI ${start.pid} to be gone`, 20_000);
    rmSync(dir, { recursive: true, force: true });
  });

  it('claude: a claudeSessionId from the editor\'s _meta that is a flag (--dangerously-skip-permissions) is -32602 naming the field, and no claude is started', async () => {
    const warden = await launchWarden(['--agent', 'claude', '--store', ':memory:', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`], { PATH: path });
    const hostile = { claudeSessionId: '--dangerously-skip-permissions' };
    for (const method of ['session/resume', 'session/load']) {
      const refused = await warden.failure(method, { sessionId: 'claude-hostile', cwd: dir, mcpServers: [], _meta: resumeMeta('claude', hostile) });
      expect(refused.code, method).to.equal(-32602);
      expect(refused.message).to.contain('_meta["acp-warden/resume"].claudeSessionId').and.to.contain('UUID');
      expect(refused.data).to.deep.include({ field: '_meta["acp-warden/resume"].claudeSessionId' });
    }
    // An id with a space or a second option in it is no better.
    for (const [index, claudeSessionId] of ['3f14e166-314b-4cc3-b08e-882eb52c9a8d --permission-mode bypassPermissions', '', 42].entries()) {
      const refused = await warden.failure('session/resume', { sessionId: `claude-other-${index}`, cwd: dir, mcpServers: [], _meta: resumeMeta('claude', { claudeSessionId }) });
      expect(refused.code, JSON.stringify(claudeSessionId)).to.equal(-32602);
    }
    expect(startsIn(argvLog), 'no claude was started').to.deep.equal([]);
    expect(await warden.close()).to.equal(0);
  });

  it('claude: a journal whose resume state was edited to a flag is refused the same way on session/load and session/resume, and no claude is started', async () => {
    const store = join(dir, 'journal.sqlite');
    // A journal file anyone with access to it could have edited.
    const journal = sqliteJournal(store);
    journal.createSession({ sessionId: 'claude-edited', agent: 'claude', cwd: dir });
    journal.setResume('claude-edited', { claudeSessionId: '--dangerously-skip-permissions' });
    journal.close();
    const warden = await launchWarden(['--agent', 'claude', '--store', store, '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`], { PATH: path });
    for (const method of ['session/load', 'session/resume']) {
      const refused = await warden.failure(method, { sessionId: 'claude-edited', cwd: dir, mcpServers: [] });
      expect(refused.code, method).to.equal(-32602);
      expect(refused.message).to.contain('claudeSessionId');
    }
    expect(startsIn(argvLog), 'no claude was started').to.deep.equal([]);
    expect(await warden.close()).to.equal(0);
  });

  it('claude: a well-formed session id resumes, passed as the single argument --resume=<id>', async () => {
    const id = '3f14e166-314b-4cc3-b08e-882eb52c9a8d';
    const warden = await launchWarden(['--agent', 'claude', '--store', ':memory:', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`, '--env', 'FAKE_CLAUDE_FIXTURE=hello'], { PATH: path });
    await warden.request('session/resume', { sessionId: 'claude-fine', cwd: dir, mcpServers: [], _meta: resumeMeta('claude', { claudeSessionId: id }) });
    const answer = await warden.request<{ stopReason: string }>('session/prompt', { sessionId: 'claude-fine', prompt: [{ type: 'text', text: 'hello' }] });
    expect(answer.stopReason).to.equal('end_turn');
    const [start] = startsIn(argvLog);
    expect(start?.args).to.include(`--resume=${id}`);
    expect(start?.args).to.not.include('--resume');
    expect(await warden.close()).to.equal(0);
  });

  it('codex: a threadId that is not a thread id (a path, a flag) is -32602 naming the field, and no codex is started', async () => {
    const warden = await launchWarden(['--agent', 'codex', '--store', ':memory:', '--env', `FAKE_CODEX_ARGV_LOG=${argvLog}`], { PATH: path });
    for (const [index, threadId] of ['../../../etc/passwd', '--help', 'thr_1'].entries()) {
      const refused = await warden.failure('session/resume', { sessionId: `codex-hostile-${index}`, cwd: dir, mcpServers: [], _meta: resumeMeta('codex', { threadId }) });
      expect(refused.code, threadId).to.equal(-32602);
      expect(refused.message).to.contain('_meta["acp-warden/resume"].threadId').and.to.contain('Codex thread id');
    }
    expect(startsIn(argvLog), 'no codex was started').to.deep.equal([]);
    expect(await warden.close()).to.equal(0);
  });

  /** Warden on claude, by `--agent-command` or found on the PATH as an editor's warden finds it; the journal is the point. */
  async function refusedResumesLeaveNoTrace(lookup: 'agent-command' | 'path'): Promise<void> {
    const store = join(dir, 'journal.sqlite');
    const claude = join(dir, 'bin', 'claude');
    const args = ['--agent', 'claude', ...(lookup === 'agent-command' ? ['--agent-command', claude] : []), '--store', store, '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`, '--env', 'FAKE_CLAUDE_FIXTURE=hello'];
    const warden = await launchWarden(args, { PATH: path });
    const hostile = { claudeSessionId: '--dangerously-skip-permissions' };
    for (const method of ['session/resume', 'session/load']) {
      const refused = await warden.failure(method, { sessionId: `claude-hostile-${method}`, cwd: dir, mcpServers: [], _meta: resumeMeta('claude', hostile) });
      expect(refused.code, method).to.equal(-32602);
    }
    await warden.request('session/resume', { sessionId: 'claude-fine', cwd: dir, mcpServers: [], _meta: resumeMeta('claude', { claudeSessionId: '3f14e166-314b-4cc3-b08e-882eb52c9a8d' }) });
    const listedIds = async (editor: typeof warden) => (await editor.request<{ sessions: Array<{ sessionId: string }> }>('session/list', {})).sessions.map((session) => session.sessionId);
    expect(await listedIds(warden)).to.deep.equal(['claude-fine']);
    // Refused again later, not "known to the journal" with a hostile resume state.
    const again = await warden.failure('session/load', { sessionId: 'claude-hostile-session/resume', cwd: dir, mcpServers: [] });
    expect(again.code).to.equal(-32002);
    expect(await warden.close()).to.equal(0);
    const next = await launchWarden(args, { PATH: path });
    expect(await listedIds(next)).to.deep.equal(['claude-fine']);
    expect(await next.close()).to.equal(0);
  }

  it('claude: a refused hostile resume (session/resume and session/load) leaves nothing in the journal: session/list does not show it, in this warden or the next; an accepted one stays', () => refusedResumesLeaveNoTrace('agent-command'));

  it('claude found on the PATH (no --agent-command, as an editor launches it): a refused hostile resume leaves nothing in the journal either, in this warden or the next; an accepted one stays', () => refusedResumesLeaveNoTrace('path'));
});
