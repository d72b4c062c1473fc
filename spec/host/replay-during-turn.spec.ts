/**
 * `session/load` of a session whose turn is still streaming: what the agent says while the
 * replay waits (the read gate is held: the editor reads slowly) is journaled and shown by the
 * replay, in journal order, never twice.
 */
import { expect } from 'chai';
import { demoAgent } from '../../src/acp/demo-agent.js';
import { createHostAgent } from '../../src/host/host-agent.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { readGateOf } from '../../src/port/read-gate.js';
import { initialized } from '../support/raw-editor.js';
import { waitUntil } from '../support/processes.js';

describe('host agent: a replay while the turn streams', () => {
  it('updates that come during the replay reach the editor once, in journal order', async () => {
    const journal = sqliteJournal(':memory:');
    const editor = await initialized(createHostAgent({ defaultAgent: 'demo', resolve: () => demoAgent({ wordDelayMs: 2 }), journal }));
    try {
      const { sessionId } = (await editor.request('session/new', { cwd: '/work', mcpServers: [] })) as { sessionId: string };
      const words = Array.from({ length: 400 }, (_, index) => `w${index}`).join(' ');
      const turn = editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: words }] });
      const chunks = () => editor.updates.filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === 'agent_message_chunk');
      const journaled = () => journal.entries(sessionId).filter((record) => record.entry.kind === 'update' && record.entry.update.sessionUpdate === 'agent_message_chunk');
      await waitUntil(() => chunks().length >= 20, 'the turn streaming');
      const before = chunks().length;
      // The editor reads slowly: the replay's next page waits, the agent goes on talking.
      const gate = readGateOf(editor.server.system);
      gate.hold('test');
      const load = editor.request('session/load', { sessionId, cwd: '/work', mcpServers: [] });
      const atLoad = journaled().length;
      await waitUntil(() => journaled().length >= atLoad + 30, 'words journaled during the replay');
      gate.release('test');
      await load;
      expect(await turn).to.deep.include({ stopReason: 'end_turn' });
      const shown = chunks().slice(before).map((entry) => entry.update);
      expect(shown).to.deep.equal(journaled().map((record) => (record.entry as { update: unknown }).update));
    } finally {
      editor.server.stop();
      journal.close();
    }
  });
});
