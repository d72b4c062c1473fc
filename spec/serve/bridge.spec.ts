/**
 * `warden acp --connect URL` (issue 16): the official SDK client on the bridge's stdio through
 * a real `warden serve --agent demo`; the end of stdin waits for the answers; the errors an
 * editor shows (nothing listens, a wrong token, no token file, the daemon gone) with their
 * exit statuses; kill -9 of the bridge leaves the daemon serving.
 */
import { client, methods } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteJournal as sqliteJournalRows } from '../support/journal-rows.js';
import { isAlive, waitUntil } from '../support/processes.js';
import { answerText, sdkOverWebSocket, startServe, stateEnv, type SdkUpdate, type ServeDaemon } from '../support/serve-daemon.js';
import { connectOverStdio, exitCodeOf, killGroups, stderrOf, wardenMain } from '../support/warden-process.js';

const launched: ChildProcess[] = [];

/** `warden acp ARGS` (the bridge), in a group of its own. */
function bridge(state: string, args: readonly string[]): { process: ChildProcess; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [wardenMain, 'acp', ...args], { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: stateEnv(state) });
  launched.push(child);
  return { process: child, stderr: stderrOf(child), exited: exitCodeOf(child) };
}

/** The SDK client on a bridge's stdio, its updates recorded. */
function sdkOverBridge(child: ChildProcess): { agent: { request(method: string, params: unknown): Promise<Record<string, unknown>> }; updates: SdkUpdate[] } {
  const updates: SdkUpdate[] = [];
  const app = client({ name: 'bridge-test-editor' }).onNotification(methods.client.session.update, ({ params }) => {
    updates.push(params as unknown as SdkUpdate);
  });
  return { agent: connectOverStdio(app as never, child) as never, updates };
}

const initializeParams = { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'bridge-test-editor', version: '1' } };

describe('warden acp --connect (issue 16)', function () {
  this.timeout(90_000);
  let state: string;
  let daemon: ServeDaemon;

  before(async () => {
    state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-bridge-')));
    daemon = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', join(state, 'journal.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=1'], launched);
  });

  after(async () => {
    await killGroups(launched, { descendants: true });
    rmSync(state, { recursive: true, force: true });
  });

  it('the SDK client on its stdio: initialize, session/new, a prompt streamed; stdin closed: exit 0, nothing on stderr', async () => {
    const running = bridge(state, ['--connect', daemon.url]);
    const sdk = sdkOverBridge(running.process);
    const init = await sdk.agent.request(methods.agent.initialize, initializeParams);
    expect(init.agentInfo).to.deep.include({ name: 'acp-warden-demo' });
    const { sessionId } = (await sdk.agent.request(methods.agent.session.new, { cwd: state, mcpServers: [] })) as { sessionId: string };
    expect(await sdk.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'through the bridge' }] })).to.deep.equal({ stopReason: 'end_turn' });
    expect(answerText(sdk.updates, sessionId)).to.equal('You said: through the bridge. This is the acp-warden demo agent, answering word by word.');
    running.process.stdin?.end();
    expect(await running.exited).to.equal(0);
    expect(running.stderr()).to.equal('');
  });

  it('stdin ends right after the requests (a script piping them): every answer is written before the bridge exits 0', async () => {
    const running = bridge(state, ['--connect', daemon.url]);
    let stdout = '';
    running.process.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: initializeParams },
      { jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: state, mcpServers: [] } },
    ];
    running.process.stdin?.end(`${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
    expect(await running.exited).to.equal(0);
    const answers = stdout.trim().split('\n').map((line) => JSON.parse(line) as { id?: number; result?: unknown });
    expect(answers.filter((answer) => answer.result !== undefined).map((answer) => answer.id)).to.deep.equal([1, 2]);
  });

  it('an editor that stops reading: the bridge stops reading the socket, and once read again every update arrives, in order', async () => {
    const running = bridge(state, ['--connect', daemon.url]);
    const stdout = running.process.stdout as NonNullable<ChildProcess['stdout']>;
    const words = Array.from({ length: 3000 }, (_, n) => `word${n}`);
    const send = (message: unknown) => running.process.stdin?.write(`${JSON.stringify(message)}\n`);
    let text = '';
    let buffered = '';
    const answers = new Map<number, Record<string, unknown>>();
    const read = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        const message = JSON.parse(buffered.slice(0, newline)) as { id?: number; params?: { update?: { sessionUpdate?: string; content?: { text?: string } } } };
        buffered = buffered.slice(newline + 1);
        if (typeof message.id === 'number') answers.set(message.id, message as Record<string, unknown>);
        if (message.params?.update?.sessionUpdate === 'agent_message_chunk') text += message.params.update.content?.text ?? '';
        newline = buffered.indexOf('\n');
      }
    };
    stdout.on('data', read);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: initializeParams });
    send({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: state, mcpServers: [] } });
    await waitUntil(() => answers.has(2), 'the session', 30_000);
    const sessionId = (answers.get(2)?.result as { sessionId: string }).sessionId;
    stdout.pause();
    send({ jsonrpc: '2.0', id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: words.join(' ') }] } });
    // Not read meanwhile: the pipe fills, the bridge holds the socket, the daemon holds its updates.
    // Read again once the whole turn is journaled (its stop): the editor read nothing of it all along.
    const turnEnded = () => (sqliteJournalRows(join(state, 'journal.sqlite'), [sessionId]).get(sessionId) ?? []).some((row) => row.entry.kind === 'stop');
    await waitUntil(turnEnded, 'the turn to end in the journal while the editor reads nothing', 60_000, 50);
    expect(stdout.readableLength, "the editor's read buffer, full").to.be.at.least(stdout.readableHighWaterMark);
    stdout.resume();
    await waitUntil(() => answers.has(3), 'the prompt answered', 60_000);
    expect(answers.get(3)?.result).to.deep.equal({ stopReason: 'end_turn' });
    expect(text).to.equal(`You said: ${words.join(' ')}. This is the acp-warden demo agent, answering word by word.`);
    running.process.stdin?.end();
    expect(await running.exited).to.equal(0);
  });

  it('nothing listens at the URL: exit 3, naming the URL and warden serve', async () => {
    const running = bridge(state, ['--connect', 'ws://127.0.0.1:1/acp', '--token-file', daemon.tokenFile]);
    expect(await running.exited).to.equal(3);
    expect(running.stderr()).to.include('cannot connect to ws://127.0.0.1:1/acp').and.include('warden serve');
  });

  it('a token the daemon refuses: exit 4, naming the token file; no token file: exit 2', async () => {
    const wrong = join(state, 'wrong-token');
    writeFileSync(wrong, 'not-the-token\n', { mode: 0o600 });
    const refused = bridge(state, ['--connect', daemon.url, '--token-file', wrong]);
    expect(await refused.exited).to.equal(4);
    expect(refused.stderr()).to.include('(401)').and.include(wrong);
    const missing = bridge(state, ['--connect', daemon.url, '--token-file', join(state, 'none')]);
    expect(await missing.exited).to.equal(2);
    expect(missing.stderr()).to.include('no token file at');
  });

  it('kill -9 of the bridge mid-turn: the daemon stays up and serves the next connection', async () => {
    const running = bridge(state, ['--connect', daemon.url]);
    const sdk = sdkOverBridge(running.process);
    await sdk.agent.request(methods.agent.initialize, initializeParams);
    const { sessionId } = (await sdk.agent.request(methods.agent.session.new, { cwd: state, mcpServers: [] })) as { sessionId: string };
    void sdk.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: Array.from({ length: 200 }, (_, n) => `w${n}`).join(' ') }] }).catch(() => undefined);
    await waitUntil(() => answerText(sdk.updates, sessionId).length > 0, 'the turn to stream');
    process.kill(running.process.pid as number, 'SIGKILL');
    await running.exited;
    expect(isAlive(daemon.process.pid)).to.equal(true);
    const next = sdkOverWebSocket(daemon);
    try {
      await next.agent.request(methods.agent.initialize, initializeParams);
      const listed = (await next.agent.request(methods.agent.session.list, {})) as { sessions: Array<{ sessionId: string }> };
      expect(listed.sessions.map((session) => session.sessionId)).to.include(sessionId);
    } finally {
      next.close();
    }
  });

  it('--agent with --connect: the sessions the editor starts ask for that agent', async () => {
    const running = bridge(state, ['--connect', daemon.url, '--agent', 'no-such-agent']);
    const sdk = sdkOverBridge(running.process);
    await sdk.agent.request(methods.agent.initialize, initializeParams);
    const refused = await sdk.agent.request(methods.agent.session.new, { cwd: state, mcpServers: [] }).then(() => undefined, (error: Error) => error);
    expect(JSON.stringify(refused)).to.include('no-such-agent');
    running.process.stdin?.end();
    expect(await running.exited).to.equal(0);
  });
});
