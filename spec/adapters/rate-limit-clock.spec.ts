/**
 * The wait after a rate limit (issue 32) on the machine's clock: XState's SimulatedClock drives
 * it, so that the backoff (1 s doubled, capped at 30 s), a `retryAfterMs` the agent names, the
 * end of the retries and a cancel during the wait are checked to the millisecond without
 * waiting. Real agent processes (the fake Claude Code answering 429s, spec/support/sdk-agent.mjs
 * failing `rate_limited` with `retryAfterMs`), through the agent server and a real ACP client;
 * only the agent server's actor system runs on the simulated clock.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createActor, SimulatedClock, type AnyActorRef } from 'xstate';
import { agentClientLogic, initialize, newSession, prompt, type PromptRunHandle } from '../../src/acp/agent-client.js';
import { agentServerLogic } from '../../src/acp/agent-server.js';
import { NOTICE_META_KEY } from '../../src/acp/update-gate.js';
import { createAcpPassthrough } from '../../src/adapters/acp-passthrough.js';
import { createAdapterAgent } from '../../src/adapters/adapter-agent.js';
import { claudeAdapter } from '../../src/adapters/claude/adapter.js';
import { RATE_LIMITED_TITLE } from '../../src/adapters/rate-limited-turn.js';
import type { NativeAgent } from '../../src/protocol/native-agent.js';
import { createMemoryTransportPair } from '../../src/jsonrpc/memory-transport.js';
import { RpcError } from '../../src/jsonrpc/rpc-error.js';
import { isAlive, waitUntil } from '../support/processes.js';

const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const sdkAgent = fileURLToPath(new URL('../support/sdk-agent.mjs', import.meta.url));
const cleanups: Array<() => Promise<void>> = [];

/** Lines of a log file written by a fake (its starts, the prompts it got). */
const linesOf = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : []);

/** An editor connected to `agent` served on a simulated clock, with one session. */
async function onSimulatedClock(agent: NativeAgent, dir: string) {
  const clock = new SimulatedClock();
  const [editorSide, agentSide] = createMemoryTransportPair();
  const server = createActor(agentServerLogic, { input: { transport: agentSide, agent }, clock }).start();
  const client: AnyActorRef = createActor(agentClientLogic, { input: { transport: editorSide, handler: {} } }).start();
  cleanups.push(async () => {
    client.stop();
    server.stop();
  });
  /** Every update the editor got, in a prompt or not (a turn sent by nobody shows here). */
  const heard: SessionUpdate[] = [];
  client.on('acp.update', (event: { update: SessionUpdate }) => heard.push(event.update));
  await initialize(client);
  const { sessionId } = await newSession(client, { cwd: dir });
  return { clock, client, sessionId, heard };
}

/** A prompt whose updates are collected as they come, and its outcome (result or error). */
function watched(client: AnyActorRef, sessionId: string, text: string) {
  const handle: PromptRunHandle = prompt(client, sessionId, [{ type: 'text', text }]);
  const updates: SessionUpdate[] = [];
  let outcome: unknown;
  let settled = false;
  const done = (async () => {
    for await (const update of handle.updates) updates.push(update);
    outcome = await handle.result.catch((error: unknown) => error);
    settled = true;
  })();
  /** The "Rate limited" notices' descriptions so far. */
  const notices = () =>
    updates
      .filter((update) => JSON.stringify(update).includes(RATE_LIMITED_TITLE))
      .map((update) => (update as { description?: string }).description ?? (update as { _meta?: Record<string, { description?: string }> })._meta?.[NOTICE_META_KEY]?.description);
  return { handle, updates, notices, done, outcome: () => outcome, settled: () => settled };
}

/** Lets the real processes and pipes run for a moment (what must not happen has its chance). */
const aMoment = () => new Promise((resolve) => setTimeout(resolve, 300));

describe('the wait after a rate limit runs on the machine\'s clock (SimulatedClock)', function () {
  this.timeout(60_000);

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup(); // the editor and server first, then what waits for their processes
  });

  describe('Claude Code (fake CLI answering 429 API errors)', () => {
    let dir: string;
    let argvLog: string;
    beforeEach(() => {
      dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-ratelimit-clock-')));
      argvLog = join(dir, '.argv.log');
      cleanups.push(async () => {
        for (const line of linesOf(argvLog)) {
          const { pid } = JSON.parse(line) as { pid: number };
          await waitUntil(() => !isAlive(pid), `fake claude ${pid} to be gone`);
        }
        rmSync(dir, { recursive: true, force: true });
      });
    });

    const claudeAgent = (rateLimits: number, rateLimitRetries: number) =>
      createAdapterAgent({ definition: claudeAdapter, executable: fakeClaude, env: { FAKE_CLAUDE_FIXTURE: 'hello', FAKE_CLAUDE_ARGV_LOG: argvLog, FAKE_CLAUDE_RATE_LIMITS: String(rateLimits) }, crash: { rateLimitRetries } });

    it('the backoff doubles from 1 s and is capped at 30 s: each retry comes at its millisecond, not one before; past the retries the 429 is the answer; the CLI never restarted', async () => {
      const { clock, client, sessionId } = await onSimulatedClock(claudeAgent(7, 6), dir);
      const turn = watched(client, sessionId, 'hi');
      const waits = [1000, 2000, 4000, 8000, 16_000, 30_000];
      for (const [index, wait] of waits.entries()) {
        await waitUntil(() => turn.notices().length === index + 1, `notice ${index + 1}`);
        expect(turn.notices()[index]).to.match(new RegExp(`retrying in ${wait / 1000} s \\(${index + 1} of 6\\)`, 'u'));
        clock.increment(wait - 1);
        await aMoment();
        expect(turn.notices().length, `no retry ${wait - 1} ms into a wait of ${wait} ms`).to.equal(index + 1);
        expect(turn.settled()).to.equal(false);
        clock.increment(1);
      }
      await turn.done;
      expect(turn.outcome()).to.be.instanceOf(RpcError);
      expect((turn.outcome() as RpcError).message).to.match(/429/u);
      expect(turn.notices()).to.have.length(6);
      expect(linesOf(argvLog), 'one CLI start: a rate limit is no crash').to.have.length(1);
    });

    it('a cancel during the wait: the prompt ends cancelled at once, and the wait running out later sends nothing', async () => {
      const { clock, client, sessionId, heard } = await onSimulatedClock(claudeAgent(1, 3), dir);
      const turn = watched(client, sessionId, 'hi');
      await waitUntil(() => turn.notices().length === 1, 'the first notice');
      turn.handle.cancel();
      await turn.done;
      expect(turn.outcome()).to.deep.equal({ stopReason: 'cancelled' });
      const before = heard.length;
      clock.increment(60_000);
      await aMoment();
      // Sent again anyway, the prompt would have been answered by the fake (its one 429 used).
      expect(heard.slice(before).filter((update) => update.sessionUpdate === 'agent_message_chunk'), 'no turn after the cancelled wait').to.deep.equal([]);
      const next = watched(client, sessionId, 'hi again');
      await next.done;
      // The fake had one 429 to give, taken by the first prompt: the next is answered at once.
      expect(next.outcome()).to.deep.equal({ stopReason: 'end_turn' });
      expect(next.notices()).to.deep.equal([]);
      expect(linesOf(argvLog)).to.have.length(1);
    });
  });

  describe('a native ACP agent naming retryAfterMs (sdk-agent)', () => {
    it('retryAfterMs 60000 is waited as named (not the backoff): the prompt goes to the agent again at 60,000 ms, not at 59,999; it ends end_turn; no restart', async () => {
      const dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-ratelimit-clock-')));
      const log = join(dir, 'agent.log');
      cleanups.push(async () => {
        // Every agent process it started ends with the server (its stdin closed).
        const pids = new Set(linesOf(log).map((line) => Number(/^\[sdk-agent (\d+)\]/u.exec(line)?.[1])).filter((pid) => pid > 0));
        for (const pid of pids) await waitUntil(() => !isAlive(pid), `sdk-agent ${pid} to be gone`);
        rmSync(dir, { recursive: true, force: true });
      });
      const agent = createAcpPassthrough({ name: 'sdk-agent', executable: process.execPath, args: [sdkAgent, '--state-dir', dir, '--log', log] });
      const { clock, client, sessionId } = await onSimulatedClock(agent, dir);
      const prompts = () => linesOf(log).filter((line) => line.includes('] prompt '));
      const setups = () => linesOf(log).filter((line) => line.includes('] setup clientCapabilities'));
      const turn = watched(client, sessionId, 'ratelimited 1 60000');
      await waitUntil(() => turn.notices().length === 1, 'the notice');
      expect(turn.notices()[0]).to.equal('The model provider is rate limited, retrying in 60 s (1 of 3).');
      expect(prompts()).to.have.length(1);
      clock.increment(59_999);
      await aMoment();
      expect(prompts(), 'nothing sent again before the named wait').to.have.length(1);
      clock.increment(1);
      await turn.done;
      expect(turn.outcome()).to.deep.equal({ stopReason: 'end_turn' });
      expect(prompts()).to.have.length(2);
      expect(setups(), 'the agent was never restarted').to.have.length(1);
    });
  });
});
