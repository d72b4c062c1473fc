/**
 * Journaled session state, end to end: the mode and model (config option) a user set survive
 * a restart of the agent process and a restart of warden itself. `warden` is launched by bare
 * name through PATH as an editor launches it, with the SDK's client; the agents are the demo
 * agent (`--agent demo`, a real subprocess) and the fakes of Claude Code and Codex, found by
 * bare name on the same PATH, replaying recorded transcripts.
 */
import { methods } from '@agentclientprotocol/sdk';
import { methods as unstableMethods } from '@agentclientprotocol/sdk/unstable';
import { expect } from 'chai';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { binDirectory, initializedEditor, stopAll, textOf, type SdkEditor } from '../support/path-editor.js';
import { childrenOf, isAlive, waitUntil } from '../support/processes.js';

const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const fakeCodex = fileURLToPath(new URL('../support/fake-codex.mjs', import.meta.url));

interface Setup {
  readonly modes?: { readonly currentModeId: string; readonly availableModes: ReadonlyArray<{ readonly id: string }> } | null;
  readonly configOptions?: ReadonlyArray<{ readonly id: string; readonly currentValue: unknown; readonly options?: ReadonlyArray<{ readonly value: string }> }> | null;
}

const modelOf = (setup: Setup) => setup.configOptions?.find((option) => option.id === 'model')?.currentValue;
const lines = (file: string) => {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
  } catch {
    return [];
  }
};
/** The words of the demo agent in mode plan: it says what it would run, and runs nothing. */
const planned = 'In mode plan I only say what I would do';

describe('warden acp: the mode and model the user set survive agent and warden restarts', function () {
  this.timeout(120_000);
  let dir: string;
  let bin: string;
  let store: string;

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-session-state-')));
    bin = binDirectory(dir, { claude: fakeClaude, codex: fakeCodex });
    store = join(dir, 'journal.sqlite');
  });

  afterEach(async () => {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  });

  const newSession = (editor: SdkEditor) => editor.request<{ sessionId: string } & Setup>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
  const prompt = (editor: SdkEditor, sessionId: string, text: string) => editor.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });

  describe('--agent demo', () => {
    const demoArgs = () => ['--agent', 'demo', '--store', store, '--env', 'DEMO_WORD_DELAY_MS=1'];
    const demoProcess = (editor: SdkEditor) => childrenOf(editor.process.pid as number).find((child) => child.cmdline.includes('demo-agent'))?.pid;

    it('kill -9 of the demo agent: the restarted agent gets mode plan again before the next prompt, which it answers in mode plan', async () => {
      const editor = await initializedEditor(bin, demoArgs(), dir);
      const { sessionId } = await newSession(editor);
      await editor.request(methods.agent.session.setMode, { sessionId, modeId: 'plan' });
      await editor.request(methods.agent.session.setConfigOption, { sessionId, configId: 'model', value: 'demo-thorough' });
      const victim = demoProcess(editor) as number;
      expect(victim).to.be.a('number');
      process.kill(victim, 'SIGKILL');
      await waitUntil(() => textOf(editor.updates, sessionId).includes('is back'), 'the recovery notice', 30_000);
      expect(await prompt(editor, sessionId, 'run the tool')).to.deep.equal({ stopReason: 'end_turn' });
      expect(textOf(editor.updates, sessionId)).to.contain(planned);
      // In mode plan nothing runs: no permission was asked, no tool call made.
      expect(editor.updates.filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === 'tool_call')).to.deep.equal([]);
      const loaded = await editor.request<Setup>(methods.agent.session.resume, { sessionId, cwd: dir, mcpServers: [] });
      expect(loaded.modes?.currentModeId).to.equal('plan');
      expect(modelOf(loaded)).to.equal('demo-thorough');
      expect(demoProcess(editor)).to.not.equal(victim);
      expect(await editor.close()).to.equal(0);
    });

    it('a prompt sent while the demo agent restarts waits for the re-applied mode and runs in mode plan', async () => {
      const editor = await initializedEditor(bin, demoArgs(), dir);
      const { sessionId } = await newSession(editor);
      await editor.request(methods.agent.session.setMode, { sessionId, modeId: 'plan' });
      const victim = demoProcess(editor) as number;
      process.kill(victim, 'SIGKILL');
      await waitUntil(() => textOf(editor.updates, sessionId).includes('restarted'), 'the restart notice', 30_000);
      expect(await prompt(editor, sessionId, 'run the tool')).to.deep.equal({ stopReason: 'end_turn' });
      expect(textOf(editor.updates, sessionId)).to.contain(planned);
      expect(await editor.close()).to.equal(0);
    });

    it('a fork of a session in mode plan goes on in mode plan after kill -9 of the demo agent', async () => {
      const editor = await initializedEditor(bin, demoArgs(), dir);
      const { sessionId: source } = await newSession(editor);
      await editor.request(methods.agent.session.setMode, { sessionId: source, modeId: 'plan' });
      const fork = await editor.request<{ sessionId: string } & Setup>(unstableMethods.agent.session.fork, { sessionId: source, cwd: dir, mcpServers: [] });
      expect(fork.modes?.currentModeId).to.equal('plan');
      process.kill(demoProcess(editor) as number, 'SIGKILL');
      await waitUntil(() => textOf(editor.updates, fork.sessionId).includes('is back'), 'the recovery notice of the fork', 30_000);
      expect(await prompt(editor, fork.sessionId, 'run the tool')).to.deep.equal({ stopReason: 'end_turn' });
      expect(textOf(editor.updates, fork.sessionId)).to.contain(planned);
      expect(await editor.close()).to.equal(0);
    });

    for (const how of ['load', 'resume'] as const) {
      it(`SIGKILL of warden: session/${how} in a new warden answers mode plan and model demo-thorough, and the next prompt runs in mode plan`, async () => {
        const first = await initializedEditor(bin, demoArgs(), dir);
        const { sessionId, modes } = await newSession(first);
        expect(modes?.currentModeId).to.equal('ask');
        await first.request(methods.agent.session.setMode, { sessionId, modeId: 'plan' });
        await first.request(methods.agent.session.setConfigOption, { sessionId, configId: 'model', value: 'demo-thorough' });
        await prompt(first, sessionId, 'remember this');
        const said = textOf(first.updates, sessionId);
        const orphan = demoProcess(first) as number;
        process.kill(first.process.pid as number, 'SIGKILL');
        await waitUntil(() => !isAlive(orphan), 'the first demo agent to die with its warden', 20_000);

        const second = await initializedEditor(bin, demoArgs(), dir);
        const answer = await second.request<Setup>(how === 'load' ? methods.agent.session.load : methods.agent.session.resume, { sessionId, cwd: dir, mcpServers: [] });
        expect(answer.modes?.currentModeId).to.equal('plan');
        expect(modelOf(answer)).to.equal('demo-thorough');
        if (how === 'load') {
          // The replay is the conversation: the journaled choices are not part of it.
          expect(textOf(second.updates, sessionId, 'user_message_chunk')).to.equal('remember this');
          expect(textOf(second.updates, sessionId)).to.equal(said);
        }
        expect(await prompt(second, sessionId, 'run the tool')).to.deep.equal({ stopReason: 'end_turn' });
        expect(textOf(second.updates, sessionId)).to.contain(planned);
        expect(await second.close()).to.equal(0);
      });
    }

    it('a journaled mode the new agent refuses: session/load answers with the agent\'s own mode and a notice names the refusal (no hang)', async () => {
      const first = await initializedEditor(bin, demoArgs(), dir);
      const { sessionId } = await newSession(first);
      expect(await first.close()).to.equal(0);
      // A mode an earlier agent version had, journaled by an earlier warden.
      const journal = sqliteJournal(store);
      journal.append(sessionId, { kind: 'mode', modeId: 'turbo' });
      journal.close();

      const second = await initializedEditor(bin, demoArgs(), dir);
      const answer = await second.request<Setup>(methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] });
      expect(answer.modes?.currentModeId).to.equal('ask');
      expect(textOf(second.updates, sessionId)).to.contain('did not take mode turbo again');
      expect(await prompt(second, sessionId, 'hello')).to.deep.equal({ stopReason: 'end_turn' });
      expect(await second.close()).to.equal(0);
    });
  });

  describe('fake Claude Code (claude on PATH)', () => {
    const claudeArgs = (controlLog: string, argvLog: string) => ['--agent', 'claude', '--store', store, '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', `FAKE_CLAUDE_CONTROL_LOG=${controlLog}`, '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`];
    /** What the CLI of `pid` was told, in order: its settings and its prompts. */
    const toldTo = (controlLog: string, pid: number) => lines(controlLog).filter((line) => line.pid === pid).map((line) => (line.type === 'user' ? 'prompt' : `${String(line.subtype)} ${String(line.mode ?? line.model)}`));
    const otherModel = (setup: Setup) => setup.configOptions?.find((option) => option.id === 'model')?.options?.map((option) => option.value).find((value) => value !== modelOf(setup));

    it('kill -9 of Claude Code: the restarted CLI gets set_permission_mode and set_model of the user\'s choices before the next prompt', async () => {
      const controlLog = join(dir, 'control.ndjson');
      const argvLog = join(dir, 'starts.ndjson');
      const editor = await initializedEditor(bin, claudeArgs(controlLog, argvLog), dir);
      const setup = await newSession(editor);
      const model = otherModel(setup) as string;
      expect(model, 'the fake offers a second model').to.be.a('string');
      await editor.request(methods.agent.session.setMode, { sessionId: setup.sessionId, modeId: 'acceptEdits' });
      await editor.request(methods.agent.session.setConfigOption, { sessionId: setup.sessionId, configId: 'model', value: model });
      const firstPid = lines(argvLog)[0]?.pid as number;
      process.kill(firstPid, 'SIGKILL');
      await waitUntil(() => textOf(editor.updates, setup.sessionId).includes('is back'), 'the recovery notice', 30_000);
      expect(await prompt(editor, setup.sessionId, 'hello')).to.deep.equal({ stopReason: 'end_turn' });
      const secondPid = lines(argvLog)[1]?.pid as number;
      expect(secondPid).to.be.a('number').and.not.equal(firstPid);
      const told = toldTo(controlLog, secondPid);
      expect(told.indexOf(`set_permission_mode acceptEdits`)).to.be.within(0, told.indexOf('prompt'));
      expect(told.indexOf(`set_model ${model}`)).to.be.within(0, told.indexOf('prompt'));
      expect(await editor.close()).to.equal(0);
    });

    it('SIGKILL of warden: session/load in a new warden answers the mode and model the user set, and the new CLI got both before the next prompt', async () => {
      const controlLog = join(dir, 'control.ndjson');
      const argvLog = join(dir, 'starts.ndjson');
      const first = await initializedEditor(bin, claudeArgs(controlLog, argvLog), dir);
      const setup = await newSession(first);
      const model = otherModel(setup) as string;
      await first.request(methods.agent.session.setMode, { sessionId: setup.sessionId, modeId: 'plan' });
      await first.request(methods.agent.session.setConfigOption, { sessionId: setup.sessionId, configId: 'model', value: model });
      await prompt(first, setup.sessionId, 'hello');
      const firstPid = lines(argvLog)[0]?.pid as number;
      process.kill(first.process.pid as number, 'SIGKILL');
      await waitUntil(() => !isAlive(firstPid), 'the first CLI to die with its warden', 20_000);

      const second = await initializedEditor(bin, claudeArgs(controlLog, argvLog), dir);
      const answer = await second.request<Setup>(methods.agent.session.load, { sessionId: setup.sessionId, cwd: dir, mcpServers: [] });
      expect(answer.modes?.currentModeId).to.equal('plan');
      expect(modelOf(answer)).to.equal(model);
      expect(await prompt(second, setup.sessionId, 'hello')).to.deep.equal({ stopReason: 'end_turn' });
      const secondStart = lines(argvLog)[1] as { pid: number; args: string[] };
      expect(secondStart.args.some((arg) => arg.startsWith('--resume='))).to.equal(true);
      const told = toldTo(controlLog, secondStart.pid);
      expect(told.indexOf('set_permission_mode plan')).to.be.within(0, told.indexOf('prompt'));
      expect(told.indexOf(`set_model ${model}`)).to.be.within(0, told.indexOf('prompt'));
      expect(await second.close()).to.equal(0);
      // On record: each choice once (the re-apply's confirmations are no change), and the Claude session id as a resume entry.
      const journal = sqliteJournal(store);
      const kept = (journal.stateEntries?.(setup.sessionId) ?? []).map((record) => record.entry);
      journal.close();
      expect(kept.filter((entry) => entry.kind !== 'resume')).to.deep.equal([{ kind: 'mode', modeId: 'plan' }, { kind: 'config', configId: 'model', value: model }]);
      expect(kept.filter((entry) => entry.kind === 'resume').map((entry) => entry.kind === 'resume' && (entry.resume as { claudeSessionId?: unknown }).claudeSessionId)).to.have.length(1).and.satisfy((ids: unknown[]) => ids.every((id) => typeof id === 'string'));
    });
  });

  describe('fake Codex (codex on PATH)', () => {
    it('SIGKILL of warden: session/resume in a new warden answers the mode the user set, and the next turn/start carries its approval policy', async () => {
      const paramsLog = join(dir, 'params.ndjson');
      const args = ['--agent', 'codex', '--store', store, '--env', 'FAKE_CODEX_FIXTURE=hello', '--env', `FAKE_CODEX_PARAMS_LOG=${paramsLog}`];
      const first = await initializedEditor(bin, args, dir);
      const { sessionId, modes } = await newSession(first);
      expect(modes?.currentModeId).to.equal('untrusted');
      await first.request(methods.agent.session.setMode, { sessionId, modeId: 'never' });
      await prompt(first, sessionId, 'hello');
      const firstPid = lines(paramsLog)[0]?.pid as number;
      process.kill(first.process.pid as number, 'SIGKILL');
      await waitUntil(() => !isAlive(firstPid), 'the first CLI to die with its warden', 20_000);

      const second = await initializedEditor(bin, args, dir);
      const answer = await second.request<Setup>(methods.agent.session.resume, { sessionId, cwd: dir, mcpServers: [] });
      expect(answer.modes?.currentModeId).to.equal('never');
      await prompt(second, sessionId, 'hello');
      const turns = lines(paramsLog).filter((line) => line.method === 'turn/start' && line.pid !== firstPid);
      expect(turns.map((line) => (line.params as { approvalPolicy?: string }).approvalPolicy)).to.deep.equal(['never']);
      expect(await second.close()).to.equal(0);
    });
  });
});
