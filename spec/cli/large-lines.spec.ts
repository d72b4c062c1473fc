/**
 * Big editor lines through a real `warden acp`: a prompt with a 5 MB screenshot reaches the
 * agent (the fake Claude Code found on PATH as `claude`, and the demo agent); a line over
 * the limit (`--max-line-mib`) is answered by its id, naming the limit, and warden goes on.
 */
import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAcpArgs } from '../../src/cli/acp.js';
import { openSession, PipeEditor, pipeEditorWorld, type LaunchOptions, type WireMessage } from '../support/pipe-editor.js';
import { waitUntil } from '../support/processes.js';

const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));

/** A 5 MB PNG-ish payload, base64 (what an editor puts in an image block). */
function screenshot(bytes = 5 * 1024 * 1024): string {
  return randomBytes(Math.ceil((bytes * 3) / 4)).toString('base64').slice(0, bytes);
}

describe('warden acp: big editor lines', function () {
  this.timeout(120_000);
  const world = pipeEditorWorld('warden-lines-', { claude: fakeClaude });
  const launch = (options: LaunchOptions) => (world.editor = PipeEditor.launch(options));

  it('a prompt with a 5 MB image reaches Claude Code (found on PATH) whole, and is answered', async () => {
    const contentLog = join(world.dir, 'content.ndjson');
    const editor = launch({ args: ['--agent', 'claude', '--store', ':memory:', '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', `FAKE_CLAUDE_CONTENT_LOG=${contentLog}`], binDir: world.bin.dir });
    const sessionId = await openSession(editor, world.dir);
    const data = screenshot();
    const answer = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'What is in this screenshot?' }, { type: 'image', mimeType: 'image/png', data }] });
    expect(answer.error, JSON.stringify(answer.error)).to.equal(undefined);
    expect(answer.result.stopReason).to.equal('end_turn');
    const [blocks] = readFileSync(contentLog, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Array<{ type: string; bytes: number; sha256: string }>);
    const image = blocks?.find((block) => block.type === 'image');
    expect(image?.bytes).to.equal(data.length);
    expect(image?.sha256).to.equal(createHash('sha256').update(data).digest('hex'));
  });

  it('a prompt with a 5 MB embedded resource reaches the demo agent, and is answered', async () => {
    const editor = launch({ args: ['--agent', 'demo', '--store', ':memory:', '--env', 'DEMO_WORD_DELAY_MS=0'] });
    const sessionId = await openSession(editor, world.dir);
    const text = screenshot();
    const answer = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'summarise' }, { type: 'resource', resource: { uri: 'file:///tmp/big.log', mimeType: 'text/plain', text } }] });
    expect(answer.error, JSON.stringify(answer.error)).to.equal(undefined);
    expect(answer.result.stopReason).to.equal('end_turn');
    const said = editor.notifications
      .filter((message) => message.params?.update?.sessionUpdate === 'agent_message_chunk')
      .map((message) => message.params.update.content.text as string)
      .join('');
    expect(said).to.contain('You said: summarise.');
  });

  it('a line over --max-line-mib is answered -32600 by its id (read at its start, or at its end), naming the limit; warden goes on', async () => {
    const editor = launch({ args: ['--agent', 'demo', '--store', ':memory:', '--max-line-mib', '1', '--env', 'DEMO_WORD_DELAY_MS=0'] });
    const sessionId = await openSession(editor, world.dir);
    const big = screenshot(3 * 1024 * 1024);
    // The id before the params, as editors write it...
    const first = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'look' }, { type: 'resource', resource: { uri: 'file:///a', text: big } }] }, 'big-1');
    expect(first.error?.code).to.equal(-32600);
    expect(first.error?.message).to.contain('over the limit of 1048576 bytes');
    expect(first.error?.data).to.deep.include({ reason: 'line_too_long', limitBytes: 1048576, method: 'session/prompt' });
    // ... and after them.
    const second = editor.answer(77);
    editor.writeLine(`{"jsonrpc":"2.0","method":"session/prompt","params":${JSON.stringify({ sessionId, prompt: [{ type: 'resource', resource: { uri: 'file:///b', text: big } }] })},"id":77}`);
    expect((await second).error?.code).to.equal(-32600);
    // Nothing else was lost: the next prompt is served.
    const after = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'still there?' }] });
    expect(after.result?.stopReason).to.equal('end_turn');
    expect(editor.running).to.equal(true);
  });

  it('a notification over --max-line-mib (a method, no id) is dropped and logged, never answered; only a line whose kind cannot be told gets the id-null error', async () => {
    const unnumbered: WireMessage[] = [];
    const editor = launch({
      args: ['--agent', 'demo', '--store', ':memory:', '--max-line-mib', '1', '--env', 'DEMO_WORD_DELAY_MS=0'],
      onMessage: (message) => {
        if (message.id === null) unnumbered.push(message);
      },
    });
    const sessionId = await openSession(editor, world.dir);
    const big = screenshot(2 * 1024 * 1024);
    // The method before the params, and after them.
    editor.writeLine(JSON.stringify({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId, pad: big, id: 4 } }));
    editor.writeLine(`{"jsonrpc":"2.0","params":${JSON.stringify({ sessionId, pad: big })},"method":"session/cancel"}`);
    // Answers come in order: once this one is here, whatever the two lines got came before it.
    expect((await editor.request('session/set_mode', { sessionId, modeId: 'auto' }, 'after-notifications')).error).to.equal(undefined);
    expect(unnumbered).to.deep.equal([]);
    // stderr is its own pipe: the log line may come after the answer.
    const logged = 'dropped a message from the editor (line_too_long): session/cancel';
    // Both lines, the one whose method comes before its params and the one whose method comes after.
    const loggedTimes = () => editor.stderr.split(logged).length - 1;
    await waitUntil(() => loggedTimes() >= 2, 'both dropped lines logged', 20_000, 50);
    expect(loggedTimes()).to.equal(2);
    editor.writeLine(`{"jsonrpc":"2.0","params":{"pad":"${big}`);
    expect((await editor.request('session/set_mode', { sessionId, modeId: 'ask' }, 'after-unreadable')).error).to.equal(undefined);
    expect(unnumbered).to.have.length(1);
    expect(unnumbered[0]?.error?.code).to.equal(-32600);
    expect(editor.running).to.equal(true);
  });
});

describe('warden acp --max-line-mib', () => {
  it('takes MiB (fractions too), and names the problem in a bad value', () => {
    expect(parseAcpArgs(['--agent', 'demo', '--max-line-mib', '64'])).to.deep.include({ maxLineBytes: 64 * 1024 * 1024 });
    expect(parseAcpArgs(['--agent', 'demo', '--max-line-mib=0.5'])).to.deep.include({ maxLineBytes: 512 * 1024 });
    expect(parseAcpArgs(['--agent', 'demo'])).to.deep.include({ maxLineBytes: undefined });
    expect(parseAcpArgs(['--agent', 'demo', '--max-line-mib', 'big'])).to.deep.equal({ error: 'warden acp: --max-line-mib expects a positive number, got "big"' });
  });
});
