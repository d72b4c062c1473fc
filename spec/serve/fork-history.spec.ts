/**
 * A session forked through the hub (`warden serve`'s switchboard): the fork's history, as the
 * client that forked it is shown it, holds the conversation it copied whole: the prompts (the
 * client's own, sent in the parent) beside the answers. The journal copies each turn entry with
 * the key of the prompt it belongs to, and that key names the parent session: in the fork it is
 * no turn of this client's, so it is not hidden as one it was answered live.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoAgent } from '../../src/acp/demo-agent.js';
import { createHost, type Host } from '../../src/runtime/host.js';
import { attachClient, type HubClient } from '../support/hub-client.js';

describe('a session forked through the hub', function () {
  this.timeout(60_000);
  let dir: string;
  let host: Host | undefined;
  let client: HubClient | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-hub-fork-'));
  });
  afterEach(async () => {
    client?.close();
    await host?.stop();
    host = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows its client the copied conversation whole: its own prompt from the parent, then the answer', async () => {
    host = createHost({ store: join(dir, 'journal.sqlite'), agents: { demo: demoAgent({ wordDelayMs: 1 }) } });
    client = await attachClient(host.hub(), 'forker');
    const { sessionId } = (await client.request('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string };
    await client.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'remember the fork' }] });
    const own = client.updates.filter((update) => update.sessionId === sessionId && update.update.sessionUpdate === 'user_message_chunk');
    expect(own, 'its own prompt is not echoed to it in the parent').to.deep.equal([]);
    const forked = (await client.request('session/fork', { sessionId, cwd: dir, mcpServers: [] })) as { sessionId: string };
    const text = (kind: string) => () =>
      client!.updates
        .filter((update) => update.sessionId === forked.sessionId && update.update.sessionUpdate === kind)
        .map((update) => ((update.update as { content?: { text?: string } }).content?.text ?? ''))
        .join('');
    await client.until(() => text('agent_message_chunk')().includes('remember the fork'), 'the fork\'s copied answer');
    expect(text('user_message_chunk')(), 'the copied prompt in the fork\'s history').to.equal('remember the fork');
  });
});
