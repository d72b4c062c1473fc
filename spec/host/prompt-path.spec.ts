/**
 * Issue 15's count: at most 3 actors between the editor's connection and the agent's port,
 * each way, read from the inspection stream of a real host with a fake CLI (a subprocess).
 * The path is named, not only counted: the host agent, the session's machine (the decider of
 * its turns), the session adapter that writes the CLI's stdin; and back, the adapter, the host.
 */
import { expect } from 'chai';
import { measurePromptPath } from '../support/prompt-path.js';

describe('the prompt path (actors between the editor connection and the port)', function () {
  this.timeout(60_000);

  for (const agent of ['claude', 'codex'] as const) {
    it(`${agent}: down the host agent, the session machine and the session adapter; up the adapter and the host agent`, async () => {
      const path = await measurePromptPath(agent);
      expect(path.down).to.deep.equal(['agent', 'session:<id>', 'adapter']);
      expect(path.up).to.deep.equal(['adapter', 'agent']);
      expect(path.down.length).to.be.at.most(3);
      expect(path.up.length).to.be.at.most(3);
    });
  }
});
