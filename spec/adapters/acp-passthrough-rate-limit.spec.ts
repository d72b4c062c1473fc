/**
 * A native ACP agent's rate limit (issue 32): a prompt the agent fails with `data.reason`
 * `rate_limited` before any tool call is sent again after the wait it named (or the backoff),
 * with a "Rate limited" notice each time, at most `rateLimitRetries` times; a cancel during the
 * wait ends the prompt cancelled. Real sdk-agent processes (spec/support/sdk-agent.mjs, the
 * `ratelimited N [MS]` prompt word), through the passthrough and a real ACP client.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createActor } from 'xstate';
import { waitUntil } from '../support/processes.js';
import { agentClientLogic, cancelPrompt, initialize, newSession, prompt } from '../../src/acp/agent-client.js';
import { agentServerLogic } from '../../src/acp/agent-server.js';
import { createAcpPassthrough, type AcpPassthroughOptions } from '../../src/adapters/acp-passthrough.js';
import { createMemoryTransportPair } from '../../src/jsonrpc/memory-transport.js';
import { NOTICE_META_KEY } from '../../src/acp/update-gate.js';
import { CONTINUED_NOTICE_TITLE } from '../../src/adapters/continuation-text.js';
import { RATE_LIMITED_NOTICE_TITLE } from '../../src/adapters/passthrough/rate-limited-prompts.js';

const sdkAgent = fileURLToPath(new URL('../support/sdk-agent.mjs', import.meta.url));
const running: Array<() => void> = [];

async function start(options: Partial<AcpPassthroughOptions> = {}) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-ratelimit-')));
  const log = join(dir, 'agent.log');
  const [editorSide, agentSide] = createMemoryTransportPair();
  const agent = createAcpPassthrough({ name: 'sdk-agent', executable: process.execPath, args: [sdkAgent, '--state-dir', dir, '--log', log], ...options });
  const server = createActor(agentServerLogic, { input: { transport: agentSide, agent } }).start();
  const client = createActor(agentClientLogic, { input: { transport: editorSide, handler: {} } }).start();
  running.push(() => (client.stop(), server.stop(), rmSync(dir, { recursive: true, force: true })));
  await initialize(client);
  const { sessionId } = await newSession(client, { cwd: dir });
  /** The prompts the agent got, by first word, in order. */
  const lines = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n') : []);
  const prompts = () => lines().filter((line) => line.includes(' prompt '));
  return { client, sessionId, prompts, lines };
}

/** The descriptions of the "Rate limited" notices (as the editor gets them: a notice, or its text rendering with the notice under `_meta`). */
const notices = (updates: SessionUpdate[]) =>
  updates
    .filter((update) => JSON.stringify(update).includes(RATE_LIMITED_NOTICE_TITLE))
    .map((update) => (update as { description?: string }).description ?? (update as { _meta?: Record<string, { description?: string }> })._meta?.[NOTICE_META_KEY]?.description);

describe('a native ACP agent rate limited: the prompt is sent again after the wait', () => {
  afterEach(() => {
    for (const stop of running.splice(0)) stop();
  });

  it('rate limited twice (retryAfterMs 20): two notices, the prompt sent three times, it ends end_turn with the answer', async () => {
    const { client, sessionId, prompts } = await start();
    const handle = prompt(client, sessionId, [{ type: 'text', text: 'ratelimited 2 20' }]);
    const updates: SessionUpdate[] = [];
    for await (const update of handle.updates) updates.push(update);
    expect(await handle.result).to.deep.equal({ stopReason: 'end_turn' });
    expect(notices(updates)).to.deep.equal(['The model provider is rate limited, retrying in 20 ms (1 of 3).', 'The model provider is rate limited, retrying in 20 ms (2 of 3).']);
    expect(prompts()).to.have.length(3);
  });

  it('more rate limits than rateLimitRetries (1): the last error is the answer, as without retries', async () => {
    const { client, sessionId, prompts } = await start({ crash: { rateLimitRetries: 1 } });
    const handle = prompt(client, sessionId, [{ type: 'text', text: 'ratelimited 5 20' }]);
    for await (const _update of handle.updates) void _update;
    const failure = await handle.result.then(() => undefined, (error: unknown) => error as { data?: { reason?: string } });
    expect(failure?.data?.reason).to.equal('rate_limited');
    expect(prompts()).to.have.length(2);
  });

  it('a cancel during the wait (retryAfterMs 600000): the prompt ends cancelled, nothing is sent again', async () => {
    const { client, sessionId, prompts } = await start();
    const handle = prompt(client, sessionId, [{ type: 'text', text: 'ratelimited 1 600000' }]);
    for await (const update of handle.updates) {
      if (JSON.stringify(update).includes(RATE_LIMITED_NOTICE_TITLE)) cancelPrompt(client, sessionId);
    }
    expect(await handle.result).to.deep.equal({ stopReason: 'cancelled' });
    expect(prompts()).to.have.length(1);
  });
});

describe('an ACP adapter whose inner CLI died (claude-agent-acp #338): restarted, the prompt continued', () => {
  afterEach(() => {
    for (const stop of running.splice(0)) stop();
  });

  it('"Claude Code process exited with code 1" answered: the agent is restarted (inner_cli_dead) and the prompt, sent again, ends end_turn', async () => {
    const { client, sessionId, prompts } = await start({ crash: { onCrash: 'continue' }, restart: { backoff: { minDelay: 50, maxDelay: 200 } } });
    const handle = prompt(client, sessionId, [{ type: 'text', text: 'innerdead' }]);
    const updates: SessionUpdate[] = [];
    for await (const update of handle.updates) updates.push(update);
    expect(await handle.result).to.deep.equal({ stopReason: 'end_turn' });
    const said = updates.map((update) => JSON.stringify(update)).join('\n');
    expect(said).to.contain(CONTINUED_NOTICE_TITLE);
    expect(said).to.contain('inner CLI is dead (Claude Code process exited with code 1)');
    expect(said).to.contain('answered after the restart');
    expect(prompts()).to.have.length(2);
  });

  it('with --on-crash fail: the prompt fails agent_crashed naming inner_cli_dead, and the next prompt is answered by the restarted agent', async () => {
    const { client, sessionId, lines } = await start({ crash: { onCrash: 'fail' }, restart: { backoff: { minDelay: 50, maxDelay: 200 } } });
    const first = prompt(client, sessionId, [{ type: 'text', text: 'innerdead' }]);
    for await (const _update of first.updates) void _update;
    const failure = await first.result.then(() => undefined, (error: unknown) => error as { data?: { reason?: string; exit?: { kind?: string } } });
    expect(failure?.data?.reason).to.equal('agent_crashed');
    expect(failure?.data?.exit?.kind).to.equal('inner_cli_dead');
    // The restarted agent took the session back: the next prompt goes to it.
    await waitUntil(() => lines().some((line) => line.includes('setup session/resume')), 'the session re-attached');
    const second = prompt(client, sessionId, [{ type: 'text', text: 'innerdead' }]);
    for await (const _update of second.updates) void _update;
    expect(await second.result).to.deep.equal({ stopReason: 'end_turn' });
  });

  it('a prompt sent the moment the dead answer arrives (before the adapter\'s process is gone) waits for the restart and is answered by the new process, not failed by the dying one', async () => {
    const { client, sessionId, lines } = await start({ crash: { onCrash: 'fail' }, restart: { backoff: { minDelay: 50, maxDelay: 200 } } });
    const first = prompt(client, sessionId, [{ type: 'text', text: 'innerdead' }]);
    for await (const _update of first.updates) void _update;
    const failure = await first.result.then(() => undefined, (error: unknown) => error as { data?: { exit?: { kind?: string } } });
    expect(failure?.data?.exit?.kind).to.equal('inner_cli_dead');
    // No wait for the re-attach: the dying process (it answers every prompt with the death) is still there.
    const second = prompt(client, sessionId, [{ type: 'text', text: 'innerdead' }]);
    for await (const _update of second.updates) void _update;
    expect(await second.result).to.deep.equal({ stopReason: 'end_turn' });
    const pidOf = (line: string) => /^\[sdk-agent (\d+)\]/u.exec(line)?.[1];
    const promptPids = lines().filter((line) => line.includes('] prompt ')).map(pidOf);
    expect(promptPids, 'one prompt to each process: the first to the dying one, the second to its successor').to.have.length(2);
    expect(promptPids[0]).to.not.equal(promptPids[1]);
  });
});
