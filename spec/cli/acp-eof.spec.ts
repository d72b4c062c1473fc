/**
 * `warden acp` when the editor closes its stdin (EOF) but goes on reading stdout: a script's
 * `printf ... | warden acp`, or a client that writes its requests and half-closes. Every
 * request warden received is answered, exactly once, before it exits 0; stdout failing
 * (EPIPE) stops it at once. The real entry point over real pipes; the built-in demo agent
 * runs as its own subprocess.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childrenOf, isAlive, waitUntil } from '../support/processes.js';
import { binDirectory } from '../support/path-editor.js';
import { PipeEditor, type WireMessage } from '../support/pipe-editor.js';
import { writeLongSession } from '../support/long-session.js';
import { parseAcpArgs } from '../../src/cli/acp.js';

const initializeParams = { protocolVersion: 1, clientCapabilities: {} };

/** A PipeEditor that keeps every message warden wrote, in order (requests to the editor too). */
function launch(args: readonly string[], store = ':memory:'): { editor: PipeEditor; wire: WireMessage[] } {
  const wire: WireMessage[] = [];
  const editor = PipeEditor.launch({ args: ['--agent', 'demo', '--store', store, ...args], onMessage: (message) => wire.push(message) });
  return { editor, wire };
}

/** Waits for warden to exit after stdin was ended (killed past a generous deadline, so a hang fails). */
async function exitOf(editor: PipeEditor, graceMs = 40_000): Promise<{ code: number | null; signal: string | null }> {
  const timer = setTimeout(() => editor.child.kill('SIGKILL'), graceMs);
  try {
    return await editor.exited;
  } finally {
    clearTimeout(timer);
  }
}

/** The streamed answer text of `sessionId`'s turns, as the editor saw it. */
function streamedText(wire: readonly WireMessage[], sessionId: string): string {
  return wire
    .filter((message) => message.method === 'session/update' && message.params?.sessionId === sessionId && message.params.update?.sessionUpdate === 'agent_message_chunk')
    .map((message) => message.params.update.content?.text ?? '')
    .join('');
}

function answersTo(wire: readonly WireMessage[], id: number): WireMessage[] {
  return wire.filter((message) => message.method === undefined && message.id === id);
}

/** Writes a request without waiting for its answer (a pipelining client). */
function write(editor: PipeEditor, id: number, method: string, params: unknown): void {
  editor.writeLine(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
}

describe('warden acp: the editor closes its input (EOF on stdin)', function () {
  this.timeout(90_000);
  const started: PipeEditor[] = [];
  const stopStarted = async () => {
    for (const editor of started.splice(0)) {
      if (editor.running) editor.child.kill('SIGKILL');
      await editor.exited;
    }
  };
  afterEach(stopStarted);

  it('--drain-timeout takes positive seconds; anything else is a usage error naming it', () => {
    expect(parseAcpArgs(['--agent', 'demo', '--drain-timeout', '1.5'])).to.include({ drainTimeoutMs: 1500 });
    expect(parseAcpArgs(['--agent', 'demo'])).to.include({ drainTimeoutMs: undefined });
    for (const bad of ['0', '-3', 'soon']) {
      expect((parseAcpArgs(['--agent', 'demo', '--drain-timeout', bad]) as { error: string }).error).to.match(/--drain-timeout expects a positive number/u);
    }
  });

  it('answers both requests of printf ... | warden acp, then exits 0', async () => {
    const lines = [
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } }),
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/list', params: {} }),
    ];
    // The shell's own pipe, as a user types it: the bare `warden` found through PATH.
    const script = `printf '%s\\n%s\\n' '${lines[0]}' '${lines[1]}' | warden acp --agent demo --store :memory:`;
    const home = mkdtempSync(join(tmpdir(), 'warden-eof-printf-'));
    const bin = binDirectory(home);
    // Its own process group: a hang is killed whole (the shell and the warden it waits for).
    const child = spawn('sh', ['-c', script], { env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => process.kill(-(child.pid as number), 'SIGKILL'), 40_000);
    const code = await new Promise<number | null>((resolve) => child.on('exit', (exitCode) => resolve(exitCode)));
    clearTimeout(timer);
    rmSync(home, { recursive: true, force: true });
    const messages = stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as WireMessage);
    expect(code, stderr).to.equal(0);
    expect(messages.map((message) => message.id)).to.deep.equal([1, 2]);
    expect(messages[0]?.result?.protocolVersion).to.equal(1);
    expect(messages[1]?.result).to.deep.equal({ sessions: [] });
  });

  it('streams the whole answer of a prompt written just before EOF and ends it end_turn, then exits 0', async () => {
    const text = 'Tell me about supervision trees.';
    // The same prompt with stdin left open: the answer to expect.
    const baseline = launch(['--env', 'DEMO_WORD_DELAY_MS=0']);
    started.push(baseline.editor);
    await baseline.editor.request('initialize', initializeParams);
    const baselineSession = (await baseline.editor.request('session/new', { cwd: process.cwd(), mcpServers: [] })).result.sessionId as string;
    expect((await baseline.editor.request('session/prompt', { sessionId: baselineSession, prompt: [{ type: 'text', text }] })).result).to.deep.include({ stopReason: 'end_turn' });
    const expected = streamedText(baseline.wire, baselineSession);
    await baseline.editor.close();
    expect(expected.split(/\s+/u).filter(Boolean).length).to.be.greaterThan(5);

    const { editor, wire } = launch(['--env', 'DEMO_WORD_DELAY_MS=60']);
    started.push(editor);
    await editor.request('initialize', initializeParams, 1);
    const sessionId = (await editor.request('session/new', { cwd: process.cwd(), mcpServers: [] }, 2)).result.sessionId as string;
    write(editor, 3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
    editor.child.stdin.end();
    const exit = await exitOf(editor);
    expect(exit, editor.stderr).to.deep.equal({ code: 0, signal: null });
    const answers = answersTo(wire, 3);
    expect(answers).to.have.length(1);
    expect(answers[0]?.result).to.deep.include({ stopReason: 'end_turn' });
    expect(streamedText(wire, sessionId)).to.equal(expected);
  });

  it('replays a session/load written right after initialize, then EOF, and answers both (a script loading a session)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-eof-'));
    try {
      const store = join(dir, 'journal.sqlite');
      const first = launch(['--env', 'DEMO_WORD_DELAY_MS=0'], store);
      started.push(first.editor);
      await first.editor.request('initialize', initializeParams);
      const sessionId = (await first.editor.request('session/new', { cwd: process.cwd(), mcpServers: [] })).result.sessionId as string;
      await first.editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'remember this' }] });
      const said = streamedText(first.wire, sessionId);
      expect((await first.editor.close()).code).to.equal(0);

      // A second warden on the same store: the script writes both lines and closes stdin at once.
      const { editor, wire } = launch([], store);
      started.push(editor);
      write(editor, 1, 'initialize', initializeParams);
      write(editor, 2, 'session/load', { sessionId, cwd: process.cwd(), mcpServers: [] });
      editor.child.stdin.end();
      const exit = await exitOf(editor);
      expect(exit, editor.stderr).to.deep.equal({ code: 0, signal: null });
      expect(answersTo(wire, 1)).to.have.length(1);
      const loaded = answersTo(wire, 2);
      expect(loaded).to.have.length(1);
      expect(loaded[0]?.error, JSON.stringify(loaded[0]?.error)).to.equal(undefined);
      expect(said.length).to.be.greaterThan(0);
      expect(streamedText(wire, sessionId)).to.equal(said);
    } finally {
      // A warden a failed assertion left running goes first: its store is in dir.
      await stopStarted();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs the prompts queued behind one in flight to their end too, each answered once, in order', async () => {
    const { editor, wire } = launch(['--env', 'DEMO_WORD_DELAY_MS=20']);
    started.push(editor);
    await editor.request('initialize', initializeParams, 1);
    const sessionId = (await editor.request('session/new', { cwd: process.cwd(), mcpServers: [] }, 2)).result.sessionId as string;
    write(editor, 3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'first' }] });
    write(editor, 4, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'second' }] });
    write(editor, 5, 'session/list', {});
    editor.child.stdin.end();
    const exit = await exitOf(editor);
    expect(exit, editor.stderr).to.deep.equal({ code: 0, signal: null });
    for (const id of [3, 4, 5]) expect(answersTo(wire, id), `answers to ${id}`).to.have.length(1);
    expect(answersTo(wire, 3)[0]?.result).to.deep.include({ stopReason: 'end_turn' });
    expect(answersTo(wire, 4)[0]?.result).to.deep.include({ stopReason: 'end_turn' });
    expect(answersTo(wire, 5)[0]?.result?.sessions?.map((session: { sessionId: string }) => session.sessionId)).to.include(sessionId);
    expect(wire.indexOf(answersTo(wire, 3)[0] as WireMessage)).to.be.lessThan(wire.indexOf(answersTo(wire, 4)[0] as WireMessage));
  });

  it('answers a permission asked after EOF cancelled, so that the turn ends (no hang)', async () => {
    const { editor, wire } = launch(['--env', 'DEMO_WORD_DELAY_MS=5']);
    started.push(editor);
    await editor.request('initialize', initializeParams, 1);
    const sessionId = (await editor.request('session/new', { cwd: process.cwd(), mcpServers: [] }, 2)).result.sessionId as string;
    // The demo agent asks permission before running its tool (session mode "ask", the default).
    write(editor, 3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'please run the tool' }] });
    editor.child.stdin.end();
    const exit = await exitOf(editor);
    expect(exit, editor.stderr).to.deep.equal({ code: 0, signal: null });
    const answers = answersTo(wire, 3);
    expect(answers).to.have.length(1);
    expect(answers[0]?.result?.stopReason).to.be.oneOf(['end_turn', 'cancelled']);
    const toolUpdates = wire.filter((message) => message.params?.update?.sessionUpdate === 'tool_call_update').map((message) => JSON.stringify(message.params.update));
    expect(toolUpdates.join('\n')).to.include('the permission request was cancelled');
  });

  it('cancels a turn longer than --drain-timeout 1 and answers it cancelled, the one queued behind it too, then exits 0', async () => {
    // 2 s a word: the turn would take far longer than the drain timeout.
    const { editor, wire } = launch(['--env', 'DEMO_WORD_DELAY_MS=2000', '--drain-timeout', '1']);
    started.push(editor);
    await editor.request('initialize', initializeParams, 1);
    const sessionId = (await editor.request('session/new', { cwd: process.cwd(), mcpServers: [] }, 2)).result.sessionId as string;
    write(editor, 3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'a long answer please' }] });
    write(editor, 4, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'and another' }] });
    editor.child.stdin.end();
    const exit = await exitOf(editor);
    expect(exit, editor.stderr).to.deep.equal({ code: 0, signal: null });
    expect(answersTo(wire, 3)).to.have.length(1);
    expect(answersTo(wire, 4)).to.have.length(1);
    // ACP: a cancelled turn ends with stopReason "cancelled", not an error.
    expect(answersTo(wire, 3)[0]?.result).to.deep.equal({ stopReason: 'cancelled' });
    expect(answersTo(wire, 4)[0]?.result).to.deep.equal({ stopReason: 'cancelled' });
  });

  it('stops at once, leaving no process, when stdout is closed by its reader too (EPIPE)', async () => {
    // --drain-timeout 600 and 3 s a word (a turn of more than 30 s): only EPIPE can end this within the deadline.
    const { editor } = launch(['--env', 'DEMO_WORD_DELAY_MS=3000', '--drain-timeout', '600']);
    started.push(editor);
    await editor.request('initialize', initializeParams, 1);
    const sessionId = (await editor.request('session/new', { cwd: process.cwd(), mcpServers: [] }, 2)).result.sessionId as string;
    const wardenPid = editor.child.pid as number;
    const agents = childrenOf(wardenPid);
    expect(agents, 'the demo agent runs as a child of warden').to.have.length.greaterThan(0);
    write(editor, 3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'a long answer please, with many words in it' }] });
    // The editor is really gone: it reads nothing more and writes nothing more.
    editor.child.stdout.destroy();
    editor.child.stdin.end();
    const exit = await exitOf(editor, 15_000);
    expect(exit.signal, `warden had to be killed: ${editor.stderr}`).to.equal(null);
    for (const agent of agents) await waitUntil(() => !isAlive(agent.pid), `the demo agent ${agent.pid} (${agent.cmdline}) to be gone`);
  });

  it('does not outlive the drain timeout when the editor closed stdin and never reads again (a big replay stuck in the pipe)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-eof-'));
    try {
      const store = join(dir, 'journal.sqlite');
      // 20,000 updates of 1 KiB: a 20 MiB replay, far more than the pipe and warden's 1 MiB high-water mark.
      const sessionId = writeLongSession(store, process.cwd(), 20_000, 1024);
      const editor = PipeEditor.launch({ args: ['--agent', 'demo', '--store', store, '--drain-timeout', '1'] });
      started.push(editor);
      // It reads nothing at all, but keeps stdout open.
      editor.pauseReading();
      write(editor, 1, 'initialize', initializeParams);
      write(editor, 2, 'session/load', { sessionId, cwd: process.cwd(), mcpServers: [] });
      editor.child.stdin.end();
      const exit = await exitOf(editor, 30_000);
      expect(exit, `warden had to be killed: ${editor.stderr}`).to.deep.equal({ code: 0, signal: null });
    } finally {
      // A warden a failed assertion left running goes first: its store is in dir.
      await stopStarted();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
