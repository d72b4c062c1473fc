/**
 * `session/load` through a real `warden acp` of a session whose agent goes on streaming its
 * own replay after its answer (the SDK's reference agent with `--replay-after-answer`, as
 * Gemini CLI 0.61.0): warden drains that replay before it answers, once its own journal
 * replay has reached the editor's pipe (the drain does not start while that replay is backed
 * up). An editor that stalls through the drain longer than a round's deadline (10 s) must
 * still see the history once, not the agent's replay again after the answer (docs/adapters.md:
 * under `warden acp` the agent is read whatever the editor does). The editor stalls
 * twice, each time until what it is about can be seen, not for a guessed while: at the first
 * replayed turn until its read buffer is full (warden's output backs up behind it); at the last
 * replayed turn (warden then drains the agent's replay) until the agent has been asked a drain
 * round (its `--log` says so) and a round's deadline has passed since.
 */
import { expect } from 'chai';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DRAIN_METHOD } from '../../src/acp/agent-client.js';
import { PipeEditor, type WireMessage } from '../support/pipe-editor.js';
import { waitUntil } from '../support/processes.js';

const sdkAgent = fileURLToPath(new URL('../support/sdk-agent.mjs', import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The deadline of one drain round (drainReplay's default, which warden uses). */
const drainRoundMs = 10_000;

describe('warden acp: session/load of an agent that replays after its answer, the editor stalling', function () {
  this.timeout(240_000);
  let dir: string;
  let editor: PipeEditor | undefined;

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-drain-stall-')));
  });

  afterEach(async () => {
    await PipeEditor.closeAll();
    await editor?.close();
    editor = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('the editor stalls until the journal replay backs up, then from its last turn until a drain round is past its deadline: each turn of the history reaches it once, none again after the answer', async () => {
    const store = join(dir, 'journal.sqlite');
    const state = join(dir, 'agent-state');
    mkdirSync(state);
    const agentLog = join(dir, 'agent.log');
    // `node` found on PATH, as a user's --agent line runs it.
    const args = ['--agent', `acp:node ${sdkAgent} --state-dir ${state} --no-resume --replay-after-answer --log ${agentLog}`, '--store', store];
    /** How many drain rounds the agents were asked (each answered -32601 and logged). */
    const drainRounds = () => (existsSync(agentLog) ? readFileSync(agentLog, 'utf8').split(`unknown request ${DRAIN_METHOD}`).length - 1 : 0);
    const turns = 40;
    const filler = 'z'.repeat(40 * 1024);

    // A first warden records 40 turns of 40 KB (3.2 MB of history: the editor's output backs up on replay).
    editor = PipeEditor.launch({ args });
    const init = await editor.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    expect(init.error, JSON.stringify(init.error)).to.equal(undefined);
    const created = await editor.request('session/new', { cwd: dir, mcpServers: [] });
    const sessionId = created.result?.sessionId as string;
    expect(sessionId, JSON.stringify(created)).to.be.a('string');
    for (let turn = 0; turn < turns; turn++) {
      const answer = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: `turn ${turn} ${filler}` }] });
      expect(answer.result?.stopReason, JSON.stringify(answer.error)).to.equal('end_turn');
    }
    expect((await editor.close()).code).to.equal(0);

    // A second warden on the same store and agent state: its load re-attaches with the agent's session/load.
    const seen = new Map<string, number>();
    const answers = new Map<string | number, WireMessage>();
    const roundsBefore = drainRounds();
    /** The two stalls: each settles (with its error, if any) once the editor reads again. */
    const stalls: Array<Promise<unknown>> = [];
    const stallUntil = (reason: () => Promise<void>) => {
      second.pauseReading();
      stalls.push(
        reason()
          .finally(() => second.resumeReading())
          .then(() => undefined, (error: unknown) => error),
      );
    };
    const second = PipeEditor.launch({
      args,
      onMessage: (message) => {
        const text = message.params?.update?.content?.text as string | undefined;
        if (message.method === 'session/update' && message.params?.sessionId === sessionId && text?.startsWith('turn ')) {
          const key = `${message.params.update.sessionUpdate} ${text.slice(0, text.indexOf(' ', 5))}`;
          seen.set(key, (seen.get(key) ?? 0) + 1);
          if (stalls.length === 0) {
            // The journal replay backs up: warden's writes wait on a full pipe.
            stallUntil(() => waitUntil(() => second.backedUp || !second.running, "the editor's read buffer to fill while it reads nothing", 120_000, 50));
          } else if (stalls.length === 1 && key === `agent_message_chunk turn ${turns - 1}`) {
            // The last turn of the journal replay: warden now drains the agent's replay.
            stallUntil(async () => {
              await waitUntil(() => drainRounds() > roundsBefore || !second.running, 'warden to ask the agent a drain round while the editor reads nothing', 120_000, 50);
              // The round began before the agent logged it: past this, its deadline has passed in the stall.
              await sleep(drainRoundMs + 2000);
            });
          }
        } else if (message.method === undefined && message.id !== undefined && message.id !== null) {
          answers.set(message.id, message);
        }
      },
    });
    editor = second;
    const answered = async (id: string) => {
      await waitUntil(() => answers.has(id) || !second.running, `the answer to ${id}`, 120_000);
      return answers.get(id) as WireMessage;
    };
    second.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } }));
    expect((await answered('init')).error).to.equal(undefined);
    second.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 'load', method: 'session/load', params: { sessionId, cwd: dir, mcpServers: [] } }));
    const load = await answered('load');
    expect(load.error, `${JSON.stringify(load.error)}\n${second.stderr}`).to.equal(undefined);
    expect(second.running, second.stderr).to.equal(true);
    expect(await Promise.all(stalls), 'both stalls: a backed-up replay, then a drain round past its deadline').to.deep.equal([undefined, undefined]);
    // A turn after the load: whatever of the agent's replay came late has reached the editor by its end.
    second.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 'after', method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'hello' }] } }));
    expect((await answered('after')).result?.stopReason).to.equal('end_turn');
    await sleep(0);
    const expected = new Map<string, number>();
    for (let turn = 0; turn < turns; turn++) {
      expected.set(`user_message_chunk turn ${turn}`, 1);
      expected.set(`agent_message_chunk turn ${turn}`, 1);
    }
    expect(Object.fromEntries(seen)).to.deep.equal(Object.fromEntries(expected));
  });
});
