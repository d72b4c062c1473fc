/**
 * Journaled session state with the real Claude Code 2.1.332 CLI against the fake Anthropic
 * server: the model and the permission mode the user set survive a kill -9 of the CLI and a
 * SIGKILL of warden itself (a new warden on the same --store, `session/load`). `warden`
 * and `claude` are found by bare name through PATH (shims in a temp bin), as an editor launches
 * them; the proof is on the wire: the restarted CLI's model requests name the chosen model, and
 * carry Claude Code's plan-mode instructions.
 *
 * The CLI comes from `npm run agents:install` (into .cache/agents); without it this skips.
 */
import { methods } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeAnthropic, type FakeModelServer, type RecordedRequest } from '../support/fake-anthropic-server.js';
import { startFakeOpenAI } from '../support/fake-openai-server.js';
import { binDirectory, initializedEditor, stopAll, textOf } from '../support/path-editor.js';
import { isAlive, waitUntil } from '../support/processes.js';
import { claudeBin, claudeEnv, cliUnder, codexBin, codexEnv, envArgs, expectNoLeftovers, skipMessage, workspace, writeCodexHome, type Workspace } from '../support/real-agents-harness.js';
import { writeShim } from '../support/warden-process.js';

interface Setup {
  readonly sessionId: string;
  readonly configOptions?: ReadonlyArray<{ readonly id: string; readonly currentValue: unknown; readonly options?: ReadonlyArray<{ readonly value: string }> }> | null;
}

/** The agent loop's model requests (they offer tools; side requests, a title say, do not). */
const turnRequests = (server: FakeModelServer): RecordedRequest[] =>
  server.requests.filter((request) => request.path === '/v1/messages' && ((request.body as { tools?: unknown[] })?.tools?.length ?? 0) > 0);
const modelOf = (request: RecordedRequest | undefined) => (request?.body as { model?: string } | undefined)?.model;
/**
 * The approval policy Codex last told the model of in a Responses request (its permission
 * instructions: "`approval_policy` is `unless-trusted`", later "Approval policy is currently never").
 */
function lastApprovalPolicy(request: RecordedRequest | undefined): string | undefined {
  const text = JSON.stringify(request?.body ?? '');
  return [...text.matchAll(/`approval_policy` is `([\w-]+)`|Approval policy is currently ([\w-]+)/gu)].map((match) => match[1] ?? match[2]).at(-1);
}
/** Claude Code tells the model it is in plan mode in the request (a system reminder). */
const saysPlanMode = (request: RecordedRequest | undefined) => /plan mode/iu.test(JSON.stringify(request?.body ?? ''));

/**
 * Registers, in the calling `describe`, the hooks of these tests: skip without the CLI at
 * `cli` (`what`, for the message); before each test a fake model server (`start`) and a
 * workspace (`prefix…`); after it warden stopped, no process left, both gone.
 */
function realCliWorld(cli: string, what: string, start: () => Promise<FakeModelServer>, prefix: string): { readonly server: FakeModelServer; readonly space: Workspace } {
  let server: FakeModelServer | undefined;
  let space: Workspace | undefined;

  before(function () {
    if (!existsSync(cli)) {
      console.log(`      ${skipMessage(what)}`);
      this.skip();
    }
  });

  beforeEach(async () => {
    server = await start();
    space = workspace(prefix);
  });

  afterEach(async () => {
    try {
      await stopAll();
      if (space) await expectNoLeftovers(space.base, 20_000);
    } finally {
      if (space) rmSync(space.base, { recursive: true, force: true });
      await server?.close();
      server = undefined;
      space = undefined;
    }
  });

  return {
    get server() {
      return server as FakeModelServer;
    },
    get space() {
      return space as Workspace;
    },
  };
}

describe('real Claude Code 2.1.332: the model and mode the user set survive kill -9 of the CLI and SIGKILL of warden (fake Anthropic server)', function () {
  this.timeout(240_000);
  const world = realCliWorld(claudeBin, 'real Claude Code', startFakeAnthropic, 'warden-session-state-claude-');

  it('the restarted CLI gets the chosen model and plan mode before the next prompt: its next model request names that model and is in plan mode', async () => {
    const fake = world.server;
    const ws = world.space;
    const project = ws.project();
    const bin = binDirectory(ws.base);
    writeShim(join(bin, 'claude'), `'${claudeBin}'`);
    const editor = await initializedEditor(bin, ['--agent', 'claude', '--store', join(ws.base, 'journal.sqlite'), ...envArgs(claudeEnv(fake.url, ws))], project);
    const prompt = (text: string) => editor.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId: setup.sessionId, prompt: [{ type: 'text', text }] });

    const setup = await editor.request<Setup>(methods.agent.session.new, { cwd: project, mcpServers: [] });
    expect(await prompt('hello')).to.deep.equal({ stopReason: 'end_turn' });
    const defaultModel = modelOf(turnRequests(fake).at(-1));
    const model = setup.configOptions?.find((option) => option.id === 'model');
    // The last offered model (Haiku here): the first ones may be aliases of the default.
    const other = model?.options?.map((option) => option.value).findLast((value) => value !== model.currentValue);
    expect(other, JSON.stringify(model)).to.be.a('string');
    await editor.request(methods.agent.session.setConfigOption, { sessionId: setup.sessionId, configId: 'model', value: other });
    await editor.request(methods.agent.session.setMode, { sessionId: setup.sessionId, modeId: 'plan' });
    expect(await prompt('hello')).to.deep.equal({ stopReason: 'end_turn' });
    const chosen = turnRequests(fake).at(-1);
    expect(modelOf(chosen), 'the chosen model on the wire').to.be.a('string').and.not.equal(defaultModel);
    expect(saysPlanMode(chosen), 'plan mode on the wire').to.equal(true);

    const cli = cliUnder(editor.process.pid as number);
    expect(cli, 'the real CLI under warden').to.not.equal(undefined);
    process.kill(cli?.pid as number, 'SIGKILL');
    await waitUntil(() => !isAlive(cli?.pid), 'the CLI to die', 20_000);
    await waitUntil(() => textOf(editor.updates, setup.sessionId).includes('is back'), 'the recovery notice', 90_000);
    const before = turnRequests(fake).length;
    expect(await prompt('hello')).to.deep.equal({ stopReason: 'end_turn' });
    const after = turnRequests(fake).slice(before);
    expect(after, 'model requests of the restarted CLI').to.not.have.length(0);
    expect(after.map(modelOf)).to.deep.equal(after.map(() => modelOf(chosen)));
    expect(after.every(saysPlanMode), 'plan mode on the wire after the restart').to.equal(true);
    const restarted = cliUnder(editor.process.pid as number);
    expect(restarted?.pid).to.not.equal(cli?.pid);
    expect(restarted?.cmdline).to.include('--resume=');
    expect(await editor.close()).to.equal(0);
  });

  it('SIGKILL of warden: session/load in a new warden answers plan mode and the chosen model, and the new CLI\'s model requests have both', async () => {
    const fake = world.server;
    const ws = world.space;
    const project = ws.project();
    const bin = binDirectory(ws.base);
    writeShim(join(bin, 'claude'), `'${claudeBin}'`);
    const args = ['--agent', 'claude', '--store', join(ws.base, 'journal.sqlite'), ...envArgs(claudeEnv(fake.url, ws))];
    const first = await initializedEditor(bin, args, project);
    const setup = await first.request<Setup>(methods.agent.session.new, { cwd: project, mcpServers: [] });
    const model = setup.configOptions?.find((option) => option.id === 'model');
    const other = model?.options?.map((option) => option.value).findLast((value) => value !== model.currentValue) as string;
    await first.request(methods.agent.session.setConfigOption, { sessionId: setup.sessionId, configId: 'model', value: other });
    await first.request(methods.agent.session.setMode, { sessionId: setup.sessionId, modeId: 'plan' });
    expect(await first.request(methods.agent.session.prompt, { sessionId: setup.sessionId, prompt: [{ type: 'text', text: 'hello' }] })).to.deep.equal({ stopReason: 'end_turn' });
    const chosen = turnRequests(fake).at(-1);
    expect(saysPlanMode(chosen), 'plan mode on the wire').to.equal(true);
    const cli = cliUnder(first.process.pid as number);
    process.kill(first.process.pid as number, 'SIGKILL');
    await waitUntil(() => !isAlive(cli?.pid), 'the first CLI to die with its warden', 30_000);

    const second = await initializedEditor(bin, args, project);
    const answer = await second.request<Setup & { modes?: { currentModeId: string } }>(methods.agent.session.load, { sessionId: setup.sessionId, cwd: project, mcpServers: [] });
    expect(answer.modes?.currentModeId).to.equal('plan');
    expect(answer.configOptions?.find((option) => option.id === 'model')?.currentValue).to.equal(other);
    const before = turnRequests(fake).length;
    expect(await second.request(methods.agent.session.prompt, { sessionId: setup.sessionId, prompt: [{ type: 'text', text: 'hello' }] })).to.deep.equal({ stopReason: 'end_turn' });
    const after = turnRequests(fake).slice(before);
    expect(after, 'model requests of the new CLI').to.not.have.length(0);
    expect(after.map(modelOf)).to.deep.equal(after.map(() => modelOf(chosen)));
    expect(after.every(saysPlanMode), 'plan mode on the wire after the warden restart').to.equal(true);
    expect(cliUnder(second.process.pid as number)?.cmdline).to.include('--resume=');
    expect(await second.close()).to.equal(0);
  });
});

describe('real Codex 0.171.0: the mode the user set survives SIGKILL of warden (fake OpenAI server)', function () {
  this.timeout(240_000);
  const world = realCliWorld(codexBin, 'real Codex', startFakeOpenAI, 'warden-session-state-codex-');

  it('session/resume in a new warden answers mode never, and the resumed thread\'s next model request runs under approval policy never', async () => {
    const fake = world.server;
    const ws = world.space;
    const project = ws.project();
    const bin = binDirectory(ws.base);
    writeShim(join(bin, 'codex'), `'${codexBin}'`);
    const args = ['--agent', 'codex', '--store', join(ws.base, 'journal.sqlite'), ...envArgs(codexEnv(ws, writeCodexHome(ws, fake.url)))];
    const responses = () => fake.requests.filter((request) => request.path === '/v1/responses');
    const first = await initializedEditor(bin, args, project);
    const { sessionId } = await first.request<{ sessionId: string }>(methods.agent.session.new, { cwd: project, mcpServers: [] });
    await first.request(methods.agent.session.setMode, { sessionId, modeId: 'never' });
    expect(await first.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] })).to.deep.equal({ stopReason: 'end_turn' });
    expect(lastApprovalPolicy(responses().at(-1)), 'approval policy never on the wire').to.equal('never');
    const cli = cliUnder(first.process.pid as number);
    process.kill(first.process.pid as number, 'SIGKILL');
    await waitUntil(() => !isAlive(cli?.pid), 'the first CLI to die with its warden', 30_000);

    const second = await initializedEditor(bin, args, project);
    const answer = await second.request<{ modes?: { currentModeId: string } }>(methods.agent.session.resume, { sessionId, cwd: project, mcpServers: [] });
    expect(answer.modes?.currentModeId).to.equal('never');
    const before = responses().length;
    expect(await second.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] })).to.deep.equal({ stopReason: 'end_turn' });
    const after = responses().slice(before);
    expect(after, 'model requests of the new CLI').to.not.have.length(0);
    expect(after.map(lastApprovalPolicy)).to.deep.equal(after.map(() => 'never'));
    expect(await second.close()).to.equal(0);
  });
});
