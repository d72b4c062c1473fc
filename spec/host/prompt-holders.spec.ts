/**
 * Issue 29's count of a prompt's holders: the layers that keep a record of one prompt in
 * flight on the Claude path (fake Claude Code), through `warden acp`'s wiring and through
 * `warden serve`'s hub, each asked through its read-only inspection accessor
 * (spec/support/prompt-holders.ts says how). The goal is 3 (the connection's id map, the
 * session actor, the adapter), reached on both paths.
 */
import { expect } from 'chai';
import { promptHolders, type PromptHoldersPath } from '../support/prompt-holders.js';

/** Issue 29's goal (it counted 7 on the stdio path, 9 through the hub). */
const goal = 3;

describe('the holders of a prompt in flight (Claude path)', function () {
  this.timeout(60_000);

  const paths: ReadonlyArray<readonly [PromptHoldersPath, string]> = [
    ['stdio', '`warden acp` (stdio)'],
    ['serve', '`warden serve` (a WebSocket client of the hub)'],
  ];
  for (const [path, title] of paths) {
    it(`${title}: at most ${goal} layers hold the prompt: the editor's connection (its id map), the session actor, the adapter`, async () => {
      const holders = await promptHolders(path);
      expect(holders, holders.join(', ')).to.have.length.at.most(goal);
      expect(holders, 'the session actor owns the prompt').to.include('session actor (its prompts)');
      expect(holders, 'the editor\'s connection keeps the id').to.include('JSON-RPC connection (incoming)');
    });
  }
});
