/**
 * A full recovery (issue 32): an ACP agent killed -9 is restarted with everything its session
 * was set up with: the editor's client capabilities on `initialize`, the session's MCP servers
 * and additional directories on the `session/resume` (or `session/load`) that re-attaches it.
 * The agent is the SDK-built test agent (spec/support/sdk-agent.mjs) under a real `warden acp`,
 * logging what each `initialize`, `session/new`, `session/load` and `session/resume` brought.
 */
import { expect } from 'chai';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PipeEditor, pipeEditorWorld } from '../support/pipe-editor.js';
import { childrenOf, isAlive, waitUntil } from '../support/processes.js';

const sdkAgent = fileURLToPath(new URL('../support/sdk-agent.mjs', import.meta.url));

/** The `setup METHOD JSON` lines of the agent's log, in order. */
function setups(logFile: string): Array<{ method: string; params: Record<string, unknown> }> {
  if (!existsSync(logFile)) return [];
  return readFileSync(logFile, 'utf8').split('\n').flatMap((line) => {
    const match = /\] setup (\S+) (.*)$/u.exec(line);
    return match ? [{ method: match[1] as string, params: JSON.parse(match[2] as string) as Record<string, unknown> }] : [];
  });
}

describe('a full recovery: the restarted agent gets the session\'s setup again (issue 32)', function () {
  this.timeout(60_000);
  const world = pipeEditorWorld('warden-full-recovery-', {});

  it('kill -9 of an ACP agent between turns: its restart is initialized with the editor\'s client capabilities and re-attaches the session with its MCP servers and additional directories; the next prompt ends end_turn', async () => {
    const logFile = join(world.dir, 'agent.log');
    const extra = join(world.dir, 'extra');
    mkdirSync(extra);
    const editor = PipeEditor.launch({ args: ['--agent', `acp:${process.execPath} ${sdkAgent} --state-dir ${world.dir} --additional-directories --log ${logFile}`, '--store', world.store] });
    world.editor = editor;
    const clientCapabilities = { fs: { readTextFile: true, writeTextFile: true }, terminal: true, _meta: { 'editor.example/feature': { on: true } } };
    const init = await editor.request('initialize', { protocolVersion: 1, clientCapabilities, clientInfo: { name: 'recovery-editor', version: '1' } });
    expect(init.error, JSON.stringify(init.error)).to.equal(undefined);
    const mcpServers = [{ name: 'notes', command: '/bin/cat', args: ['-u'], env: [{ name: 'NOTES_DIR', value: world.dir }] }];
    const created = await editor.request('session/new', { cwd: world.dir, mcpServers, additionalDirectories: [extra] });
    expect(created.error, `${JSON.stringify(created.error)}\n${editor.stderr}`).to.equal(undefined);
    const sessionId = created.result.sessionId as string;
    expect((await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] })).result).to.deep.equal({ stopReason: 'end_turn' });

    const before = setups(logFile);
    const firstInit = before.find((entry) => entry.method === 'clientCapabilities');
    const firstNew = before.find((entry) => entry.method === 'session/new');
    expect(firstInit?.params.clientCapabilities, 'the editor\'s capabilities reached the agent, its _meta too').to.deep.include(clientCapabilities);
    expect(firstNew?.params, 'session/new reached the agent with the MCP servers and directories').to.deep.equal({ mcpServers, additionalDirectories: [extra] });

    const agents = () => childrenOf(editor.child.pid as number).filter((child) => child.cmdline.includes('sdk-agent.mjs')).map((child) => child.pid);
    const [agent] = agents();
    expect(agent, 'the agent under warden').to.be.a('number');
    process.kill(agent as number, 'SIGKILL');
    await waitUntil(() => !isAlive(agent as number) && agents().length === 1, 'the agent restarted', 30_000);

    const next = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(next.result, `${JSON.stringify(next.error)}\n${editor.stderr}`).to.deep.equal({ stopReason: 'end_turn' });

    const after = setups(logFile).slice(before.length);
    const again = after.find((entry) => entry.method === 'clientCapabilities');
    expect(again?.params, 'the restarted agent is initialized with the same client capabilities').to.deep.equal(firstInit?.params);
    const reattach = after.find((entry) => entry.method === 'session/resume' || entry.method === 'session/load');
    expect(reattach, `the session re-attached: ${JSON.stringify(after)}`).to.not.equal(undefined);
    expect(reattach?.params, 'with its MCP servers and additional directories').to.deep.equal({ mcpServers, additionalDirectories: [extra] });
  });
});
