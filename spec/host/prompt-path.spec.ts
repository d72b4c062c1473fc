/**
 * Issue 29's count: at most 3 actors between the editor's connection and the agent's port,
 * each way, on every path an editor reaches an agent (stdio as `warden acp` serves it, a
 * WebSocket client of the hub as `warden serve` serves it, a native ACP agent through the
 * passthrough), read from the inspection stream of a real host with a fake agent (a
 * subprocess); spec/support/prompt-path.ts says what is counted. The embedding API's path
 * (issue 15's) is the stdio path over a memory pair. Each case names the path it saw, so that
 * a failure says which actors are still on it.
 */
import { expect } from 'chai';
import { measurePromptPath, type PromptPathKind } from '../support/prompt-path.js';

const goal = 3;

describe('the prompt path (actors between the editor connection and the port)', function () {
  this.timeout(60_000);

  const paths: ReadonlyArray<readonly [PromptPathKind, string]> = [
    ['stdio', 'stdio (the SDK client, as `warden acp` serves it; fake Claude Code)'],
    ['serve', 'serve (a WebSocket client of the hub; fake Claude Code)'],
    ['native', 'native ACP (the SDK agent through the passthrough)'],
    ['claude', 'the embedding API (fake Claude Code)'],
    ['codex', 'the embedding API (fake Codex)'],
  ];
  for (const [path, title] of paths) {
    it(`${title}: at most ${goal} actors down and ${goal} up`, async () => {
      const measured = await measurePromptPath(path);
      expect(measured.down, `down: ${measured.down.join(' → ')}`).to.have.length.at.most(goal);
      expect(measured.up, `up: ${measured.up.join(' → ')}`).to.have.length.at.most(goal);
    });
  }
});
