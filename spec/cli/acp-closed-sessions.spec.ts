/**
 * A session the editor closed is over for every layer (issue 14 leftovers): after
 * `session/close` through the host, the ACP passthrough in front of a native agent (here the
 * demo agent, a real subprocess) forgets it, so that after the agent process is killed and
 * restarted it is not re-attached, and the host reports no restart, recovery or failure of
 * it: the editor hears nothing more of a session it closed. The other session recovers.
 */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchWarden, stopWardens } from '../support/acp-editor.js';
import { childrenOf, isAlive, waitUntil, wholeLines } from '../support/processes.js';

interface LogLine {
  readonly type: string;
  readonly sessionId?: string;
}

describe('warden acp --agent demo: a closed session stays closed across an agent restart', function () {
  this.timeout(90_000);
  let dir: string;

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-closed-')));
  });

  afterEach(async () => {
    await stopWardens();
    rmSync(dir, { recursive: true, force: true });
  });

  it('two sessions, one closed, the demo agent killed (SIGKILL), the other prompted: no restarting / recovered / failed event for the closed one, the other recovers and answers', async () => {
    const logFile = join(dir, 'warden.log');
    // --agent demo: the agent lookup on the PATH is not the point here.
    const warden = await launchWarden(['--agent', 'demo', '--store', join(dir, 'journal.sqlite'), '--log-file', logFile, '--log-level', 'debug', '--env', 'DEMO_WORD_DELAY_MS=1'], {});
    const open = await warden.request<{ sessionId: string }>('session/new', { cwd: dir, mcpServers: [] });
    const closed = await warden.request<{ sessionId: string }>('session/new', { cwd: dir, mcpServers: [] });
    for (const { sessionId } of [open, closed]) {
      const answer = await warden.request<{ stopReason: string }>('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
      expect(answer.stopReason).to.equal('end_turn');
    }
    await warden.request('session/close', { sessionId: closed.sessionId });

    const agent = childrenOf(warden.process.pid as number).find((child) => child.cmdline.includes('demo-agent'))?.pid as number;
    expect(agent, 'the demo agent process').to.be.a('number');
    process.kill(agent, 'SIGKILL');
    await waitUntil(() => !isAlive(agent), 'the demo agent to be dead', 20_000);
    // Read while warden writes: only whole lines (the last one may be half written).
    const log = (): LogLine[] => wholeLines(readFileSync(logFile, 'utf8')).map((line) => JSON.parse(line) as LogLine);
    await waitUntil(() => log().some((entry) => entry.type === 'session.recovered' && entry.sessionId === open.sessionId), 'the open session to be recovered', 30_000);
    const answer = await warden.request<{ stopReason: string }>('session/prompt', { sessionId: open.sessionId, prompt: [{ type: 'text', text: 'hello again' }] });
    expect(answer.stopReason).to.equal('end_turn');

    const aboutClosed = log().filter((entry) => entry.sessionId === closed.sessionId).map((entry) => entry.type);
    expect(aboutClosed).to.include('session.closed');
    expect(aboutClosed.filter((type) => ['session.restarting', 'session.recovered', 'session.failed'].includes(type)), 'events of the closed session after its close').to.deep.equal([]);
    expect(log().some((entry) => entry.type === 'session.restarting' && entry.sessionId === open.sessionId)).to.equal(true);
    expect(await warden.close()).to.equal(0);
  });
});
