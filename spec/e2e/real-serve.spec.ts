/**
 * The real Claude Code (2.1.332) and Codex (0.171.0) CLIs as the agents of a real
 * `warden serve` (issue 16), against the fake model servers of spec/e2e/real-agents.spec.ts on
 * 127.0.0.1: one slow turn per CLI, the editor's bridge (`warden acp --connect`) killed -9 in
 * the middle of it, a new connection resuming with `_meta["acp-warden/after"]` = the last seq
 * the editor saw. It gets the rest of the answer once, in order, and the turn's end; what both
 * saw is the journal's history (`session/load`), and the same CLI process ran the whole turn.
 * The daemon finds the CLIs by their bare names on its PATH (.cache/agents/node_modules/.bin).
 *
 * Without the CLIs (`npm run agents:install`) these tests skip with a message. Each CLI gets its
 * own HOME, TMPDIR (and CODEX_HOME) under one temp directory, removed at the end, and no process
 * may be left behind.
 */
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { WebSocket } from 'ws';
import { startFakeAnthropic } from '../support/fake-anthropic-server.js';
import { startFakeOpenAI } from '../support/fake-openai-server.js';
import type { FakeModelServer } from '../support/local-model-server.js';
import { slowText } from '../support/local-model-server.js';
import { waitUntil } from '../support/processes.js';
import { agentsBin, claudeBin, claudeEnv, cliUnder, codexBin, codexEnv, envArgs, expectNoLeftovers, skipMessage, workspace, writeCodexHome, type Workspace } from '../support/real-agents-harness.js';
import { agentText, bridgeClient, cursorKeys, initializeParams, lastSeqOf, seqUpdatesOf, socketClient, startServe, type SeqUpdate } from '../support/serve-daemon.js';
import { killGroups } from '../support/warden-process.js';

const launched: ChildProcess[] = [];
const sockets: WebSocket[] = [];
const initialize = initializeParams('real-serve-test-editor');
/** The fakes' slow answer, shortened: 30 words, one every 150 ms. */
const slow = { wordIntervalMs: 150, slowWords: 30 };

/** The updates of `updates` without warden's own notices (agent messages marked `acp-warden/notice`). */
const withoutNotices = (updates: readonly SeqUpdate[]) => updates.filter((update) => !(update.update as { _meta?: Record<string, unknown> })?._meta?.['acp-warden/notice']);

/**
 * `warden serve --agent AGENT` on `space`, a session in a fresh project, the prompt `slow`
 * through a bridge killed -9 once text streams, then a resume after the last seq seen: checked,
 * and the answer's whole text returned.
 */
async function detachMidTurnAndResume(space: Workspace, agentArgs: readonly string[]): Promise<string> {
  const daemon = await startServe(space.base, ['--listen', '127.0.0.1:0', '--store', join(space.base, 'journal.sqlite'), ...agentArgs], launched, { env: { PATH: `${agentsBin}:${process.env.PATH ?? ''}` } });
  const cwd = space.project();
  const editor = bridgeClient(space.base, daemon, launched);
  expect((await editor.request(1, 'initialize', initialize, 90_000)).error).to.equal(undefined);
  const created = await editor.request(2, 'session/new', { cwd, mcpServers: [] }, 90_000);
  const sessionId = created.result?.sessionId as string;
  expect(sessionId, `${JSON.stringify(created)}\n${daemon.stderr()}`).to.be.a('string');
  editor.send({ id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'slow' }] } });
  await waitUntil(() => /word2\b/u.test(agentText(seqUpdatesOf(editor.frames, sessionId))), 'the slow answer to stream', 90_000);
  const cli = cliUnder(daemon.process.pid as number);
  expect(cli, 'the real CLI under the daemon').to.not.equal(undefined);
  process.kill(editor.process.pid as number, 'SIGKILL');
  await editor.exited;
  const seen = seqUpdatesOf(editor.frames, sessionId);
  expect(agentText(seen), 'the bridge was killed before the answer ended').not.to.include('word30');

  const again = await socketClient(daemon, sockets);
  await again.request(1, 'initialize', initialize);
  const lastSeen = lastSeqOf(seen);
  const resumed = await again.request(2, 'session/resume', { sessionId, cwd, mcpServers: [], _meta: { [cursorKeys.after]: lastSeen } }, 90_000);
  expect(resumed.error, JSON.stringify(resumed)).to.equal(undefined);
  await waitUntil(() => seqUpdatesOf(again.frames, sessionId).some((update) => update.turnEnded !== undefined), 'the turn end on the resumed connection', 90_000);
  const rest = seqUpdatesOf(again.frames, sessionId);
  const seqs = rest.map((update) => update.seq as number);
  expect(seqs.every((seq) => seq > lastSeen), `only what came after seq ${lastSeen}: ${seqs.join(',')}`).to.equal(true);
  expect(seqs, 'each once, in order').to.deep.equal([...new Set(seqs)].sort((a, b) => a - b));
  expect(rest.find((update) => update.turnEnded !== undefined)?.turnEnded).to.deep.equal({ stopReason: 'end_turn' });
  expect(cliUnder(daemon.process.pid as number)?.pid, 'the same CLI process ran the whole turn').to.equal(cli?.pid);

  const loader = await socketClient(daemon, sockets);
  await loader.request(1, 'initialize', initialize);
  const loaded = await loader.request(2, 'session/load', { sessionId, cwd, mcpServers: [] }, 90_000);
  expect(loaded.error, JSON.stringify(loaded)).to.equal(undefined);
  const history = seqUpdatesOf(loader.frames.slice(0, loader.frames.indexOf(loaded)), sessionId).filter((update) => update.kind !== 'user_message_chunk');
  const upToTurnEnd = rest.slice(0, rest.findIndex((update) => update.turnEnded !== undefined) + 1);
  expect([...seen, ...upToTurnEnd].map(({ seq, update }) => ({ seq, update })), 'what the editor saw, then the rest: the journal\'s history of the turn').to.deep.equal(history.slice(0, seen.length + upToTurnEnd.length).map(({ seq, update }) => ({ seq, update })));

  process.kill(daemon.process.pid as number, 'SIGTERM');
  expect(await daemon.exited, daemon.stderr()).to.equal(0);
  return agentText(withoutNotices(seen)) + agentText(withoutNotices(rest));
}

/** Stops the fake model server, checks no process of the workspace is left, removes it. */
async function tearDown(server: FakeModelServer | undefined, space: Workspace | undefined): Promise<void> {
  await server?.close();
  if (space) {
    await expectNoLeftovers(space.base);
    rmSync(space.base, { recursive: true, force: true });
  }
}

describe('real agent CLIs through warden serve: detach mid-turn, resume from the cursor (fake model servers)', function () {
  this.timeout(240_000);

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await killGroups(launched, { descendants: true });
  });

  describe('real Claude Code 2.1.332 (fake Anthropic server)', () => {
    let server: FakeModelServer | undefined;
    let space: Workspace | undefined;

    before(async function () {
      if (!existsSync(claudeBin)) {
        console.log(`      ${skipMessage('real Claude Code')}`);
        this.skip();
      }
      server = await startFakeAnthropic(slow);
      space = workspace('warden-e2e-serve-claude-');
    });

    after(() => tearDown(server, space));

    it('kill -9 of the bridge mid-turn: the resumed connection gets the rest once, in order, and the turn end', async () => {
      const text = await detachMidTurnAndResume(space as Workspace, ['--agent', 'claude', ...envArgs(claudeEnv((server as FakeModelServer).url, space as Workspace))]);
      expect(text).to.equal(slowText(slow.slowWords));
    });
  });

  describe('real Codex 0.171.0 (fake OpenAI server)', () => {
    let server: FakeModelServer | undefined;
    let space: Workspace | undefined;
    let codexHome = '';

    before(async function () {
      if (!existsSync(codexBin)) {
        console.log(`      ${skipMessage('real Codex')}`);
        this.skip();
      }
      server = await startFakeOpenAI(slow);
      space = workspace('warden-e2e-serve-codex-');
      codexHome = writeCodexHome(space, server.url);
    });

    after(() => tearDown(server, space));

    it('kill -9 of the bridge mid-turn: the resumed connection gets the rest once, in order, and the turn end', async () => {
      const text = await detachMidTurnAndResume(space as Workspace, ['--agent', 'codex', ...envArgs(codexEnv(space as Workspace, codexHome))]);
      expect(text).to.equal(slowText(slow.slowWords));
    });
  });
});
