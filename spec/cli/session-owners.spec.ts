/**
 * A session is live in one warden at a time (issue 14): two `warden acp` processes on one
 * store, as two editor windows would run them. The second refuses to load or resume what the
 * first runs, naming its pid; the first's close, its exit, or its death (SIGKILL) frees it.
 */
import { methods } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive, waitUntil } from '../support/processes.js';
import { killLaunched, launchWarden, wireErrorOf, type WardenEditor, type WireError } from '../support/warden-editor.js';

describe('warden acp: one owner per session across wardens (issue 14)', function () {
  this.timeout(120_000);
  let dir: string;
  let store: string;
  const args = () => ['--agent', 'demo', '--store', store, '--env', 'DEMO_WORD_DELAY_MS=0'];

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-owners-')));
    store = join(dir, 'journal.sqlite');
  });

  afterEach(async () => {
    await killLaunched();
    rmSync(dir, { recursive: true, force: true });
  });

  const expectOwnedBy = (error: WireError, owner: WardenEditor, sessionId: string) => {
    expect(error.code).to.equal(-32603);
    expect(error.message).to.contain(`session ${sessionId} is live in another warden (pid ${owner.pid} on `);
    expect(error.message).to.contain('close it there');
    expect(error.data?.reason).to.equal('session_owned');
    expect((error.data?.owner as { pid: number }).pid).to.equal(owner.pid);
  };

  it('a second warden refuses session/load and session/resume of a session the first runs, naming its pid; after the first is SIGKILLed, the load succeeds', async () => {
    const first = await launchWarden(args());
    const { sessionId } = await first.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    await first.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'remember this' }] });

    const second = await launchWarden(args());
    expectOwnedBy(await wireErrorOf(second.request(methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] })), first, sessionId);
    expectOwnedBy(await wireErrorOf(second.request(methods.agent.session.resume, { sessionId, cwd: dir, mcpServers: [] })), first, sessionId);
    // The first goes on with it undisturbed.
    const answered = await first.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'still mine' }] });
    expect(answered.stopReason).to.equal('end_turn');

    process.kill(first.pid, 'SIGKILL');
    await waitUntil(() => !isAlive(first.pid), 'the first warden to be dead', 20_000);
    await second.request(methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] });
    const next = await second.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'mine now' }] });
    expect(next.stopReason).to.equal('end_turn');
    expect(await second.close()).to.equal(0);
  });

  it('session/close in the first frees that session for the second; the first exiting frees the rest; the second can then hold them against a third', async () => {
    const first = await launchWarden(args());
    const closed = await first.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const kept = await first.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    await first.request(methods.agent.session.close, { sessionId: closed.sessionId });

    const second = await launchWarden(args());
    await second.request(methods.agent.session.load, { sessionId: closed.sessionId, cwd: dir, mcpServers: [] });
    expectOwnedBy(await wireErrorOf(second.request(methods.agent.session.load, { sessionId: kept.sessionId, cwd: dir, mcpServers: [] })), first, kept.sessionId);
    expect(await first.close()).to.equal(0);
    await second.request(methods.agent.session.resume, { sessionId: kept.sessionId, cwd: dir, mcpServers: [] });

    const third = await launchWarden(args());
    expectOwnedBy(await wireErrorOf(third.request(methods.agent.session.load, { sessionId: closed.sessionId, cwd: dir, mcpServers: [] })), second, closed.sessionId);
    expect(await second.close()).to.equal(0);
    expect(await third.close()).to.equal(0);
  });
});
