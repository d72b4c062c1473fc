/**
 * Big agent lines through a real `warden acp`, launched as an editor does (agents found on
 * PATH): Claude Code's `user` line with a Read tool's 5 MB screenshot, a native ACP agent's
 * 5 MB session/update, both delivered whole; a line over `--max-line-mib` is skipped and
 * logged, the agent is not killed, the turn still ends, and a lost answer fails its request.
 */
import { expect } from 'chai';
import { wholeLines } from '../support/processes.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSession, PipeEditor, pipeEditorWorld, type WireMessage } from '../support/pipe-editor.js';

const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const fakeCodex = fileURLToPath(new URL('../support/fake-codex.mjs', import.meta.url));
const sdkAgent = fileURLToPath(new URL('../support/sdk-agent.mjs', import.meta.url));
const fiveMb = 5 * 1024 * 1024;

/** The fakes' screenshot (the same bytes as `fakeImageBase64` in spec/support/fixture-replay.mjs). */
function fakeImageBase64(length: number): string {
  const bytes = Buffer.alloc(Math.ceil((length * 3) / 4) + 3);
  for (let index = 0; index < bytes.length; index++) bytes[index] = (index * 131 + 7 + (index >> 8)) & 0xff;
  return bytes.toString('base64').slice(0, length);
}

interface LogLine {
  readonly type: string;
  readonly level: string;
  readonly message: string;
  readonly bytes?: number;
  readonly limit?: number;
  readonly what?: string;
}

/** The log's whole lines: it is read while warden writes it, and the last one may be half written. */
const readLog = (file: string): LogLine[] => wholeLines(readFileSync(file, 'utf8')).map((line) => JSON.parse(line) as LogLine);
const starts = (argvLog: string): number => readFileSync(argvLog, 'utf8').trim().split('\n').filter(Boolean).length;
const updatesOf = (editor: PipeEditor, kind: string): any[] =>
  editor.notifications.filter((message: WireMessage) => message.method === 'session/update' && message.params?.update?.sessionUpdate === kind).map((message) => message.params.update);
const restartsIn = (log: LogLine[]) => log.filter((line) => line.type === 'session.restarting' || line.type === 'child.restarted');

describe('warden acp: big agent lines', function () {
  this.timeout(120_000);
  const world = pipeEditorWorld('warden-agent-lines-', { claude: fakeClaude, codex: fakeCodex });

  const claude = (extra: string[]) => {
    const argvLog = join(world.dir, 'argv.ndjson');
    const logFile = join(world.dir, 'warden.log');
    const editor = PipeEditor.launch({
      args: ['--agent', 'claude', '--store', ':memory:', '--log-file', logFile, '--env', 'FAKE_CLAUDE_FIXTURE=tool-bash-readonly', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`, ...extra],
      binDir: world.bin.dir,
    });
    world.editor = editor;
    return { editor, argvLog, logFile };
  };

  it('Claude Code (found on PATH) prints a tool result with a 5 MB screenshot: it reaches the editor as ACP image content, the turn ends end_turn, the CLI is not restarted', async () => {
    const { editor, argvLog, logFile } = claude(['--env', `FAKE_CLAUDE_TOOL_IMAGE_BYTES=${fiveMb}`]);
    const sessionId = await openSession(editor, world.dir);
    const answer = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Read the screenshot' }] });
    expect(answer.error, JSON.stringify(answer.error)).to.equal(undefined);
    expect(answer.result.stopReason).to.equal('end_turn');
    const result = updatesOf(editor, 'tool_call_update').find((update) => update.toolCallId === 'toolu_fake_3');
    const image = result?.content?.find((item: any) => item.content?.type === 'image')?.content;
    expect(image?.mimeType).to.equal('image/png');
    expect(image?.data?.length).to.equal(fiveMb);
    expect(image?.data === fakeImageBase64(fiveMb)).to.equal(true);
    // The base64 is not sent a second time in rawOutput.
    expect(JSON.stringify(result.rawOutput ?? '').length).to.be.below(10_000);
    expect(starts(argvLog)).to.equal(1);
    expect(restartsIn(readLog(logFile))).to.deep.equal([]);
  });

  it('a Claude Code tool result over --max-line-mib is skipped and logged: the call is shown completed saying why, the turn ends end_turn, the CLI is not killed and serves the next prompt', async () => {
    const { editor, argvLog, logFile } = claude(['--max-line-mib', '1', '--env', `FAKE_CLAUDE_TOOL_IMAGE_BYTES=${fiveMb}`, '--env', 'FAKE_CLAUDE_LOOP=1']);
    const sessionId = await openSession(editor, world.dir);
    const answer = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Read the screenshot' }] });
    expect(answer.error, JSON.stringify(answer.error)).to.equal(undefined);
    expect(answer.result.stopReason).to.equal('end_turn');
    const result = updatesOf(editor, 'tool_call_update').find((update) => update.toolCallId === 'toolu_fake_3');
    expect(result?.status).to.equal('completed');
    expect(result?.content?.[0]?.content?.text).to.contain("over acp-warden's limit of 1048576 bytes per line");
    const dropped = readLog(logFile).filter((line) => line.type === 'agent.lineDropped');
    expect(dropped).to.have.length(1);
    expect(dropped[0]).to.deep.include({ level: 'warn', limit: 1024 * 1024, what: 'type user' });
    expect(dropped[0]?.bytes).to.be.above(2 * fiveMb);
    const again = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'again' }] });
    expect(again.result?.stopReason, JSON.stringify(again.error)).to.equal('end_turn');
    expect(starts(argvLog)).to.equal(1);
    expect(restartsIn(readLog(logFile))).to.deep.equal([]);
  });

  it("Claude Code's result line over --max-line-mib is skipped: the turn still ends (end_turn), the CLI is not killed", async () => {
    const { editor, argvLog, logFile } = claude(['--max-line-mib', '1', '--env', `FAKE_CLAUDE_RESULT_PAD_BYTES=${2 * 1024 * 1024}`]);
    const sessionId = await openSession(editor, world.dir);
    const answer = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Run echo hi' }] });
    expect(answer.error, JSON.stringify(answer.error)).to.equal(undefined);
    expect(answer.result.stopReason).to.equal('end_turn');
    // Claude Code writes a result's `type` after its `result` text: the log names the keys it saw.
    expect(readLog(logFile).filter((line) => line.type === 'agent.lineDropped').map((line) => line.what)).to.deep.equal(['an object with keys duration_api_ms, stop_reason, session_id, total_cost_usd, usage, modelUsage, permission_denials, terminal_reason']);
    expect(starts(argvLog)).to.equal(1);
    expect(restartsIn(readLog(logFile))).to.deep.equal([]);
  });

  describe('Codex app-server (found on PATH)', () => {
    /** Warden on `codex`, as an editor that allows what it is asked and keeps every update. */
    const codex = (extra: string[]) => {
      const argvLog = join(world.dir, 'argv.ndjson');
      const answerLog = join(world.dir, 'answers.ndjson');
      const logFile = join(world.dir, 'warden.log');
      const updates: any[] = [];
      const asked: string[] = [];
      const launched: PipeEditor = PipeEditor.launch({
        args: ['--agent', 'codex', '--store', ':memory:', '--log-file', logFile, '--env', 'FAKE_CODEX_FIXTURE=tool-approval', '--env', `FAKE_CODEX_ARGV_LOG=${argvLog}`, '--env', `FAKE_CODEX_ANSWER_LOG=${answerLog}`, ...extra],
        binDir: world.bin.dir,
        onMessage: (message) => {
          if (message.method === 'session/update') updates.push(message.params.update);
          if (message.method === 'session/request_permission' && message.id !== undefined) {
            asked.push(String(message.params.toolCall?.toolCallId));
            launched.writeLine(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { outcome: { outcome: 'selected', optionId: 'allow' } } }));
          }
        },
      });
      world.editor = launched;
      return { editor: launched, argvLog, answerLog, logFile, updates, asked };
    };
    const answers = (file: string) => readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as { id: unknown; result?: { decision?: unknown } });

    it('an item/completed with 5 MB of command output reaches the editor whole; the turn ends end_turn, Codex is not restarted', async () => {
      const { editor, argvLog, logFile, updates, asked } = codex(['--env', `FAKE_CODEX_OUTPUT_BYTES=${fiveMb}`]);
      const sessionId = await openSession(editor, world.dir);
      const answer = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Run echo hi' }] });
      expect(answer.error, JSON.stringify(answer.error)).to.equal(undefined);
      expect(answer.result.stopReason).to.equal('end_turn');
      expect(asked).to.have.length(1);
      const done = updates.find((update) => update.sessionUpdate === 'tool_call_update' && update.toolCallId === 'call_fake_9' && update.status === 'completed');
      expect(JSON.stringify(done?.content ?? []).length).to.be.above(fiveMb);
      expect(starts(argvLog)).to.equal(1);
      expect(restartsIn(readLog(logFile))).to.deep.equal([]);
    });

    it('an approval request over --max-line-mib is skipped, logged and declined (nobody saw it), so the turn still ends; Codex is not killed', async () => {
      const { editor, argvLog, answerLog, logFile, asked } = codex(['--max-line-mib', '1', '--env', `FAKE_CODEX_APPROVAL_BYTES=${2 * 1024 * 1024}`]);
      const sessionId = await openSession(editor, world.dir);
      const answer = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Run echo hi' }] });
      expect(answer.error, JSON.stringify(answer.error)).to.equal(undefined);
      expect(answer.result.stopReason).to.equal('end_turn');
      expect(asked).to.deep.equal([]);
      expect(answers(answerLog).map((line) => line.result?.decision)).to.deep.equal(['decline']);
      expect(readLog(logFile).filter((line) => line.type === 'agent.lineDropped').map((line) => line.what)).to.deep.equal(['method item/commandExecution/requestApproval']);
      expect(starts(argvLog)).to.equal(1);
      expect(restartsIn(readLog(logFile))).to.deep.equal([]);
    });
  });

  describe('a native ACP agent (acp:node ...)', () => {
    const native = (extra: string[] = []) => {
      const logFile = join(world.dir, 'warden.log');
      const editor = PipeEditor.launch({ args: ['--agent', `acp:node ${sdkAgent}`, '--store', ':memory:', '--log-file', logFile, ...extra] });
      world.editor = editor;
      return { editor, logFile };
    };

    it('a 5 MB session/update with an image is delivered whole; the turn ends end_turn', async () => {
      const { editor, logFile } = native();
      const sessionId = await openSession(editor, world.dir);
      const answer = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: `screenshot ${fiveMb}` }] });
      expect(answer.error, JSON.stringify(answer.error)).to.equal(undefined);
      expect(answer.result.stopReason).to.equal('end_turn');
      const image = updatesOf(editor, 'agent_message_chunk').find((update) => update.content?.type === 'image')?.content;
      expect(image?.data?.length).to.equal(fiveMb);
      expect(image?.data === fakeImageBase64(fiveMb)).to.equal(true);
      expect(restartsIn(readLog(logFile))).to.deep.equal([]);
    });

    it('a session/update over --max-line-mib is skipped and logged, the agent is not killed, the turn ends', async () => {
      const { editor, logFile } = native(['--max-line-mib', '1']);
      const sessionId = await openSession(editor, world.dir);
      const answer = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: `screenshot ${fiveMb}` }] });
      expect(answer.error, JSON.stringify(answer.error)).to.equal(undefined);
      expect(answer.result.stopReason).to.equal('end_turn');
      expect(updatesOf(editor, 'agent_message_chunk').map((update) => update.content?.text)).to.include('done');
      const dropped = readLog(logFile).filter((line) => line.type === 'agent.lineDropped');
      expect(dropped.map((line) => [line.what, line.limit])).to.deep.equal([['method session/update', 1024 * 1024]]);
      expect(dropped[0]?.bytes).to.be.above(fiveMb);
      const again = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
      expect(again.result?.stopReason, JSON.stringify(again.error)).to.equal('end_turn');
      expect(restartsIn(readLog(logFile))).to.deep.equal([]);
    });

    it("an answer over --max-line-mib fails the request it answers with a message naming the limit; the agent goes on", async () => {
      const { editor, logFile } = native(['--max-line-mib', '1']);
      const sessionId = await openSession(editor, world.dir);
      const answer = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: `bigreply ${2 * 1024 * 1024}` }] });
      expect(answer.error?.code).to.equal(-32603);
      expect(answer.error?.message).to.contain('session/prompt');
      expect(answer.error?.message).to.contain('over the limit of 1048576 bytes');
      const again = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
      expect(again.result?.stopReason, JSON.stringify(again.error)).to.equal('end_turn');
      expect(readLog(logFile).filter((line) => line.type === 'agent.lineDropped').map((line) => line.what)).to.deep.equal(['an object with keys jsonrpc, id, result']);
      expect(restartsIn(readLog(logFile))).to.deep.equal([]);
    });
  });
});
